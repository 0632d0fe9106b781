package pull_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pull"
)

// exampleJS starts an embedded JetStream server and returns a connection,
// a JetStream view, a stream "ORDERS" on "orders.>" and a cleanup.
func exampleJS() (*conn.Conn, *jsapi.JS, func()) {
	s, err := natstest.Start()
	if err != nil {
		panic(err)
	}
	url, stop := s.URL(), s.Close
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, url)
	if err != nil {
		panic(err)
	}
	js, _ := jsapi.New(nc)
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		panic(err)
	}
	return nc, js, func() { nc.Close(); stop() }
}

func Example() {
	_, js, stop := exampleJS()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	for i := 1; i <= 3; i++ {
		js.Publish(ctx, "orders.new", []byte(fmt.Sprintf("order %d", i)))
	}
	info, err := js.CreateOrUpdateConsumer(ctx, "ORDERS", jsapi.ConsumerConfig{Durable: "worker", AckPolicy: jsapi.AckExplicit})
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := pull.FromInfo(js, info)
	if err != nil {
		fmt.Println(err)
		return
	}
	n := 0
	for m, err := range c.Messages(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(string(m.Data))
		m.Ack()
		if n++; n == 3 {
			break
		}
	}
	// Output:
	// order 1
	// order 2
	// order 3
}

func ExampleConsumer_Fetch() {
	_, js, stop := exampleJS()
	defer stop()
	ctx := context.Background()
	for i := 1; i <= 5; i++ {
		js.Publish(ctx, "orders.new", []byte(fmt.Sprint(i)))
	}
	info, _ := js.CreateOrUpdateConsumer(ctx, "ORDERS", jsapi.ConsumerConfig{Durable: "batch", AckPolicy: jsapi.AckExplicit})
	c, _ := pull.FromInfo(js, info)

	fctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	msgs, err := c.Fetch(fctx, 3)
	fmt.Println(len(msgs), err)
	for _, m := range msgs {
		md, _ := m.Metadata()
		fmt.Println(md.StreamSeq, string(m.Data), md.NumPending)
		m.Ack()
	}
	// Output:
	// 3 <nil>
	// 1 1 4
	// 2 2 3
	// 3 3 2
}

// A handler on a goroutine of its own: Stop from the handler after the
// third message, wait for the end, and read why it ended.
func ExampleConsumer_Consume() {
	_, js, stop := exampleJS()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	for i := 1; i <= 3; i++ {
		js.Publish(ctx, "orders.new", []byte(fmt.Sprintf("order %d", i)))
	}
	info, err := js.CreateOrUpdateConsumer(ctx, "ORDERS", jsapi.ConsumerConfig{Durable: "handler"})
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := pull.FromInfo(js, info)
	if err != nil {
		fmt.Println(err)
		return
	}
	var cc *pull.ConsumeContext
	started := make(chan struct{})
	n := 0
	cc, err = c.Consume(ctx, func(m *jsapi.Msg) {
		<-started // cc is set
		fmt.Println(string(m.Data))
		m.Ack()
		if n++; n == 3 {
			cc.Stop()
		}
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	close(started)
	<-cc.Closed()
	fmt.Println("ended:", cc.Err())
	// Output:
	// order 1
	// order 2
	// order 3
	// ended: <nil>
}

// An event-driven worker: an idempotent handler that may fail, a bounded
// number of deliveries, and a dead-letter step driven by the server's
// MAX_DELIVERIES advisory and a read of the stored message.
func Example_deadLetter() {
	nc, js, stop := exampleJS()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	info, _ := js.CreateOrUpdateConsumer(ctx, "ORDERS", jsapi.ConsumerConfig{
		Durable: "billing", AckPolicy: jsapi.AckExplicit, MaxDeliver: 2, AckWait: time.Second,
	})
	c, _ := pull.FromInfo(js, info)
	// Watch for messages that ran out of deliveries.
	adv, _ := nc.Subscribe("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.ORDERS.billing")
	nc.Flush(ctx)

	js.Publish(ctx, "orders.new", []byte(`{"id":1,"amount":10}`))
	js.Publish(ctx, "orders.new", []byte(`{"id":2,"amount":-5}`)) // the handler rejects it

	processed := map[string]bool{} // idempotency: handle each order once
	handle := func(data []byte) error {
		var o struct {
			ID     int `json:"id"`
			Amount int `json:"amount"`
		}
		if err := json.Unmarshal(data, &o); err != nil || o.Amount < 0 {
			return fmt.Errorf("invalid order")
		}
		if key := fmt.Sprint(o.ID); !processed[key] {
			processed[key] = true
			fmt.Println("billed order", o.ID)
		}
		return nil
	}

	wctx, wcancel := context.WithCancel(ctx)
	go func() {
		for m, err := range c.Messages(wctx) {
			if err != nil {
				return
			}
			if handle(m.Data) != nil {
				m.Nak()
				continue
			}
			m.Ack()
		}
	}()

	// The advisory names the stream sequence; read the message and park it.
	am, err := adv.NextMsg(ctx)
	wcancel()
	if err != nil {
		fmt.Println(err)
		return
	}
	var a struct {
		StreamSeq uint64 `json:"stream_seq"`
	}
	json.Unmarshal(am.Data, &a)
	st, _ := js.Stream(ctx, "ORDERS")
	dead, _ := st.GetMsg(ctx, a.StreamSeq)
	fmt.Printf("dead letter: seq %d %s\n", dead.Sequence, dead.Data)
	// Output:
	// billed order 1
	// dead letter: seq 2 {"id":2,"amount":-5}
}

// Borrowed messages are valid during the loop body: use and acknowledge
// them there, and copy what must outlive it.
func ExampleBorrowed() {
	_, js, stop := exampleJS()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	for i := 1; i <= 3; i++ {
		js.Publish(ctx, "orders.new", []byte(fmt.Sprintf(`{"qty":%d}`, i)))
	}
	info, err := js.CreateOrUpdateConsumer(ctx, "ORDERS", jsapi.ConsumerConfig{Durable: "tally", AckPolicy: jsapi.AckExplicit})
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := pull.FromInfo(js, info)
	if err != nil {
		fmt.Println(err)
		return
	}
	total, n := 0, 0
	var last []byte
	for m, err := range c.Messages(ctx, pull.Borrowed()) {
		if err != nil {
			fmt.Println(err)
			return
		}
		var order struct{ Qty int }
		if err := json.Unmarshal(m.Data, &order); err != nil { // m.Data used here
			m.Term()
			continue
		}
		total += order.Qty
		last = bytes.Clone(m.Data) // kept: copied
		m.Ack()
		if n++; n == 3 {
			break
		}
	}
	fmt.Println(total, string(last))
	// Output:
	// 6 {"qty":3}
}
