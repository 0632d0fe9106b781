package ordered_test

import (
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
)

// readBoth reads with IdleTimeout(idle) and UntilDrained, and returns how
// many messages came and the error the read ended with (nil: drained).
func readBoth(t *testing.T, e *env, oc *ordered.Consumer, idle time.Duration) (int, error) {
	t.Helper()
	n := 0
	for _, err := range oc.Messages(e.ctx, ordered.IdleTimeout(idle), ordered.UntilDrained()) {
		if err != nil {
			return n, err
		}
		n++
	}
	if e.ctx.Err() != nil {
		t.Fatalf("the read ended by the test's context after %d messages", n)
	}
	return n, nil
}

// IdleTimeout with UntilDrained: whichever comes first ends the read. A
// stream with messages drains (no error, the idle timer never fires); an
// empty or caught-up one drains at once without waiting for the idle
// timeout; a read whose target can no longer be reached (the messages it
// counted on were purged) ends by the idle timeout with ErrNoMessages
// instead of waiting forever.
func TestIdleTimeoutWithUntilDrained(t *testing.T) {
	t.Run("drains first", func(t *testing.T) {
		e := newEnv(t, jsapi.StorageMemory)
		e.publish(t, "o.a", 50)
		oc := newOrdered(t, e.js, "O", ordered.Config{})
		// An idle timeout far longer than the read: had the read waited
		// for it, it would end with ErrNoMessages.
		n, err := readBoth(t, e, oc, time.Minute)
		if n != 50 || err != nil {
			t.Fatalf("read %d, ended with %v; want 50 and nil", n, err)
		}
	})
	t.Run("empty stream drains at once", func(t *testing.T) {
		e := newEnv(t, jsapi.StorageMemory)
		oc := newOrdered(t, e.js, "O", ordered.Config{})
		n, err := readBoth(t, e, oc, time.Minute)
		if n != 0 || err != nil {
			t.Fatalf("read %d, ended with %v; want 0 and nil", n, err)
		}
	})
	t.Run("caught up drains at once", func(t *testing.T) {
		e := newEnv(t, jsapi.StorageMemory)
		e.publish(t, "o.a", 5)
		oc := newOrdered(t, e.js, "O", ordered.Config{})
		if n, err := readBoth(t, e, oc, time.Minute); n != 5 || err != nil {
			t.Fatalf("first read: %d, %v", n, err)
		}
		if n, err := readBoth(t, e, oc, time.Minute); n != 0 || err != nil {
			t.Fatalf("second read: %d, %v; want 0 and nil", n, err)
		}
	})
	t.Run("idle ends what cannot drain", func(t *testing.T) {
		e := newEnv(t, jsapi.StorageMemory)
		e.publish(t, "o.a", 20)
		// New counts the 20 messages the stream holds now; the purge
		// leaves none of them to yield.
		oc := newOrdered(t, e.js, "O", ordered.Config{})
		st, err := e.js.Stream(e.ctx, "O")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Purge(e.ctx); err != nil {
			t.Fatal(err)
		}
		n, err := readBoth(t, e, oc, 300*time.Millisecond)
		if !errors.Is(err, ordered.ErrNoMessages) {
			t.Fatalf("read %d, ended with %v; want ErrNoMessages", n, err)
		}
		if n != 0 {
			t.Fatalf("read %d purged messages", n)
		}
	})
}
