package conn_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testserver"
)

// F09: a slow subscriber loses what does not fit its queue — counted, and
// reported once per episode — while the connection's other subscriptions
// keep receiving.
func TestF09SlowConsumer(t *testing.T) {
	s := testserver.Start(t, testserver.Options{NoJetStream: true})
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
	ctx, cancel := context.WithCancel(ctxT(t))
	cancel()
	if _, err := slow.NextMsg(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("empty queue with a done ctx: %v", err)
	}
}
