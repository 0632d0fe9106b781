// Package testutil holds the helpers the module's tests share: a bounded
// context per test, a connection closed with the test, polling for a
// condition with a deadline (never a fixed sleep as synchronisation), a
// recorder of a connection's events, a fault proxy in front of a server,
// quick reconnects, the JetStream set-up of the store and consumer tests
// (JSEnv), the pieces of a server-side slow-consumer scenario,
// and the forged-message tools (PullSpy, RawConn). Only tests import it.
package testutil

import (
	"context"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
)

// Ctx returns a context that ends after 30 s or with the test.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Connect connects to url (within 10 s) and closes the connection when
// the test ends; it fails the test when the connection cannot be made.
func Connect(t testing.TB, url string, opts ...conn.Option) *conn.Conn {
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

// Eventually polls cond until it holds, failing the test after 20 s.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	EventuallyWithin(t, 20*time.Second, what, cond)
}

// EventuallyWithin polls cond, first every millisecond then backing off
// to every 50 ms, until it holds; it fails the test after d.
func EventuallyWithin(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for wait := time.Millisecond; !cond(); wait = min(2*wait, 50*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(wait)
	}
}
