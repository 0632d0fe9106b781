package pubwin_test

import (
	"context"
	"fmt"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pubwin"
)

func Example() {
	srv, err := natstest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, _ := conn.Connect(ctx, srv.URL())
	defer nc.Close()
	js, _ := jsapi.New(nc)
	js.CreateStream(ctx, jsapi.StreamConfig{Name: "EVENTS", Subjects: []string{"events.>"}})

	w, _ := pubwin.New(js, pubwin.MaxPending(256))
	defer w.Close()
	var futures []*pubwin.Future
	for i := range 1000 {
		// The ID makes a retry after ErrAckLost or ErrAckTimeout safe.
		f, err := w.Publish(ctx, "events.click", []byte("x"), jsapi.MsgID(fmt.Sprint("click-", i)))
		if err != nil {
			fmt.Println(err)
			return
		}
		futures = append(futures, f)
	}
	if err := w.Complete(ctx); err != nil {
		fmt.Println(err)
		return
	}
	last, err := futures[999].Wait(ctx)
	fmt.Println(last.Sequence, err, w.Pending())
	// Output:
	// 1000 <nil> 0
}
