package ordered_test

// Regression tests for bugs reported against other NATS clients
// (RELIABILITY.md section (b)), named after the issue thread.

import (
	"context"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
)

// reader runs Messages in the background and hands over stream sequences.
func startReader(t *testing.T, ctx context.Context, oc *ordered.Consumer, opts ...ordered.Opt) (<-chan uint64, <-chan error) {
	t.Helper()
	got := make(chan uint64, 1000)
	done := make(chan error, 1)
	go func() {
		for m, err := range oc.Messages(ctx, opts...) {
			if err != nil {
				done <- err
				return
			}
			md, _ := m.Metadata()
			got <- md.StreamSeq
		}
		done <- nil
	}()
	return got, done
}

// expectSeqs waits for the stream sequences from..to, in order.
func expectSeqs(t *testing.T, ctx context.Context, got <-chan uint64, done <-chan error, from, to uint64) {
	t.Helper()
	for want := from; want <= to; want++ {
		select {
		case seq := <-got:
			if seq != want {
				t.Fatalf("got stream seq %d, want %d", seq, want)
			}
		case err := <-done:
			t.Fatalf("Messages ended at %d: %v", want, err)
		case <-ctx.Done():
			t.Fatalf("stream seq %d never delivered", want)
		}
	}
}

// nats.go PR#1808 (and nats.rs#1596): while JetStream is unavailable —
// the server down for longer than two heartbeats, so recreating the
// consumer fails — the ordered consumer keeps retrying and continues, in
// order and without a terminal error, once the server is back.
func TestRegressionNatsGo1808RetriesWhileJetStreamUnavailable(t *testing.T) {
	e := newEnv(t, jsapi.StorageFile)
	e.publish(t, "o.a", 10)
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	got, done := startReader(t, ctx, oc, ordered.MaxMessages(5), ordered.Heartbeat(100*time.Millisecond))
	expectSeqs(t, ctx, got, done, 1, 10)
	e.s.Shutdown()
	// The outage is the scenario: several heartbeat periods without a
	// server, so the consumer's recreation attempts fail.
	select {
	case err := <-done:
		t.Fatalf("Messages ended during the outage: %v", err)
	case <-time.After(600 * time.Millisecond):
	}
	e.s.Restart(t)
	e.publish(t, "o.a", 10)
	expectSeqs(t, ctx, got, done, 11, 20)
	cancel()
	<-done
}

// nats.rs#1331 / openobserve#13676: recreating the ordered consumer under a
// flapping link must not pile up consumers on the server: after several
// forced reconnects the stream holds at most the one live consumer.
func TestRegressionNatsRs1331NoConsumerPileUpOnFlappingLink(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	got, done := startReader(t, ctx, oc, ordered.MaxMessages(5), ordered.Heartbeat(100*time.Millisecond))
	seq := uint64(0)
	for range 6 {
		e.publish(t, "o.a", 1)
		seq++
		expectSeqs(t, ctx, got, done, seq, seq)
		before := e.nc.Stats().Reconnects
		e.nc.ForceReconnect()
		for !(e.nc.IsConnected() && e.nc.Stats().Reconnects > before) {
			if ctx.Err() != nil {
				t.Fatal("no reconnect")
			}
			time.Sleep(2 * time.Millisecond) // polling
		}
	}
	e.publish(t, "o.a", 1)
	seq++
	expectSeqs(t, ctx, got, done, seq, seq)
	count := func() int {
		n := 0
		for _, err := range e.js.ConsumerNames(ctx, "O") {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		return n
	}
	// Deletions of replaced consumers may still be in flight: poll.
	deadline := time.Now().Add(5 * time.Second)
	for n := count(); n > 1; n = count() {
		if time.Now().After(deadline) {
			t.Fatalf("%d consumers on the stream after %d forced reconnects (resets %d), want at most 1", n, 6, oc.Resets())
		}
		time.Sleep(20 * time.Millisecond) // polling
	}
	cancel()
	<-done
}
