package natstest_test

import (
	"context"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/leakcheck"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
)

// wait bounds every wait of these tests.
const wait = 30 * time.Second

// noLeaks checks, once the test and all its cleanups are over, that no
// goroutine of natsio (connections, proxies) or of nats-server survived.
// It must be called first in a test, before anything registers a cleanup;
// tests using it do not run in parallel.
func noLeaks(t *testing.T) {
	t.Helper()
	before := leakcheck.Snapshot()
	serverBefore := leakcheck.ServerSnapshot()
	t.Cleanup(func() {
		leakcheck.Wait(t, before, wait)
		leakcheck.WaitServer(t, serverBefore, wait)
	})
}

// eventually polls cond until it holds, failing t after wait.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testutil.EventuallyWithin(t, wait, what, cond)
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// roundTrip checks that nc can subscribe, publish and receive on subject.
func roundTrip(t testing.TB, nc *conn.Conn, subject string) {
	t.Helper()
	ctx := ctxT(t)
	sub, err := nc.Subscribe(subject)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish(subject, []byte("ping")); err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(ctx)
	if err != nil || string(m.Data) != "ping" {
		t.Fatalf("round trip on %s: %v %v", subject, m, err)
	}
}

// connectErr tries to connect once, without reconnects, and returns the
// error.
func connectErr(t testing.TB, url string, opts ...conn.Option) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, url, append([]conn.Option{conn.NoReconnect()}, opts...)...)
	if err == nil {
		nc.Close()
	}
	return err
}

func newJS(t testing.TB, nc *conn.Conn, opts ...jsapi.Option) *jsapi.JS {
	t.Helper()
	js, err := jsapi.New(nc, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// fastReconnect makes a client come back quickly after a fault.
var fastReconnect = []conn.Option{
	conn.ReconnectWait(20 * time.Millisecond),
	conn.ReconnectJitter(0),
	conn.MaxReconnects(-1),
}

func contextWithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}
