package conn_test

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testserver"
	"github.com/natsio/natsio/proto"
)

// exampleServer starts an embedded server for the examples.
func exampleServer() (url string, stop func()) { return testserver.ForExample(false) }

func Example() {
	url, stop := exampleServer()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	nc, err := conn.Connect(ctx, url, conn.Name("example"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()

	sub, _ := nc.Subscribe("greet.*")
	nc.Publish("greet.joe", []byte("hello joe"))
	nc.Publish("greet.pam", []byte("hello pam"))

	n := 0
	for m, err := range sub.Messages(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %s\n", m.Subject, m.Data)
		if n++; n == 2 {
			break
		}
	}
	// Output:
	// greet.joe: hello joe
	// greet.pam: hello pam
}

func ExampleConn_Request() {
	url, stop := exampleServer()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, _ := conn.Connect(ctx, url)
	defer nc.Close()

	// A service answering on "time.now".
	nc.SubscribeFunc("time.now", func(m *conn.Msg) {
		m.Respond([]byte("it is " + string(m.Data)))
	})

	reply, err := nc.Request(ctx, "time.now", []byte("noon"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(reply.Data))

	// Nobody listens here: the server says so at once.
	_, err = nc.Request(ctx, "time.nobody", nil)
	fmt.Println(err)
	// Output:
	// it is noon
	// nats: no responders available for request
}

func ExampleConn_PublishMsg() {
	url, stop := exampleServer()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, _ := conn.Connect(ctx, url)
	defer nc.Close()

	sub, _ := nc.Subscribe("orders")
	var h proto.Header // reuse one Header across publishes: no allocation
	h.Set("Nats-Msg-Id", "order-1")
	h.Add("Trace", "a")
	h.Add("Trace", "b")
	nc.PublishMsg("orders", "", &h, []byte("{}"))

	m, _ := sub.NextMsg(ctx)
	id, _ := m.Header.Lookup("Nats-Msg-Id")
	fmt.Println(id)
	for k, v := range m.Header.All() {
		fmt.Printf("%s=%s\n", k, v)
	}
	// Output:
	// order-1
	// Nats-Msg-Id=order-1
	// Trace=a
	// Trace=b
}

func ExampleConn_Drain() {
	url, stop := exampleServer()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, _ := conn.Connect(ctx, url)

	count := 0
	nc.SubscribeFunc("work", func(*conn.Msg) { count++ })
	nc.Flush(ctx)
	for range 100 {
		nc.Publish("work", []byte("job"))
	}
	// Every message sent before Drain is handled, then the connection closes.
	if err := nc.Drain(ctx); err != nil {
		fmt.Println(err)
	}
	fmt.Println(count, nc.IsClosed())
	// Output:
	// 100 true
}

func ExampleSubscription_NextBatch() {
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

	sub, _ := nc.Subscribe("ticks")
	for i := range 5 {
		nc.Publish("ticks", fmt.Appendf(nil, "tick %d", i))
	}
	nc.Flush(ctx)

	var batch []*conn.Msg
	for got := 0; got < 5; {
		// Every queued message at once; pass the previous batch back in.
		batch, err = sub.NextBatch(ctx, batch)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, m := range batch {
			fmt.Printf("%s\n", m.Data)
		}
		got += len(batch)
	}
	// Output:
	// tick 0
	// tick 1
	// tick 2
	// tick 3
	// tick 4
}

func ExampleSubscription_BorrowBatches() {
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

	sub, _ := nc.Subscribe("readings")
	sub.SetInlineReads(true) // the loop reads the socket itself…
	sub.BorrowBatches(nil)   // …and is lent what it reads
	nc.Flush(ctx)
	for i := range 100 {
		nc.Publish("readings", fmt.Appendf(nil, "%d", i))
	}

	sum, got := 0, 0
	var batch []*conn.Msg
	for got < 100 {
		// The previous batch is no longer valid from here on.
		batch, err = sub.NextBatch(ctx, batch)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, m := range batch {
			v, _ := strconv.Atoi(string(m.Data)) // used, not kept
			sum += v
		}
		got += len(batch)
	}
	fmt.Println(got, sum)
	// Output:
	// 100 4950
}

func ExampleConn_SubscribeInline() {
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

	// Count bytes per subject on the reader itself: the handler only reads
	// the borrowed message and keeps copies of nothing but numbers.
	var total int
	done := make(chan struct{})
	nc.SubscribeInline("metrics.>", func(m *conn.Msg) {
		total += len(m.Data)
		if string(m.Data) == "end" {
			close(done)
		}
	})
	nc.Flush(ctx)
	nc.Publish("metrics.cpu", []byte("12345"))
	nc.Publish("metrics.mem", []byte("678"))
	nc.Publish("metrics.end", []byte("end"))
	<-done
	fmt.Println(total)
	// Output:
	// 11
}

// ExampleConn_SubscribeAlloc delivers messages straight into the caller's
// own type: each job embeds a conn.Msg and is carved from the caller's
// array, so a delivery allocates nothing of its own.
func ExampleConn_SubscribeAlloc() {
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

	type job struct {
		conn.Msg // the delivered message, filled in place
		// …and the consumer's own fields (state, deadlines, retries).
	}
	jobs := make([]job, 2) // one array; a real consumer carves a new one when it runs out
	next := 0
	sub, err := nc.SubscribeAlloc("jobs.*", func() *conn.Msg {
		j := &jobs[next]
		next++
		return &j.Msg
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	nc.Publish("jobs.resize", []byte("img-1"))
	nc.Publish("jobs.crop", []byte("img-2"))
	for range 2 {
		m, err := sub.NextMsg(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s %s (in jobs array: %v)\n", m.Subject, m.Data, m == &jobs[0].Msg || m == &jobs[1].Msg)
	}
	// Output:
	// jobs.resize img-1 (in jobs array: true)
	// jobs.crop img-2 (in jobs array: true)
}

// PublishLazy queues small fire-and-forget messages (acknowledgements, say)
// without waking the flusher: they go out with the connection's next write
// or after LazyDelay. Here the subscriber on another connection gets both,
// in order, the lazy one carried by the ordinary publish.
func ExampleConn_PublishLazy() {
	url, stop := exampleServer()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	recv, err := conn.Connect(ctx, url)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer recv.Close()
	sub, _ := recv.Subscribe("events.>")
	recv.Flush(ctx)

	nc, err := conn.Connect(ctx, url)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	nc.PublishLazy("events.lazy", []byte("queued"))
	nc.Publish("events.now", []byte("written"))

	for range 2 {
		m, err := sub.NextMsg(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %s\n", m.Subject, m.Data)
	}
	fmt.Println("longest wait:", conn.LazyDelay)
	// Output:
	// events.lazy: queued
	// events.now: written
	// longest wait: 1ms
}
