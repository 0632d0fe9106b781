package extra_test

import (
	"context"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testserver"
	"github.com/natsio/natsio/jsapi"
)

// connect dials url and closes the connection at cleanup.
func connect(t testing.TB, url string, opts ...conn.Option) *conn.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, url, opts...)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

// ctxT returns a context bounded to 30 s and cancelled at cleanup.
func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newJS(t testing.TB, nc *conn.Conn) *jsapi.JS {
	t.Helper()
	js, err := jsapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// startJS starts a JetStream server and returns it with a connection and
// a JetStream view.
func startJS(t testing.TB) (*testserver.Server, *conn.Conn, *jsapi.JS) {
	t.Helper()
	s := testserver.Start(t, testserver.Options{})
	nc := connect(t, s.URL())
	return s, nc, newJS(t, nc)
}

// stream creates a memory stream name on subjects.<name lowercased>.> with
// the features a test needs.
func stream(t testing.TB, js *jsapi.JS, cfg jsapi.StreamConfig) *jsapi.Stream {
	t.Helper()
	if cfg.Storage == "" {
		cfg.Storage = jsapi.StorageMemory
	}
	st, err := js.CreateStream(ctxT(t), cfg)
	if err != nil {
		t.Fatalf("create stream %s: %v", cfg.Name, err)
	}
	return st
}

// msgCount returns the number of messages stored in a stream.
func msgCount(t testing.TB, st *jsapi.Stream) uint64 {
	t.Helper()
	info, err := st.Info(ctxT(t))
	if err != nil {
		t.Fatalf("stream info: %v", err)
	}
	return info.State.Msgs
}

// eventually polls cond with backoff until it holds, failing after 20 s.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for d := time.Millisecond; !cond(); d = min(2*d, 50*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(d)
	}
}
