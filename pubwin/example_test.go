package pubwin_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pubwin"
)

func Example() {
	dir, _ := os.MkdirTemp("", "natsio-pubwin-example-*")
	defer os.RemoveAll(dir)
	srv, _ := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true, JetStream: true, StoreDir: dir})
	go srv.Start()
	srv.ReadyForConnections(10 * time.Second)
	defer srv.Shutdown()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, _ := conn.Connect(ctx, srv.ClientURL())
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
