package jsapi_test

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

// ctxTimeout returns a context bounded to d and cancelled at cleanup (for
// tests that do a lot of work and must not fail on a loaded machine).
func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// newJS returns a JetStream view of nc, failing the test on a bad option.
func newJS(t testing.TB, nc *conn.Conn, opts ...jsapi.Option) *jsapi.JS {
	t.Helper()
	js, err := jsapi.New(nc, opts...)
	if err != nil {
		t.Fatalf("jsapi.New: %v", err)
	}
	return js
}

// startJS starts a JetStream enabled server and returns it with a
// connection and a JetStream view of it.
func startJS(t testing.TB) (*testserver.Server, *conn.Conn, *jsapi.JS) {
	t.Helper()
	s := testserver.Start(t, testserver.Options{})
	nc := connect(t, s.URL())
	return s, nc, newJS(t, nc)
}

// eventually polls cond until it holds, failing the test after 20 s. It
// backs off from 1 ms to 50 ms and returns as soon as cond holds (no
// fixed sleeps as synchronisation).
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	eventuallyWithin(t, 20*time.Second, what, cond)
}

// eventuallyWithin is eventually with a deadline of d.
func eventuallyWithin(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for d := time.Millisecond; !cond(); d = min(2*d, 50*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(d)
	}
}
