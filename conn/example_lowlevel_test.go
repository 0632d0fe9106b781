package conn_test

import (
	"context"
	"fmt"
	"time"

	"github.com/natsio/natsio/conn"
)

// A layer that wraps each message in a struct of its own embeds conn.Msg
// in it and hands the connection the embedded Msg to fill: no allocation
// or copy per message beyond the layer's own arrays.
func ExampleConn_SubscribeBatches() {
	url, stop := exampleServer()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, url)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()

	type event struct {
		conn.Msg
		// the layer's own fields
	}
	arena := make([]event, 8) // the layer's memory; alloc runs on the reader
	alloc := func() *conn.Msg {
		if len(arena) == 0 {
			arena = make([]event, 8)
		}
		e := &arena[0]
		arena = arena[1:]
		return &e.Msg
	}
	sub, err := nc.SubscribeBatches("events.>", alloc, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := nc.Flush(ctx); err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range []string{"events.a", "events.b", "events.c"} {
		nc.Publish(s, []byte("x"))
	}
	var batch []*conn.Msg
	for n := 0; n < 3; {
		if batch, err = sub.NextBatch(ctx, batch); err != nil {
			fmt.Println(err)
			return
		}
		for _, m := range batch {
			fmt.Println(m.Subject)
			n++
		}
	}
	// Output:
	// events.a
	// events.b
	// events.c
}
