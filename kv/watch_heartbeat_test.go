package kv_test

import (
	"context"
	"errors"
	"iter"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/natstest"
)

// WatchHeartbeat: with a 200 ms heartbeat, a watch whose link goes silent
// for 1.5 s (the server's traffic held in the proxy, the TCP connection
// open) notices the silence and recreates its consumer; with the default
// 5 s heartbeat the same silence goes unnoticed. Either way no entry is
// lost or repeated.
func TestWatchHeartbeatDetectsSilence(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     []kv.WatchOpt
		recreate bool
	}{
		{"200ms", []kv.WatchOpt{kv.WatchHeartbeat(200 * time.Millisecond)}, true},
		{"default", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := natstest.NewServer(t)
			p := newProxy(t, s)
			e := envOn(t, s, p.URL())
			wr := envOn(t, s, s.URL())
			b := e.bucket(t, kv.Config{Bucket: "hb"})
			wb, err := kv.Bind(wr.Ctx, wr.JS, "hb")
			if err != nil {
				t.Fatal(err)
			}
			var creates atomic.Int64
			// Counted on the reader: after a Flush, every create the server
			// sent before it is counted.
			sub, err := wr.Conn.SubscribeInlineUnsafe("$JS.API.CONSUMER.CREATE.KV_hb.>", func(*conn.Msg) { creates.Add(1) })
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sub.Unsubscribe() })
			if err := wr.Conn.Flush(wr.Ctx); err != nil {
				t.Fatal(err)
			}

			mustPut(t, wb, "k", "1")
			w := startWatch(t, func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return b.WatchAll(ctx, tc.opts...) })
			last := w.Entry().Revision
			w.Marker()
			// One live entry: the watch's consumer for updates exists.
			rev := mustPut(t, wb, "k", "2")
			if ent := w.Entry(); ent.Revision != rev || rev != last+1 {
				t.Fatalf("live revision %d (put %d) after %d", ent.Revision, rev, last)
			}
			last = rev
			if err := wr.Conn.Flush(wr.Ctx); err != nil {
				t.Fatal(err)
			}
			before := creates.Load()

			p.Stall(faultproxy.Down, true)
			time.Sleep(1500 * time.Millisecond) // hold the fault: about 7 heartbeats of 200 ms
			p.Stall(faultproxy.Down, false)

			for i := range 3 {
				rev := mustPut(t, wb, "k", "after")
				ent := w.Entry()
				if ent.Revision != rev || ent.Revision != last+1 {
					t.Fatalf("put %d: revision %d (last %d, put %d): gap or duplicate", i, ent.Revision, last, rev)
				}
				last = ent.Revision
			}
			if err := wr.Conn.Flush(wr.Ctx); err != nil {
				t.Fatal(err)
			}
			if got := creates.Load() > before; got != tc.recreate {
				t.Fatalf("%d consumer creates during the silence: recreated %v, want %v", creates.Load()-before, got, tc.recreate)
			}
		})
	}
}

func TestWatchHeartbeatValidated(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "hbv"})
	for _, err := range b.WatchAll(e.Ctx, kv.WatchHeartbeat(10*time.Millisecond)) {
		if !errors.Is(err, conn.ErrInvalidOption) {
			t.Fatalf("10ms heartbeat: %v, want ErrInvalidOption", err)
		}
		return
	}
	t.Fatal("the watch yielded nothing")
}
