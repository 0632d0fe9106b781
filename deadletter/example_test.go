package deadletter_test

import (
	"context"
	"fmt"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/deadletter"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pull"
)

// A worker terminates an order it cannot process; the Mover parks it on
// deadletter.ORDERS.billing with headers naming where it came from.
func Example() {
	s, err := natstest.Start()
	if err != nil {
		panic(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, _ := conn.Connect(ctx, s.URL())
	defer nc.Close()
	js, _ := jsapi.New(nc)
	js.CreateStream(ctx, jsapi.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})
	js.CreateStream(ctx, jsapi.StreamConfig{Name: "DLQ", Subjects: []string{"deadletter.>"}})
	info, _ := js.CreateOrUpdateConsumer(ctx, "ORDERS", jsapi.ConsumerConfig{Durable: "billing", MaxDeliver: 3})
	c, _ := pull.FromInfo(js, info)

	// Start the Mover before consuming: it captures the advisories.
	mv, err := deadletter.Start(ctx, js, deadletter.Config{Stream: "ORDERS", Consumer: "billing"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mv.Stop()

	js.Publish(ctx, "orders.new", []byte(`{"amount":-5}`))
	m, _ := c.Next(ctx)
	m.TermWithReason("negative amount")

	info, _ = js.CreateOrUpdateConsumer(ctx, "DLQ", jsapi.ConsumerConfig{Durable: "inspect"})
	dlq, _ := pull.FromInfo(js, info)
	l, _ := dlq.Next(ctx)
	fmt.Println(l.Subject, string(l.Data))
	for _, h := range []string{deadletter.HeaderStream, deadletter.HeaderConsumer, deadletter.HeaderSequence,
		deadletter.HeaderDeliveries, deadletter.HeaderReason, deadletter.HeaderDescription, deadletter.HeaderSubject} {
		fmt.Printf("%s: %s\n", h, l.Header.Get(h))
	}
	// Output:
	// deadletter.ORDERS.billing {"amount":-5}
	// Dead-Letter-Stream: ORDERS
	// Dead-Letter-Consumer: billing
	// Dead-Letter-Sequence: 1
	// Dead-Letter-Deliveries: 1
	// Dead-Letter-Reason: terminated
	// Dead-Letter-Description: negative amount
	// Dead-Letter-Subject: orders.new
}
