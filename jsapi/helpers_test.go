package jsapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

// Shared test helpers (internal/testutil).
var (
	connect          = testutil.Connect
	ctxT             = testutil.Ctx
	eventually       = testutil.Eventually
	eventuallyWithin = testutil.EventuallyWithin
)

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
func startJS(t testing.TB) (*natstest.Server, *conn.Conn, *jsapi.JS) {
	t.Helper()
	s := natstest.NewServer(t)
	nc := connect(t, s.URL())
	return s, nc, newJS(t, nc)
}
