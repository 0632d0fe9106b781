package kv_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
)

func seedWatch(t *testing.T) (*env, *kv.Bucket, []uint64) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "w", History: 5})
	revs := []uint64{
		mustPut(t, b, "a", "a1"),   // 1
		mustPut(t, b, "b", "b1"),   // 2
		mustPut(t, b, "a", "a2"),   // 3
		mustPut(t, b, "c.x", "c1"), // 4
	}
	if err := b.Delete(e.Ctx, "b"); err != nil { // 5
		t.Fatal(err)
	}
	return e, b, revs
}

type expect struct {
	key, val string
	op       kv.Op
}

func (w *watch) expect(want ...expect) []*kv.Entry {
	w.T.Helper()
	var got []*kv.Entry
	for _, x := range want {
		e := w.Entry()
		if e.Key != x.key || string(e.Value) != x.val || e.Operation != x.op || e.Bucket != "w" {
			w.T.Fatalf("got %s=%q %v, want %s=%q %v", e.Key, e.Value, e.Operation, x.key, x.val, x.op)
		}
		got = append(got, e)
	}
	return got
}

func TestWatchInitialValuesAndUpdates(t *testing.T) {
	e, b, _ := seedWatch(t)
	w := startWatch(t, func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return b.WatchAll(ctx) })
	init := w.expect(expect{"a", "a2", kv.OpPut}, expect{"c.x", "c1", kv.OpPut}, expect{"b", "", kv.OpDelete})
	if init[0].Revision != 3 || init[1].Revision != 4 || init[2].Revision != 5 || init[2].Delta != 0 || init[0].Delta == 0 {
		t.Fatalf("initial revisions/deltas %+v %+v %+v", init[0], init[1], init[2])
	}
	w.Marker()
	mustPut(t, b, "d", "d1")
	b.Purge(e.Ctx, "a")
	up := w.expect(expect{"d", "d1", kv.OpPut}, expect{"a", "", kv.OpPurge})
	if up[0].Revision != 6 || up[1].Revision != 7 || up[0].Created.IsZero() {
		t.Fatalf("updates %+v %+v", up[0], up[1])
	}
	// The watch's consumer goes away with the watch.
	w.Stop()
	st, _ := e.JS.Stream(e.Ctx, "KV_w")
	if n := st.CachedInfo().State.Consumers; n != 0 {
		t.Fatalf("%d consumers left after the watch", n)
	}
}

func TestWatchOptions(t *testing.T) {
	e, b, _ := seedWatch(t)
	run := func(mk func(ctx context.Context) iter.Seq2[*kv.Entry, error]) *watch {
		return startWatch(t, mk)
	}
	t.Run("IgnoreDeletes", func(t *testing.T) {
		w := run(func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return b.WatchAll(ctx, kv.IgnoreDeletes()) })
		w.T = t
		w.expect(expect{"a", "a2", kv.OpPut}, expect{"c.x", "c1", kv.OpPut})
		w.Marker()
		b.Delete(e.Ctx, "c.x")
		mustPut(t, b, "z", "z1")
		w.expect(expect{"z", "z1", kv.OpPut})
		w.Stop()
		b.Put(e.Ctx, "c.x", []byte("c1"))
		b.Delete(e.Ctx, "z")
	})
	t.Run("MetaOnly", func(t *testing.T) {
		w := run(func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return b.Watch(ctx, "a", kv.MetaOnly()) })
		w.T = t
		if got := w.Entry(); got.Key != "a" || len(got.Value) != 0 || got.Revision == 0 {
			t.Fatalf("meta-only %+v", got)
		}
		w.Marker()
		w.Stop()
	})
	t.Run("IncludeHistory", func(t *testing.T) {
		w := run(func(ctx context.Context) iter.Seq2[*kv.Entry, error] {
			return b.WatchFiltered(ctx, []string{"a", "b"}, kv.IncludeHistory())
		})
		w.T = t
		w.expect(expect{"a", "a1", kv.OpPut}, expect{"b", "b1", kv.OpPut}, expect{"a", "a2", kv.OpPut}, expect{"b", "", kv.OpDelete})
		w.Marker()
		w.Stop()
	})
	t.Run("UpdatesOnly", func(t *testing.T) {
		w := run(func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return b.WatchAll(ctx, kv.UpdatesOnly()) })
		w.T = t
		w.Marker()
		mustPut(t, b, "new", "n1")
		w.expect(expect{"new", "n1", kv.OpPut})
		w.Stop()
	})
	t.Run("ResumeFromRevision", func(t *testing.T) {
		w := run(func(ctx context.Context) iter.Seq2[*kv.Entry, error] {
			return b.WatchAll(ctx, kv.ResumeFromRevision(3))
		})
		w.T = t
		got := w.expect(expect{"a", "a2", kv.OpPut}, expect{"c.x", "c1", kv.OpPut}, expect{"b", "", kv.OpDelete})
		if got[0].Revision != 3 {
			t.Fatalf("resumed at %d", got[0].Revision)
		}
		// Whatever was written after, up to now, is initial too.
		for {
			e := w.Entry()
			if e.Delta == 0 {
				break
			}
		}
		w.Marker()
		w.Stop()
	})
	t.Run("Wildcard", func(t *testing.T) {
		w := run(func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return b.Watch(ctx, "c.*") })
		w.T = t
		w.expect(expect{"c.x", "c1", kv.OpPut})
		w.Marker()
		mustPut(t, b, "c.y", "y")
		mustPut(t, b, "cc", "not me")
		mustPut(t, b, "c.z", "z")
		w.expect(expect{"c.y", "y", kv.OpPut}, expect{"c.z", "z", kv.OpPut})
		w.Stop()
	})
	t.Run("NoMatch", func(t *testing.T) {
		w := run(func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return b.Watch(ctx, "nothing.>") })
		w.T = t
		w.Marker()
		mustPut(t, b, "nothing.here", "1")
		w.expect(expect{"nothing.here", "1", kv.OpPut})
		w.Stop()
	})
}

