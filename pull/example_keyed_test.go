package pull_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// Per-entity order at the throughput of many entities: messages of one
// order (the subject's second token) are handled one at a time and in
// order, different orders in parallel; each is acknowledged when its
// handler returns nil.
func ExampleConsumer_ConsumeKeyed() {
	_, js, stop := exampleJS()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	for _, ev := range []string{"created", "paid", "shipped"} {
		for _, id := range []string{"A", "B", "C"} {
			js.Publish(ctx, "orders."+id+"."+ev, nil)
		}
	}
	info, _ := js.CreateOrUpdateConsumer(ctx, "ORDERS", jsapi.ConsumerConfig{Durable: "fulfil"})
	c, _ := pull.FromInfo(js, info)

	var mu sync.Mutex
	history := map[string][]string{}
	done := make(chan struct{})
	n := 0
	kc, err := c.ConsumeKeyed(ctx, func(_ context.Context, m *jsapi.Msg) error {
		tok := strings.Split(m.Subject, ".")
		mu.Lock()
		defer mu.Unlock()
		history[tok[1]] = append(history[tok[1]], tok[2])
		if n++; n == 9 {
			close(done)
		}
		return nil // acknowledged
	}, pull.Keyed{KeyToken: 2, Workers: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	<-done
	kc.Drain()
	<-kc.Closed()
	for _, id := range slices.Sorted(maps.Keys(history)) {
		fmt.Println(id, history[id])
	}
	// Output:
	// A [created paid shipped]
	// B [created paid shipped]
	// C [created paid shipped]
}

// Exactly-once processing, named: the publisher sets a message ID, so a
// retried publish within the stream's duplicate window is stored once; the
// consumer acknowledges with AckSync after its side effect, so an
// acknowledgement that did not reach the server is an error it sees (and the
// redelivery is a duplicate its idempotent handler skips).
func Example_exactlyOnce() {
	_, js, stop := exampleJS()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	for range 2 { // a retry after a lost PubAck
		ack, _ := js.Publish(ctx, "orders.new", []byte("order 7"), jsapi.MsgID("order-7"))
		fmt.Println("seq", ack.Sequence, "duplicate", ack.Duplicate)
	}

	info, _ := js.CreateOrUpdateConsumer(ctx, "ORDERS", jsapi.ConsumerConfig{Durable: "once"})
	c, _ := pull.FromInfo(js, info)
	m, _ := c.Next(ctx)
	fmt.Printf("processing %s\n", m.Data)
	if err := m.AckSync(ctx); err != nil {
		fmt.Println("not acknowledged, will be redelivered:", err)
	}
	info, _ = c.Info(ctx)
	fmt.Println("pending", info.NumPending, "ack pending", info.NumAckPending)
	// Output:
	// seq 1 duplicate false
	// seq 1 duplicate true
	// processing order 7
	// pending 0 ack pending 0
}
