package natstest_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pubwin"
	"github.com/natsio/natsio/pull"
)

// quickReconnect makes a client retry at once after a fault; the default
// backoff starts at 2 s.
var quickReconnect = []conn.Option{conn.ReconnectWait(50 * time.Millisecond), conn.ReconnectJitter(0)}

// A server for an Example or TestMain: Start needs no testing.TB, Close
// stops it and removes its store. In a test, NewServer(t) does both.
func Example() {
	s, err := natstest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, s.URL())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	nc.SubscribeFunc("greet", func(m *conn.Msg) { m.Respond([]byte("hello " + string(m.Data))) })
	reply, err := nc.Request(ctx, "greet", []byte("joe"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(reply.Data))
	// Output:
	// hello joe
}

// An application's unit test that opens no socket: the server has no
// listener and the connection goes through the in-process pipe.
func ExampleServer_InProcess() {
	s, err := natstest.Start(natstest.NoListener())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, s.URL(), s.InProcess())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	js, _ := jsapi.New(nc)
	js.CreateStream(ctx, jsapi.StreamConfig{Name: "EVENTS", Subjects: []string{"events.>"}})
	ack, err := js.Publish(ctx, "events.signup", []byte("ann"))
	fmt.Println(ack.Stream, ack.Sequence, err, s.Port())
	// Output:
	// EVENTS 1 <nil> 0
}

// A consumer survives a server restart: Restart brings the server back on
// the same port with the same store, the connection reconnects, and the
// iterator pulls again on the new instance.
func ExampleServer_Restart() {
	s, err := natstest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, s.URL(), quickReconnect...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	js, _ := jsapi.New(nc)
	js.CreateStream(ctx, jsapi.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})
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
	publish := func(from, to int) {
		for i := from; i <= to; i++ {
			order := "order " + strconv.Itoa(i)
			// A publish caught by the restart fails (the connection may
			// learn of it only now): send it again, with its ID.
			for {
				_, err := js.Publish(ctx, "orders.new", []byte(order), jsapi.MsgID(order))
				if err == nil || ctx.Err() != nil {
					break
				}
			}
		}
	}

	publish(1, 2)
	n := 0
	for m, err := range c.Messages(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(string(m.Data))
		m.AckSync(ctx)
		if n++; n == 2 {
			// The server goes away under the running iterator.
			if err := s.Restart(); err != nil {
				fmt.Println(err)
				return
			}
			fmt.Println("restarted")
			publish(3, 4)
		}
		if n == 4 {
			break
		}
	}
	// Output:
	// order 1
	// order 2
	// restarted
	// order 3
	// order 4
}

// A network cut while asynchronous publishes wait for their acks: the
// futures caught by the cut fail with pubwin.ErrAckLost, which does not say
// whether the stream stored the message. Publishing them again with the
// same message ID stores each exactly once.
func ExampleProxy_Cut() {
	s, err := natstest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	p, err := natstest.StartProxy(s.URL())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, p.URL(), quickReconnect...) // through the proxy
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	js, _ := jsapi.New(nc)
	js.CreateStream(ctx, jsapi.StreamConfig{Name: "EVENTS", Subjects: []string{"events.>"}})
	w, _ := pubwin.New(js)
	defer w.Close()

	const total = 200
	futures := make(map[int]*pubwin.Future)
	var retry []int
	for i := range total {
		if i == total/2 {
			p.Cut() // the connection drops with publishes in flight
		}
		f, err := w.Publish(ctx, "events.click", []byte("click"), jsapi.MsgID("click-"+strconv.Itoa(i)))
		if err != nil {
			retry = append(retry, i) // not even sent
			continue
		}
		futures[i] = f
	}
	for i, f := range futures {
		if _, err := f.Wait(ctx); err != nil {
			retry = append(retry, i)
		}
	}
	// Publish the uncertain ones again, with their IDs, until stored.
	for _, i := range retry {
		for {
			_, err := js.Publish(ctx, "events.click", []byte("click"), jsapi.MsgID("click-"+strconv.Itoa(i)))
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				fmt.Println(err)
				return
			}
		}
	}
	st, _ := js.Stream(ctx, "EVENTS")
	info, err := st.Info(ctx)
	fmt.Println(info.State.Msgs, err, nc.Stats().Reconnects)
	// Output:
	// 200 <nil> 1
}

