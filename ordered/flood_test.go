package ordered_test

// Hostile suite: an ordered read ends by its context's deadline while
// messages keep arriving.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
)

// An ordered read whose body takes 100 µs per message, over a backlog far
// larger than it can read by its deadline (the server keeps delivering, so
// messages are always queued), ends by its deadline, yielding at most the
// message it had checked the context for as the context ended.
func TestFloodDeadlineEndsOrderedRead(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	const backlog = 50_000
	for range backlog {
		if err := e.nc.Publish("o.a", []byte("backlog")); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.nc.Flush(e.ctx); err != nil {
		t.Fatal(err)
	}
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	ctx, cancel := context.WithTimeout(e.ctx, 300*time.Millisecond)
	defer cancel()
	deadline, _ := ctx.Deadline()
	n, after := 0, 0
	var end error
	for _, err := range oc.Messages(ctx) {
		if err != nil {
			end = err
			break
		}
		n++
		if ctx.Err() != nil {
			after++ // yielded once its context was done
		}
		for t0 := time.Now(); time.Since(t0) < 100*time.Microsecond; {
		}
		if time.Since(deadline) > 10*time.Second {
			t.Fatal("still yielding 10 s after the deadline")
		}
	}
	late := time.Since(deadline)
	if !errors.Is(end, context.DeadlineExceeded) {
		t.Fatalf("ended with %v after %d messages", end, n)
	}
	if after > 1 {
		t.Fatalf("yielded %d messages once its context was done (returned %v after the deadline)", after, late)
	}
	t.Logf("FLOOD ordered Messages over a backlog (100 µs a message) returned %v after its deadline, having yielded %d of %d", late.Round(time.Millisecond), n, backlog)
}
