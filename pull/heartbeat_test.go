package pull_test

// The heartbeat monitor of a consume loop against a real server: an idle
// consumer reports no missed heartbeat; a link gone silent is reported
// within about two heartbeats and the loop goes on once the link is back.

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pull"
)

// Heartbeats arrive on an idle consumer: Messages reports no missed
// heartbeat while nothing is published.
func TestIdleHeartbeats(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	var missed atomic.Int32
	ctx, cancel := context.WithTimeout(e.ctx, 1500*time.Millisecond)
	defer cancel()
	for _, err := range c.Messages(ctx, pull.Expires(time.Second), pull.Heartbeat(200*time.Millisecond),
		pull.OnError(func(err error) {
			if errors.Is(err, pull.ErrNoHeartbeat) {
				missed.Add(1)
			}
		})) {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("ended with %v", err)
		}
	}
	if missed.Load() != 0 {
		t.Fatalf("%d missed-heartbeat reports on a healthy idle consumer", missed.Load())
	}
}

// nats.rs#860 (F06/F20): a pull consumer whose link goes silent (black
// hole: the proxy holds bytes both ways, sockets stay open, connection
// pings too rare to notice) must surface pull.ErrNoHeartbeat within about
// 2-2¼ heartbeats (asserted < 4 × heartbeat for noisy machines), keep
// going while the stall lasts, and deliver new messages once it ends.
func TestRegressionNatsRs860StallSurfaced(t *testing.T) {
	s := natstest.NewServer(t)
	p := testutil.Proxy(t, s.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, p.URL(), conn.PingInterval(time.Minute), conn.MaxPingsOutstanding(2),
		conn.ReconnectBackoff(20*time.Millisecond, 200*time.Millisecond), conn.ReconnectJitter(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jsapi.New(nc)
	e := &env{s: s, nc: nc, js: js, ctx: ctx}
	admin := envOn(t, s, s.URL(), jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})

	const hb = 500 * time.Millisecond
	var reports errLog
	got, done := consume(ctx, c, pull.Expires(5*time.Second), pull.Heartbeat(hb), reports.opt())
	admin.publish(t, 5)
	expectRange(t, ctx, got, done, 1, 5)
	// Start from a live link: a heartbeat (bytes with no message) came
	// through after the messages.
	after := p.BytesDown()
	waitUntil(t, 10*hb, "an idle heartbeat", func() bool { return p.BytesDown() > after })

	p.Stall(faultproxy.Up, true)
	p.Stall(faultproxy.Down, true)
	stalledAt := time.Now()
	var detected time.Time
	waitUntil(t, 10*time.Second, "pull.ErrNoHeartbeat", func() bool {
		var ok bool
		detected, ok = reports.firstAfter(pull.ErrNoHeartbeat, stalledAt)
		return ok
	})
	lat := detected.Sub(stalledAt)
	t.Logf("stall surfaced as ErrNoHeartbeat after %v (heartbeat %v, promised 2-2¼ ×)", lat, hb)
	if lat >= 4*hb {
		t.Fatalf("stall surfaced after %v, want < %v", lat, 4*hb)
	}
	// Keep the black hole for a few more heartbeats: missed heartbeats
	// are not terminal.
	time.Sleep(3 * hb) // holding the fault
	select {
	case err := <-done:
		t.Fatalf("Messages ended during the stall: %v", err)
	default:
	}
	p.Stall(faultproxy.Up, false)
	p.Stall(faultproxy.Down, false)
	admin.publish(t, 5)
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	expectRange(t, rctx, got, done, 6, 10)
	n := reports.count(pull.ErrNoHeartbeat)
	t.Logf("%d missed-heartbeat reports in all", n)
	// Each report was counted first (Consumer.Stats), and each forgot the
	// pulls (a reset).
	if st := c.Stats(); st.MissedHeartbeats < uint64(n) || st.Resets < st.MissedHeartbeats {
		t.Fatalf("Stats after %d missed-heartbeat reports: %+v", n, st)
	}
}
