package kv_test

import (
	"context"
	"iter"
	"os"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/natstest"
)

func TestMain(m *testing.M) {
	natstest.RunIfChild()
	os.Exit(m.Run())
}

type env struct {
	s   *natstest.Server
	nc  *conn.Conn
	js  *jsapi.JS
	ctx context.Context
}

// newEnv starts an embedded server and connects to it with a fast
// reconnect.
func newEnv(t testing.TB) *env {
	t.Helper()
	s := natstest.NewServer(t)
	return envOn(t, s, s.URL())
}

func envOn(t testing.TB, s *natstest.Server, url string) *env {
	t.Helper()
	j := testutil.JSEnvOn(t, s, url)
	return &env{s: j.Server, nc: j.Conn, js: j.JS, ctx: j.Ctx}
}

func (e *env) bucket(t testing.TB, cfg kv.Config) *kv.Bucket {
	t.Helper()
	b, err := kv.CreateBucket(e.ctx, e.js, cfg)
	if err != nil {
		t.Fatalf("CreateBucket(%s): %v", cfg.Bucket, err)
	}
	return b
}

func mustPut(t testing.TB, b *kv.Bucket, key, value string) uint64 {
	t.Helper()
	rev, err := b.Put(context.Background(), key, []byte(value))
	if err != nil {
		t.Fatalf("Put(%s): %v", key, err)
	}
	return rev
}

// next pulls the next entry of a watch, failing on an error or when
// nothing arrives within d.
type watch struct {
	t    testing.TB
	next func() (*kv.Entry, error, bool)
	stop func()
}

// startWatch runs the watch mk returns for a context that stop (or the
// test's end) cancels.
func startWatch(t testing.TB, mk func(ctx context.Context) iter.Seq2[*kv.Entry, error]) *watch {
	t.Helper()
	ch := make(chan item, 1024)
	ctx, cancel := context.WithCancel(context.Background())
	seq := mk(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		seq(func(e *kv.Entry, err error) bool {
			select {
			case ch <- item{e, err}:
				return err == nil
			case <-ctx.Done():
				return false
			}
		})
	}()
	w := &watch{t: t}
	w.next = func() (*kv.Entry, error, bool) {
		select {
		case it, ok := <-ch:
			if !ok {
				return nil, nil, false
			}
			return it.e, it.err, true
		case <-time.After(10 * time.Second):
			t.Fatalf("watch: nothing within 10s")
			return nil, nil, false
		}
	}
	w.stop = func() { cancel(); <-done }
	t.Cleanup(w.stop)
	return w
}

type item struct {
	e   *kv.Entry
	err error
}

// entry returns the next entry, failing on errors, markers and the end.
func (w *watch) entry() *kv.Entry {
	w.t.Helper()
	e, err, ok := w.next()
	if !ok || err != nil || e == nil {
		w.t.Fatalf("watch: want an entry, got %v %v (open %v)", e, err, ok)
	}
	return e
}

// marker expects the end-of-initial-values marker.
func (w *watch) marker() {
	w.t.Helper()
	e, err, ok := w.next()
	if !ok || err != nil || e != nil {
		w.t.Fatalf("watch: want the nil marker, got %+v %v (open %v)", e, err, ok)
	}
}
