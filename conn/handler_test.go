package conn_test

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
)

// HandlerDone follows the last return of a SubscribeFunc handler, which
// may come after the subscription has ended (Closed); without a handler
// goroutine it is Closed's channel.
func TestHandlerDone(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	entered := make(chan struct{})
	release := make(chan struct{})
	sub, err := nc.SubscribeFunc("hd", func(*conn.Msg) {
		close(entered)
		<-release
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("hd", nil); err != nil {
		t.Fatal(err)
	}
	<-entered
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sub.Closed():
	case <-ctxT(t).Done():
		t.Fatal("Closed not closed after Unsubscribe")
	}
	select {
	case <-sub.HandlerDone():
		t.Fatal("HandlerDone closed while the handler runs")
	default:
	}
	close(release)
	select {
	case <-sub.HandlerDone():
	case <-ctxT(t).Done():
		t.Fatal("HandlerDone not closed after the handler returned")
	}

	plain, err := nc.Subscribe("hd.plain")
	if err != nil {
		t.Fatal(err)
	}
	if plain.HandlerDone() != plain.Closed() {
		t.Fatal("HandlerDone of a subscription without a handler is not Closed")
	}
}

// A SubscribeFunc handler's goroutine starts with its first message: a
// thousand idle subscriptions hold no goroutines (so Close has none to
// wake), a message starts its handler, and every HandlerDone closes on
// Close, idle or not.
func TestIdleHandlersHoldNoGoroutine(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	const n = 1000
	before := runtime.NumGoroutine()
	got := make(chan string, 1)
	subs := make([]*conn.Subscription, n)
	for i := range subs {
		var err error
		subs[i], err = nc.SubscribeFunc("idle."+strconv.Itoa(i), func(m *conn.Msg) { got <- m.Subject })
		if err != nil {
			t.Fatal(err)
		}
	}
	if grown := runtime.NumGoroutine() - before; grown > n/10 {
		t.Fatalf("%d idle handlers started %d goroutines", n, grown)
	}
	if err := nc.Publish("idle.7", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case subj := <-got:
		if subj != "idle.7" {
			t.Fatalf("got %q", subj)
		}
	case <-ctxT(t).Done():
		t.Fatal("the handler of a message never ran")
	}
	nc.Close()
	for i, sub := range subs {
		select {
		case <-sub.HandlerDone():
		case <-ctxT(t).Done():
			t.Fatalf("HandlerDone of subscription %d not closed after Close", i)
		}
	}
}
