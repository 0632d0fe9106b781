package conn_test

import (
	"context"
	"fmt"
	"time"

	"github.com/natsio/natsio/conn"
)

// A layer that wraps each message in a struct of its own embeds conn.Msg
// in it and hands the connection structs to fill: no allocation or copy
// per message beyond the layer's own arrays, and Next returns the structs.
func ExampleSubscribeBatchesOf() {
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
		handled bool // the layer's own fields
	}
	var arena []event // the layer's memory; the shell runs on the reader
	shell := func(*event) *event {
		if len(arena) == 0 {
			arena = make([]event, 8)
		}
		e := &arena[0]
		arena = arena[1:]
		return e
	}
	events, err := conn.SubscribeBatchesOf(nc, "events.>", false, shell)
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
	for n := 0; n < 3; {
		batch, err := events.Next(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, e := range batch {
			e.handled = true
			fmt.Println(e.Subject)
			n++
		}
	}
	// Output:
	// events.a
	// events.b
	// events.c
}
