package pull_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// A Fetch whose pull is over leaves its subscription to the next Fetch:
// the pulls reply to one subject. A pull that may still send (MaxBytes, a
// cancelled Fetch) is not reused.
func TestFetchKeepsSubscription(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	spy := spyPulls(t, e)
	e.publish(t, 10)
	fetch := func(n int, opts ...pull.FetchOpt) []*jsapi.Msg {
		t.Helper()
		ctx, cancel := context.WithTimeout(e.ctx, 2*time.Second)
		defer cancel()
		msgs, err := c.Fetch(ctx, n, opts...)
		if err != nil && (len(msgs) != 0 || !errors.Is(err, pull.ErrNoMessages)) {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if err := m.Ack(); err != nil {
				t.Fatal(err)
			}
		}
		return msgs
	}
	if got := len(fetch(4)); got != 4 {
		t.Fatalf("fetched %d of 4", got)
	}
	first := spy.next(t)
	if got := len(fetch(4)); got != 4 {
		t.Fatalf("fetched %d of 4", got)
	}
	if r := spy.next(t); r != first {
		t.Fatalf("a whole batch: the next pull replied to %q, not %q", r, first)
	}
	// 2 left: the pull ends with a 408 at its expiry, and is over.
	if got := len(fetch(4)); got != 2 {
		t.Fatalf("fetched %d of the 2 left", got)
	}
	if r := spy.next(t); r != first {
		t.Fatalf("a pull that expired: the next pull replied to %q, not %q", r, first)
	}
	if got := len(fetch(4)); got != 0 {
		t.Fatalf("fetched %d from an empty consumer", got)
	}
	if r := spy.next(t); r != first {
		t.Fatalf("an empty pull: the next one replied to %q, not %q", r, first)
	}

	// NoWait with fewer than asked: the messages, then a 404 ends the pull.
	e.publish(t, 1)
	if got := len(fetch(4, pull.NoWait())); got != 1 {
		t.Fatalf("NoWait fetched %d of the 1 there", got)
	}
	if r := spy.next(t); r != first {
		t.Fatalf("a NoWait pull: the next pull replied to %q, not %q", r, first)
	}

	// With MaxBytes a "409 Batch Completed" may follow the batch: not kept.
	e.publish(t, 1)
	if got := len(fetch(1, pull.FetchMaxBytes(1<<20))); got != 1 {
		t.Fatalf("fetched %d of 1", got)
	}
	if r := spy.next(t); r != first {
		t.Fatalf("the MaxBytes pull replied to %q, not the kept %q", r, first)
	}
	e.publish(t, 1)
	if got := len(fetch(1)); got != 1 {
		t.Fatalf("fetched %d of 1", got)
	}
	second := spy.next(t)
	if second == first {
		t.Fatalf("the subscription of a MaxBytes pull served the next Fetch (%q)", first)
	}

	// A Fetch cancelled while its pull waits leaves a live pull behind.
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() {
		_, err := c.Fetch(ctx, 1) // waits DefaultFetchWait

		done <- err
	}()
	if r := spy.next(t); r != second {
		t.Fatalf("the kept subscription was not reused: %q, not %q", r, second)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a cancelled Fetch returned no error")
	}
	e.publish(t, 1) // goes to the abandoned pull
	e.publish(t, 1)
	if got := len(fetch(1)); got != 1 {
		t.Fatalf("fetched %d of 1", got)
	}
	if r := spy.next(t); r == second {
		t.Fatalf("the subscription of a cancelled Fetch served the next one (%q)", r)
	}
}

// A kept fetch subscription is unsubscribed when no Fetch comes for
// fetchSubIdle.
func TestFetchSubscriptionIdleExpiry(t *testing.T) {
	defer pull.SetFetchSubIdle(50 * time.Millisecond)()
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	if err := e.nc.Flush(e.ctx); err != nil {
		t.Fatal(err)
	}
	base := e.s.Server().NumSubscriptions()
	e.publish(t, 1)
	msgs, err := c.Fetch(e.ctx, 1)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("fetch: %d %v", len(msgs), err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for e.s.Server().NumSubscriptions() != base {
		if time.Now().After(deadline) {
			t.Fatalf("server subscriptions %d, %d before the Fetch", e.s.Server().NumSubscriptions(), base)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A kept fetch subscription survives a reconnect (the connection
// subscribes it again) and serves the next Fetch.
func TestFetchSubscriptionAcrossReconnect(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{AckPolicy: jsapi.AckNone})
	spy := spyPulls(t, e)
	e.publish(t, 2)
	if msgs, err := c.Fetch(e.ctx, 1); err != nil || len(msgs) != 1 {
		t.Fatalf("fetch: %d %v", len(msgs), err)
	}
	first := spy.next(t)
	e.reconnect(t)
	msgs, err := c.Fetch(e.ctx, 1)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("fetch after the reconnect: %d %v", len(msgs), err)
	}
	if r := spy.next(t); r != first {
		t.Fatalf("after the reconnect the pull replied to %q, not the kept %q", r, first)
	}
}

// nats.go#809 / nats.py#933: a Fetch right after a previous Fetch timed out
// on an empty consumer gets the available messages promptly, not a stale
// 408 or a wait for the full timeout (no lingering pull takes them).
func TestRegressionNatsGo809FetchAfterTimedOutFetch(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	for round := range 3 {
		ctx, cancel := context.WithTimeout(e.ctx, 300*time.Millisecond)
		msgs, err := c.Fetch(ctx, 5)
		cancel()
		if len(msgs) != 0 {
			t.Fatalf("round %d: empty consumer gave %d messages (%v)", round, len(msgs), err)
		}
		e.publish(t, 5)
		ctx, cancel = context.WithTimeout(e.ctx, 10*time.Second)
		start := time.Now()
		msgs, err = c.Fetch(ctx, 5)
		cancel()
		if err != nil || len(msgs) != 5 {
			t.Fatalf("round %d: fetch after a timed-out fetch: %d messages, %v", round, len(msgs), err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("round %d: fetch of available messages took %v", round, d)
		}
		for _, m := range msgs {
			if err := m.AckSync(e.ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
}
