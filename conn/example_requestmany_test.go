package conn_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/natsio/natsio/conn"
)

func ExampleConn_RequestMany() {
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

	// Three instances of a service answer every request on "who".
	for _, name := range []string{"gamma", "alpha", "beta"} {
		nc.SubscribeFunc("who", func(m *conn.Msg) { m.Respond([]byte(name)) })
	}
	nc.Flush(ctx)

	// Gather until three replies came, or none for a second.
	var names []string
	for m, err := range nc.RequestMany(ctx, "who", nil, nil, conn.ManyMax(3), conn.ManyStall(time.Second)) {
		if err != nil {
			fmt.Println(err)
			return
		}
		names = append(names, string(m.Data))
	}
	slices.Sort(names) // replies come in any order
	fmt.Println(names)

	// Nobody listens: the first and only thing yielded is the error.
	for _, err := range nc.RequestMany(ctx, "nobody", nil, nil) {
		fmt.Println(err)
	}
	// Output:
	// [alpha beta gamma]
	// nats: no responders available for request
}

func ExampleConn_Trace() {
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
	nc.Subscribe("orders.*")
	nc.Flush(ctx)

	// Where would this message go? Trace it without delivering it.
	events, err := nc.Trace(ctx, "orders.new", nil, []byte(`{"id":1}`),
		conn.TraceOnly(), conn.TraceStall(100*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ev := range events {
		for _, e := range ev.Events {
			switch e.Type {
			case conn.TraceIngress:
				fmt.Printf("in: from a %s, subject %s\n", e.Kind, e.Subject)
			case conn.TraceEgress:
				fmt.Printf("eg: to a %s, subscription %s\n", e.Kind, e.Subscription)
			}
		}
	}
	// Output:
	// in: from a client, subject orders.new
	// eg: to a client, subscription orders.*
}