func TestWatchEmptyBucketAndBreak(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "w"})
	n := 0
	for ent, err := range b.WatchAll(e.Ctx) {
		if err != nil || ent != nil {
			t.Fatalf("empty bucket: %+v %v", ent, err)
		}
		n++
		break
	}
	if n != 1 {
		t.Fatal("no marker")
	}
	st, _ := e.JS.Stream(e.Ctx, "KV_w")
	if c := st.CachedInfo().State.Consumers; c != 0 {
		t.Fatalf("%d consumers left after breaking out", c)
	}
}

// TestWatchEndsWhenBucketDeleted: deleting the bucket ends its watch
// with ErrBucketNotFound, once.
//
// The server usually answers the watch's waiting pull with 409 Consumer
// Deleted, but when the whole stream goes it may drop that status with the
// stream's send queue (nats-server 2.15.2 queues it on the stream's outq);
// the watch then learns from missed heartbeats, after two of them. A short
// heartbeat keeps that path inside the helper's 10 s wait (with the 5 s
// default this test failed once in a loaded full -race run).
func TestWatchEndsWhenBucketDeleted(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "w", Storage: jsapi.StorageMemory})
	w := startWatch(t, func(ctx context.Context) iter.Seq2[*kv.Entry, error] {
		return b.WatchAll(ctx, kv.WatchHeartbeat(500*time.Millisecond))
	})
	w.Marker()
	if err := kv.DeleteBucket(e.Ctx, e.JS, "w"); err != nil {
		t.Fatal(err)
	}
	_, err, ok := w.Next()
	if !ok || !errors.Is(err, kv.ErrBucketNotFound) {
		t.Fatalf("watch of a deleted bucket: %v (open %v)", err, ok)
	}
	if _, _, ok := w.Next(); ok {
		t.Fatal("watch went on after its terminal error")
	}
}

func TestWatchContextEnds(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "w"})
	ctx, cancel := context.WithCancel(e.Ctx)
	defer cancel()
	var last error
	for ent, err := range b.WatchAll(ctx) {
		if ent == nil && err == nil {
			cancel()
			continue
		}
		last = err
	}
	if !errors.Is(last, context.Canceled) {
		t.Fatalf("last error %v", last)
	}
}