// A stream's leader dies in a three-node cluster: the others elect a new
// leader, publishing goes on, and the old leader rejoins after Restart.
func ExampleCluster_KillStreamLeader() {
	c, err := natstest.StartCluster(3)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, c.URL(), quickReconnect...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	js, _ := jsapi.New(nc)
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Replicas: 3}); err != nil {
		fmt.Println(err)
		return
	}
	publish := func(id string) {
		// During the election the stream does not answer: try again.
		for {
			_, err := js.Publish(ctx, "orders.new", []byte(id), jsapi.MsgID(id))
			if err == nil || ctx.Err() != nil {
				return
			}
		}
	}
	publish("before")

	killed, err := c.KillStreamLeader("ORDERS")
	if err != nil {
		fmt.Println(err)
		return
	}
	publish("after")
	leader, _ := c.WaitStreamLeader("ORDERS")
	fmt.Println("new leader:", c.Index(leader) != killed)
	if err := c.Restart(killed); err != nil {
		fmt.Println(err)
		return
	}

	consInfo, err := js.CreateOrUpdateConsumer(ctx, "ORDERS", jsapi.ConsumerConfig{Durable: "audit", AckPolicy: jsapi.AckExplicit})
	if err != nil {
		fmt.Println(err)
		return
	}
	cons, err := pull.FromInfo(js, consInfo)
	if err != nil {
		fmt.Println(err)
		return
	}
	// A new replicated consumer serves pulls once it has a leader.
	c.WaitConsumerLeader("ORDERS", "audit")
	// Its interest may take a moment more to reach every node, and a pull
	// the new leader drops while it settles is never answered: fetch with
	// a short deadline of its own and ask again until both have come.
	var msgs []*jsapi.Msg
	err = nil
	for len(msgs) < 2 && ctx.Err() == nil {
		fctx, fcancel := context.WithTimeout(ctx, 2*time.Second)
		batch, ferr := cons.Fetch(fctx, 2-len(msgs))
		fcancel()
		if ferr != nil && !errors.Is(ferr, conn.ErrNoResponders) {
			err = ferr
			break
		}
		msgs = append(msgs, batch...)
	}
	for _, m := range msgs {
		fmt.Println(string(m.Data))
		m.Ack()
	}
	fmt.Println(err)
	// Output:
	// new leader: true
	// before
	// after
	// <nil>
}

// orderService is a small application: it takes orders on "orders.new" and
// bills each once, whatever the network and the server do.
type orderService struct {
	js *jsapi.JS

	mu     sync.Mutex
	billed map[string]bool
	done   chan string // each newly billed order
}

// place publishes an order, with its ID as message ID so that a retry is
// stored once, retrying while the server is unreachable.
func (o *orderService) place(ctx context.Context, id string) error {
	for {
		_, err := o.js.Publish(ctx, "orders.new", []byte(id), jsapi.MsgID(id))
		if err == nil || ctx.Err() != nil {
			return err
		}
	}
}

// work bills the orders of the durable consumer "billing" until ctx ends.
// A redelivered order (its ack lost in a fault) is acknowledged again
// without billing it twice.
func (o *orderService) work(ctx context.Context) error {
	info, err := o.js.CreateOrUpdateConsumer(ctx, "ORDERS", jsapi.ConsumerConfig{
		Durable: "billing", AckPolicy: jsapi.AckExplicit, AckWait: 2 * time.Second,
	})
	if err != nil {
		return err
	}
	c, err := pull.FromInfo(o.js, info)
	if err != nil {
		return err
	}
	for m, err := range c.Messages(ctx) {
		if err != nil {
			return err
		}
		id := string(m.Data)
		o.mu.Lock()
		first := !o.billed[id]
		o.billed[id] = true
		o.mu.Unlock()
		m.Ack()
		if first {
			o.done <- id
		}
	}
	return nil
}

// A small application test: publish, consume and ack through a server
// restart and a proxy cut. The application connects through the proxy, as
// it would to a real server, and the test breaks things in between.
func Example_application() {
	s, err := natstest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	p, err := natstest.StartProxy(s.URL())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	nc, err := conn.Connect(ctx, p.URL(), quickReconnect...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	js, _ := jsapi.New(nc)
	js.CreateStream(ctx, jsapi.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})
	app := &orderService{js: js, billed: map[string]bool{}, done: make(chan string)}
	workCtx, stopWork := context.WithCancel(ctx)
	worked := make(chan error, 1)
	go func() { worked <- app.work(workCtx) }()

	var billed []string
	round := func(ids ...string) {
		for _, id := range ids {
			if err := app.place(ctx, id); err != nil {
				fmt.Println(err)
			}
		}
		for range ids {
			billed = append(billed, <-app.done)
		}
	}
	round("a1", "a2", "a3")
	if err := s.Restart(); err != nil { // the server restarts
		fmt.Println(err)
	}
	round("b1", "b2", "b3")
	p.Cut() // the network drops the connection
	round("c1", "c2", "c3")

	stopWork()
	if err := <-worked; !errors.Is(err, context.Canceled) {
		fmt.Println(err)
	}
	slices.Sort(billed)
	fmt.Println(strings.Join(billed, " "))
	fmt.Println("reconnects:", nc.Stats().Reconnects)
	// Output:
	// a1 a2 a3 b1 b2 b3 c1 c2 c3
	// reconnects: 2
}
