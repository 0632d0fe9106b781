package testutil

import (
	"context"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

// jsEnvTimeout bounds every call a JetStream test makes through its
// JSEnv's context.
const jsEnvTimeout = 120 * time.Second

// JSEnv is the JetStream set-up the kv, objstore, pull and ordered tests
// share: the server (nil when the test connects elsewhere: a child
// process, a cluster, a proxy's own server), a connection that reconnects
// quickly and without limit, its JetStream context, and a context that
// bounds the test's calls.
type JSEnv struct {
	Server *natstest.Server
	Conn   *conn.Conn
	JS     *jsapi.JS
	Ctx    context.Context
}

// JSEnvOn connects to url (s's own address, or a proxy or child process
// in front of it: s may be nil) and closes the connection when the test
// ends; opts come after the set-up's reconnect options. A failure ends
// the test.
func JSEnvOn(t testing.TB, s *natstest.Server, url string, opts ...conn.Option) JSEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), jsEnvTimeout)
	t.Cleanup(cancel)
	nc, err := conn.Connect(ctx, url, append([]conn.Option{
		conn.ReconnectBackoff(20*time.Millisecond, 100*time.Millisecond),
		conn.ReconnectJitter(10 * time.Millisecond),
		conn.MaxReconnects(-1),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	js, err := jsapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return JSEnv{Server: s, Conn: nc, JS: js, Ctx: ctx}
}

// Retrying returns a JS on js's connection whose publishes retry as
// jsapi.RetryOnNoResponders(attempts, wait) says: for tests that publish
// across an election or a restart.
func Retrying(t testing.TB, js *jsapi.JS, attempts int, wait time.Duration) *jsapi.JS {
	t.Helper()
	r, err := jsapi.New(js.Conn(), jsapi.RetryOnNoResponders(attempts, wait))
	if err != nil {
		t.Fatal(err)
	}
	return r
}
