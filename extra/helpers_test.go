package extra_test

import (
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

// Shared test helpers (internal/testutil).
var (
	connect    = testutil.Connect
	ctxT       = testutil.Ctx
	eventually = testutil.Eventually
)

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
func startJS(t testing.TB) (*natstest.Server, *conn.Conn, *jsapi.JS) {
	t.Helper()
	s := natstest.NewServer(t)
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
