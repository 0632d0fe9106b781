package extra_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/internal/leakcheck"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

// Publishers and iterators leave no subscription and no goroutine behind,
// however they end: commit, close, abort, failure, break, cancelled ctx.
func TestNoLeftovers(t *testing.T) {
	s, nc, js := startJS(t)
	ctx := ctxT(t)
	fastStream(t, js, "LF")
	stream(t, js, jsapi.StreamConfig{Name: "LG", Subjects: []string{"lg.>"}, AllowDirect: true, AllowAtomicPublish: true})
	for range 50 {
		if _, err := js.Publish(ctx, "lg.a", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// The request mux subscription exists by now; count from here.
	base := s.Server().NumSubscriptions()

	// Fast: commit, close, abort, failure.
	p, _ := extra.NewFastPublisher(js)
	p.Add(ctx, "lf.a", nil)
	if _, err := p.Commit(ctx, "lf.a", nil); err != nil {
		t.Fatal(err)
	}
	p, _ = extra.NewFastPublisher(js)
	p.Add(ctx, "lf.a", nil)
	if _, err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	p, _ = extra.NewFastPublisher(js)
	p.Add(ctx, "lf.a", nil)
	p.Abort()
	p, _ = extra.NewFastPublisher(js)
	if _, err := p.Add(ctx, "lg.a", nil); !errors.Is(err, jsapi.ErrBatchDisabled) {
		t.Fatalf("fast on a plain stream: %v", err)
	}

	// Atomic: commit and discard.
	if _, err := extra.PublishBatch(ctx, js, []extra.BatchMsg{{Subject: "lg.b"}}); err != nil {
		t.Fatal(err)
	}
	b, _ := extra.NewBatchPublisher(js)
	b.Add(ctx, "lg.b", nil)
	b.Discard()

	// Batch get: break, cancelled context, full read.
	for range extra.GetBatch(ctx, js, "LG", 50) {
		break
	}
	cctx, cancel := context.WithCancel(ctx)
	n := 0
	var last error
	for _, err := range extra.GetBatch(cctx, js, "LG", 50) {
		if err != nil {
			last = err
			break
		}
		if n++; n == 3 {
			cancel()
		}
	}
	cancel()
	if n != 3 || !errors.Is(last, context.Canceled) {
		t.Fatalf("cancelled get: %d messages, %v", n, last)
	}
	for _, err := range extra.GetLastMsgsFor(ctx, js, "LG", []string{"lg.*"}) {
		if err != nil {
			t.Fatal(err)
		}
	}

	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.Server().NumSubscriptions(); got != base {
		t.Fatalf("%d subscriptions on the server, %d before", got, base)
	}
	if g := leakcheck.InPackage("extra"); g != 0 {
		t.Fatalf("%d goroutines of package extra left", g)
	}
}

// Batch gets (full, abandoned, cancelled) and fast and atomic publishers
// leave no goroutine created by natsio code once the connection closes.
func TestNoGoroutineLeak(t *testing.T) {
	s := natstest.NewServer(t)
	before := leakcheck.Snapshot()
	nc := connect(t, s.URL())
	js := newJS(t, nc)
	ctx := ctxT(t)
	fastStream(t, js, "LF")
	stream(t, js, jsapi.StreamConfig{Name: "LG", Subjects: []string{"lg.>"}, AllowDirect: true, AllowAtomicPublish: true})
	for range 20 {
		if _, err := js.Publish(ctx, "lg.a", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	for _, err := range extra.GetBatch(ctx, js, "LG", 20) {
		if err != nil {
			t.Fatal(err)
		}
	}
	for range extra.GetBatch(ctx, js, "LG", 20) {
		break
	}
	p, _ := extra.NewFastPublisher(js)
	p.Add(ctx, "lf.a", nil)
	if _, err := p.Commit(ctx, "lf.a", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := extra.PublishBatch(ctx, js, []extra.BatchMsg{{Subject: "lg.b"}}); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	leakcheck.Wait(t, before, 10*time.Second)
}
