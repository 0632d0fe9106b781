package natstest_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/leakcheck"
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
	serverBefore := len(serverGoroutines())
	t.Cleanup(func() {
		leakcheck.Wait(t, before, wait)
		eventually(t, "nats-server goroutines to end", func() bool {
			return len(serverGoroutines()) <= serverBefore
		})
	})
}

// serverGoroutines returns the stacks of goroutines running nats-server
// code.
func serverGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "nats-server/v2/server.") {
			out = append(out, g)
		}
	}
	return out
}

// eventually polls cond until it holds, failing t after wait.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	delay := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			if g := serverGoroutines(); len(g) > 0 && strings.Contains(what, "nats-server") {
				t.Logf("surviving:\n%s", strings.Join(g, "\n\n"))
			}
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(delay)
		delay = min(2*delay, 50*time.Millisecond)
	}
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