// TestWatchSurvivesRestart restarts the server under a watch: the first
// update after the reconnect arrives within 2 s, and across a restart in
// the middle of concurrent writes every revision arrives exactly once, in
// order, with no gap.
func TestWatchSurvivesRestart(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "w"}) // file storage survives restarts
	for i := range 20 {
		mustPut(t, b, fmt.Sprint("k.", i), fmt.Sprint(i))
	}
	reconnected := make(chan time.Time, 4)
	defer e.Conn.OnReconnect(func() { reconnected <- time.Now() })()
	w := startWatch(t, func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return b.WatchAll(ctx) })
	var last uint64
	for range 20 {
		ent := w.Entry()
		if ent.Revision <= last {
			t.Fatalf("initial revision %d after %d", ent.Revision, last)
		}
		last = ent.Revision
	}
	w.Marker()

	// Phase 1: how quickly the watch resumes.
	if err := e.Server.Restart(); err != nil {
		t.Fatal(err)
	}
	var t0 time.Time
	select {
	case t0 = <-reconnected:
	case <-time.After(10 * time.Second):
		t.Fatal("no reconnect")
	}
	ctx, cancel := context.WithTimeout(e.Ctx, 10*time.Second)
	rev, err := b.Put(ctx, "after", []byte("restart"))
	cancel()
	if err != nil {
		t.Fatalf("put after restart: %v", err)
	}
	ent := w.Entry()
	resume := time.Since(t0)
	if ent.Key != "after" || ent.Revision != rev || rev != last+1 {
		t.Fatalf("first entry after restart %+v (put rev %d, last %d)", ent, rev, last)
	}
	last = rev
	t.Logf("first update %v after the reconnect", resume)
	if resume >= 2*time.Second {
		t.Fatalf("watch resumed %v after the reconnect, want < 2s", resume)
	}

	// Phase 2: a restart in the middle of concurrent writes.
	stop := make(chan struct{})
	writerDone := make(chan []uint64)
	go func() {
		var acked []uint64
		for i := 0; ; i++ {
			select {
			case <-stop:
				writerDone <- acked
				return
			default:
			}
			ctx, cancel := context.WithTimeout(e.Ctx, 2*time.Second)
			rev, err := b.Put(ctx, fmt.Sprint("c.", i), []byte("v"))
			cancel()
			if err == nil {
				acked = append(acked, rev)
			}
		}
	}()
	seen := map[uint64]bool{}
	read := func(until func() bool) {
		for !until() {
			ent := w.Entry()
			if ent.Revision != last+1 {
				t.Fatalf("revision %d after %d: gap or duplicate", ent.Revision, last)
			}
			last = ent.Revision
			seen[ent.Revision] = true
		}
	}
	read(func() bool { return len(seen) >= 200 })
	if err := e.Server.Restart(); err != nil {
		t.Fatal(err)
	}
	<-reconnected
	before := last
	read(func() bool { return last >= before+200 })
	close(stop)
	acked := <-writerDone
	maxAcked := acked[len(acked)-1]
	read(func() bool { return last >= maxAcked })
	for _, r := range acked {
		if !seen[r] {
			t.Fatalf("acknowledged revision %d never delivered", r)
		}
	}
	t.Logf("%d acknowledged writes, %d delivered across the restart", len(acked), len(seen))
}

// TestPerKeyTTL uses limit markers: a key created with a TTL expires into a
// purge marker that watchers see.
func TestPerKeyTTL(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "ttl", LimitMarkerTTL: time.Second, History: 2})
	st, _ := e.JS.Stream(e.Ctx, "KV_ttl")
	if c := st.CachedInfo().Config; !c.AllowMsgTTL || c.SubjectDeleteMarkerTTL != time.Second {
		t.Fatalf("marker config %+v", c)
	}
	status, _ := b.Status(e.Ctx)
	if status.LimitMarkerTTL != time.Second {
		t.Fatalf("status marker ttl %v", status.LimitMarkerTTL)
	}
	w := startWatch(t, func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return b.Watch(ctx, "session") })
	w.Marker()
	created := time.Now()
	if _, err := b.Create(e.Ctx, "session", []byte("s1"), kv.KeyTTL(time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := w.Entry(); got.Operation != kv.OpPut {
		t.Fatalf("created %+v", got)
	}
	got := w.Entry() // the server's marker when the TTL expires
	if got.Operation != kv.OpPurge || got.Key != "session" || time.Since(created) < 900*time.Millisecond {
		t.Fatalf("expiry %+v after %v", got, time.Since(created))
	}
	if _, err := b.Get(e.Ctx, "session"); !errors.Is(err, kv.ErrKeyNotFound) {
		t.Fatalf("Get after expiry: %v", err)
	}
	// The key can be created again; a purge can carry a TTL.
	if _, err := b.Create(e.Ctx, "session", []byte("s2")); err != nil {
		t.Fatalf("Create after expiry: %v", err)
	}
	w.Entry()
	if err := b.Purge(e.Ctx, "session", kv.PurgeTTL(time.Hour)); err != nil {
		t.Fatal(err)
	}
	pm := w.Entry()
	raw, err := st.GetMsg(e.Ctx, pm.Revision)
	if err != nil {
		t.Fatal(err)
	}
	if raw.Header.Get("KV-Operation") != "PURGE" || raw.Header.Get("Nats-Rollup") != "sub" ||
		raw.Header.Get("Nats-TTL") != "1h0m0s" {
		t.Fatalf("purge marker headers %q", raw.Header)
	}
	// Without limit markers the server refuses per-key TTLs.
	plain := e.bucket(t, kv.Config{Bucket: "plain"})
	if _, err := plain.Create(e.Ctx, "k", nil, kv.KeyTTL(time.Minute)); !errors.Is(err, jsapi.ErrTTLDisabled) {
		t.Fatalf("TTL on a bucket without markers: %v", err)
	}
}
