package conn_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/natstest"
)

// F09: a slow subscriber loses what does not fit its queue — counted, and
// reported once per episode — while the connection's other subscriptions
// keep receiving.
func TestClientSideSlowConsumer(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	var events atomic.Int32
	nc := connect(t, s.URL(), conn.OnEvent(func(e conn.Event) {
		if e.Kind == conn.EventSlowConsumer && errors.Is(e.Err, conn.ErrSlowConsumer) && e.Sub != nil && e.Sub.Subject == "slow" {
			events.Add(1)
		}
	}))
	pub := connect(t, s.URL())
	slow, _ := nc.Subscribe("slow")
	if err := slow.SetPendingLimits(10, 1<<20); err != nil {
		t.Fatal(err)
	}
	fast, _ := nc.Subscribe("fast")
	nc.Flush(ctxT(t))

	episode := func(wantDropped uint64, wantEvents int32) {
		t.Helper()
		for range 100 {
			pub.Publish("slow", []byte("x"))
			pub.Publish("fast", []byte("y"))
		}
		pub.Flush(ctxT(t))
		// The other subscription is served in full meanwhile.
		for range 100 {
			if _, err := fast.NextMsg(ctxT(t)); err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, "drops counted", func() bool { return slow.Dropped() == wantDropped })
		eventually(t, "slow-consumer event", func() bool { return events.Load() == wantEvents })
		if n, _ := slow.Pending(); n != 10 {
			t.Fatalf("%d pending, limit 10", n)
		}
		// Drain the queue: the episode ends.
		for range 10 {
			if _, err := slow.NextMsg(ctxT(t)); err != nil {
				t.Fatal(err)
			}
		}
	}
	episode(90, 1)
	episode(180, 2) // a new episode raises a new event, once
	if got := nc.Stats().Dropped; got != 180 {
		t.Fatalf("Stats().Dropped = %d", got)
	}
	if got := slow.SlowEpisodes(); got != 2 {
		t.Fatalf("SlowEpisodes = %d, want 2", got)
	}
	// A message counts its subject, reply and data, and the overhead.
	if msgs, bytes := slow.PeakPending(); msgs != 10 || bytes != 10*(len("slow")+1+conn.MsgOverhead) {
		t.Fatalf("PeakPending = %d msgs, %d bytes; want 10, %d", msgs, bytes, 10*(len("slow")+1+conn.MsgOverhead))
	}
	if got := fast.SlowEpisodes(); got != 0 {
		t.Fatalf("the fast subscription had %d slow episodes", got)
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	cancel()
	if _, err := slow.NextMsg(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("empty queue with a done ctx: %v", err)
	}
}

// The connection-wide bound holds across subscriptions: many slow
// subscribers together cannot queue more than it.
func TestConnectionPendingLimit(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	// Room for ten of the messages below (subject, data and overhead).
	const size = 1 + 100 + conn.MsgOverhead
	nc := connect(t, s.URL(), conn.ConnectionPendingLimit(10*size))
	pub := connect(t, s.URL())
	var subs []*conn.Subscription
	for _, subj := range []string{"a", "b", "c"} {
		sub, _ := nc.Subscribe(subj)
		subs = append(subs, sub)
	}
	nc.Flush(ctxT(t))
	data := make([]byte, 100)
	for range 10 {
		for _, subj := range []string{"a", "b", "c"} {
			pub.Publish(subj, data)
		}
	}
	pub.Flush(ctxT(t))
	eventually(t, "drops", func() bool { return nc.Stats().Dropped == 20 })
	queued := 0
	for _, sub := range subs {
		_, b := sub.Pending()
		queued += b
	}
	if queued != 10*size {
		t.Fatalf("%d bytes queued, limit %d", queued, 10*size)
	}
	// Consuming frees the budget: what sub a held can go to sub b.
	na, _ := subs[0].Pending()
	nb, _ := subs[1].Pending()
	for range na {
		if _, err := subs[0].NextMsg(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	for range na {
		pub.Publish("b", data)
	}
	pub.Flush(ctxT(t))
	eventually(t, "budget reused", func() bool { n, _ := subs[1].Pending(); return n == nb+na })
	// Unsubscribing returns what was queued to the budget.
	nc2, _ := subs[2].Pending()
	subs[2].Unsubscribe()
	for range nc2 {
		pub.Publish("b", data)
	}
	pub.Flush(ctxT(t))
	eventually(t, "budget after unsubscribe", func() bool { n, _ := subs[1].Pending(); return n == nb+na+nc2 })
	if d := nc.Stats().Dropped; d != 20 {
		t.Fatalf("dropped %d after the budget was freed, want still 20", d)
	}
}

// F10: server-side slow consumer. The server has a short write deadline;
// the subscriber's link is throttled server→client to 10 KB/s while another
// connection floods its subject. The server must close the subscriber as a
// slow consumer (its own counter says so); the client must report the
// disconnect with a reason — the server's -ERR if one arrives, else the
// broken link — and reconnect; once the throttle is gone the subscription
// receives again.
func TestServerSideSlowConsumer(t *testing.T) {
	s := testutil.SlowConsumerServer(t, true)
	p := testutil.Proxy(t, s.URL())
	ev := &testutil.Events{}
	nc := connect(t, p.URL(), testutil.FastReconnect(), ev.Opt())
	pub := connect(t, s.URL())
	sub, err := nc.Subscribe("f10.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	// The subscription works before the fault.
	if err := pub.Publish("f10.check", []byte("before")); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(ctxT(t)); err != nil || string(m.Data) != "before" {
		t.Fatalf("before the fault: %v %v", m, err)
	}

	p.Throttle(faultproxy.Down, 10_000)
	stopLoad := testutil.SlowFlood(nc, pub, "f10.flood")
	defer stopLoad()

	srv := testutil.WaitSlowConsumerClosed(t, s, ev)
	stopLoad()
	p.Throttle(faultproxy.Down, 0)

	d := testutil.CheckSlowConsumerReason(t, ev)
	t.Logf("server counted %d slow consumer(s); client reported: %v", srv.NumSlowConsumersClients(), d.Err)

	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) > 0 && nc.IsConnected() })
	if err := nc.Flush(ctxT(t)); err != nil { // the re-sent SUB is in place
		t.Fatal(err)
	}
	if err := pub.Publish("f10.check", []byte("after")); err != nil {
		t.Fatal(err)
	}
	// Flood messages that made it through before the close may come first.
	ctx, cancel := context.WithTimeout(ctxT(t), 10*time.Second)
	defer cancel()
	for {
		m, err := sub.NextMsg(ctx)
		if err != nil {
			t.Fatalf("subscription after the reconnect: %v", err)
		}
		if m.Subject == "f10.check" {
			if string(m.Data) != "after" {
				t.Fatalf("got %q", m.Data)
			}
			break
		}
	}
	if !sub.IsValid() {
		t.Fatal("subscription closed by the slow-consumer episode")
	}
}
