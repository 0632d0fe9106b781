package conn_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
)

// exampleServer starts an embedded server for the examples.
func exampleServer() (url string, stop func()) {
	s, err := natstest.Start(natstest.JetStream(false))
	if err != nil {
		panic(err)
	}
	return s.URL(), s.Close
}

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

// ExampleBorrowed sums readings without keeping any message: each is lent
// for the loop body only, so reading it costs no copy and no allocation.
func ExampleBorrowed() {
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
	nc.Flush(ctx)
	for i := range 100 {
		nc.Publish("readings", fmt.Appendf(nil, "%d", i))
	}

	sum, got := 0, 0
	for m, err := range sub.Messages(ctx, conn.Borrowed()) {
		if err != nil {
			fmt.Println(err)
			return
		}
		v, _ := strconv.Atoi(string(m.Data)) // used here, not kept
		sum += v
		if got++; got == 100 {
			break
		}
	}
	fmt.Println(got, sum)
	// Output:
	// 100 4950
}

// ExampleConn_SubscribeFunc_borrowed counts bytes per subject in a handler
// that is lent each message: it keeps nothing of it but numbers.
func ExampleConn_SubscribeFunc_borrowed() {
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

	bytes := map[string]*int{}
	done := make(chan struct{})
	nc.SubscribeFunc("metrics.>", func(m *conn.Msg) {
		if string(m.Data) == "end" {
			close(done)
			return
		}
		// Look the lent subject up, but store only a copy: a map keeps the
		// key of every assignment, even to a key it has (bytes[m.Subject]
		// += n would store the lent string).
		n := bytes[m.Subject]
		if n == nil {
			n = new(int)
			bytes[strings.Clone(m.Subject)] = n
		}
		*n += len(m.Data)
	}, conn.Borrowed())
	nc.Flush(ctx)
	nc.Publish("metrics.cpu", []byte("12345"))
	nc.Publish("metrics.mem", []byte("678"))
	nc.Publish("metrics.cpu", []byte("9"))
	nc.Publish("metrics.end", []byte("end"))
	<-done
	fmt.Println(*bytes["metrics.cpu"], *bytes["metrics.mem"])
	// Output:
	// 6 3
}

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
