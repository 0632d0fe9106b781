package kv_test

// A KV watch across the loss of its connection, and across a server
// restart while nobody reads it: it recovers and goes on with no gap and
// no duplicate. Against a real embedded server; the tests of bugs reported
// against other clients carry the issue in their name (docs/reliability.md).

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/natstest"
)

// newProxy starts a fault proxy in front of s.
func newProxy(t *testing.T, s *natstest.Server) *faultproxy.Proxy {
	t.Helper()
	_, hp, _ := strings.Cut(s.URL(), "://")
	p, err := faultproxy.New(hp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// reconnects returns a channel that gets a value at each reconnect of e's
// connection.
func (e *env) reconnects(t *testing.T) <-chan struct{} {
	ch := make(chan struct{}, 16)
	t.Cleanup(e.Conn.OnReconnect(func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}))
	return ch
}

// waitSignal waits for a value on ch, failing after d.
func waitSignal(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("no %s within %v", what, d)
	}
}

// nats.go#1777: the connection of a KV watch is lost (the proxy cuts it and
// refuses new connections for a while) without a server restart. The watch
// iterator is not closed: the updates written while it was disconnected
// and after the reconnect all arrive, with revisions strictly increasing
// by one (no gap, no duplicate), and promptly after the reconnect.
func TestRegressionNatsGo1777WatchRecoversAfterConnectionLoss(t *testing.T) {
	s := natstest.NewServer(t)
	p := newProxy(t, s)
	e := envOn(t, s, p.URL())  // the watcher, proxied
	wr := envOn(t, s, s.URL()) // a writer with its own link
	b := e.bucket(t, kv.Config{Bucket: "w"})
	wb, err := kv.Bind(wr.Ctx, wr.JS, "w")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		mustPut(t, wb, fmt.Sprint("k.", i), "v")
	}
	reconnected := e.reconnects(t)
	w := startWatch(t, func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return b.WatchAll(ctx) })
	var last uint64
	for range 5 {
		ent := w.Entry()
		if ent.Revision != last+1 {
			t.Fatalf("initial revision %d after %d", ent.Revision, last)
		}
		last = ent.Revision
	}
	w.Marker()
	next := func(what string) {
		t.Helper()
		ent := w.Entry() // fails if the watch ended or stalled
		if ent.Revision != last+1 {
			t.Fatalf("%s: revision %d after %d: gap or duplicate", what, ent.Revision, last)
		}
		last = ent.Revision
	}
	mustPut(t, wb, "live", "1")
	next("before the cut")

	p.Refuse(true)
	p.CutAll()
	waitUntil(t, 10*time.Second, "the watcher to notice the cut", func() bool { return !e.Conn.IsConnected() })
	for i := range 5 {
		mustPut(t, wb, fmt.Sprint("gone.", i), "v") // while the watcher is away
	}
	p.Refuse(false)
	waitSignal(t, reconnected, 10*time.Second, "reconnect")
	back := time.Now()
	for range 5 {
		next("written while disconnected")
	}
	resumed := time.Since(back)
	for i := range 5 {
		mustPut(t, wb, fmt.Sprint("after.", i), "v")
	}
	if _, err := b.Put(e.Ctx, "own", []byte("v")); err != nil { // the watcher's own link works too
		t.Fatal(err)
	}
	for range 6 {
		next("written after the reconnect")
	}
	t.Logf("backlog delivered %v after the reconnect", resumed)
	if resumed > 3*time.Second {
		t.Fatalf("watch resumed %v after the reconnect, want < 3s", resumed)
	}
	// Nothing else is queued (no duplicate): the next entry is the next write.
	mustPut(t, wb, "tail", "v")
	next("tail")
}

// waitUntil polls cond until it holds, failing after d.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for step := time.Millisecond; !cond(); step = min(2*step, 50*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(step) // polling, not synchronisation
	}
}

// handoffWatch ranges over a watch in the background and hands each item
// over an unbuffered channel: while the test does not take it, the
// iterator is parked in yield — a watch that is not being read.
type item struct {
	e   *kv.Entry
	err error
}

type handoffWatch struct {
	ch   chan item
	stop func()
}

func startHandoffWatch(t *testing.T, mk func(ctx context.Context) iter.Seq2[*kv.Entry, error]) *handoffWatch {
	ctx, cancel := context.WithCancel(context.Background())
	h := &handoffWatch{ch: make(chan item)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(h.ch)
		for ent, err := range mk(ctx) {
			select {
			case h.ch <- item{ent, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	h.stop = func() { cancel(); <-done }
	t.Cleanup(h.stop)
	return h
}

// next takes the next item, failing at ctx's end or when the watch ended.
func (h *handoffWatch) next(t *testing.T, ctx context.Context) (*kv.Entry, error) {
	t.Helper()
	select {
	case it, ok := <-h.ch:
		if !ok {
			t.Fatal("watch ended")
		}
		return it.e, it.err
	case <-ctx.Done():
		t.Fatal("watch hangs: nothing delivered in time")
		return nil, nil
	}
}

// nats.rs#1596 (F02 for KV): a watch that is not being read while the
// server (file store) restarts — its iterator parked with an entry in
// hand — must, once reading resumes, deliver that entry and then a put
// made after the restart: its ordered consumer, lost in the restart, is
// recreated after the last revision yielded. No hang: the resumed reads
// are bounded well below the watch's 2 × 5 s heartbeat, so recovery must
// not wait for the missed-heartbeat watchdog.
func TestRegressionNatsRs1596KVWatchIdleRestart(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "w"}) // file storage
	r1 := mustPut(t, b, "a", "1")
	w := startHandoffWatch(t, func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return b.WatchAll(ctx) })
	ctx, cancel := context.WithTimeout(e.Ctx, 10*time.Second)
	if ent, err := w.next(t, ctx); err != nil || ent == nil || ent.Revision != r1 {
		t.Fatalf("initial value: %+v %v", ent, err)
	}
	if ent, err := w.next(t, ctx); err != nil || ent != nil {
		t.Fatalf("marker: %+v %v", ent, err)
	}
	cancel()
	r2 := mustPut(t, b, "b", "2") // taken by the watch, not read by the test

	reconnected := e.reconnects(t)
	if err := e.Server.Restart(); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, reconnected, 10*time.Second, "reconnect")
	// The watch stays unread for a while after the restart.
	time.Sleep(time.Second) // holding the fault: nobody reads
	pctx, pcancel := context.WithTimeout(e.Ctx, 10*time.Second)
	r3, err := b.Put(pctx, "c", []byte("3"))
	pcancel()
	if err != nil {
		t.Fatalf("put after the restart: %v", err)
	}

	resumed := time.Now()
	rctx, rcancel := context.WithTimeout(e.Ctx, 5*time.Second)
	defer rcancel()
	for _, want := range []struct {
		key string
		rev uint64
	}{{"b", r2}, {"c", r3}} {
		ent, err := w.next(t, rctx)
		if err != nil || ent == nil || ent.Key != want.key || ent.Revision != want.rev {
			t.Fatalf("after the idle restart: %+v %v, want %s at revision %d", ent, err, want.key, want.rev)
		}
	}
	t.Logf("post-restart put delivered %v after reading resumed", time.Since(resumed))
	if r3 != r2+1 {
		t.Fatalf("revisions %d, %d: the restart lost or added a write", r2, r3)
	}
}
