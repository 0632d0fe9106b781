package pause_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/internal/pause"
)

// TestFor: the wait ends at d, or at once with the cause of a ctx that
// ends first.
func TestFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := pause.For(context.Background(), 250*time.Millisecond); err != nil {
			t.Fatalf("plain pause: %v", err)
		}
		if d := time.Since(start); d != 250*time.Millisecond {
			t.Fatalf("paused %v, want 250ms", d)
		}
		why := errors.New("stop")
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(time.Second, func() { cancel(why) })
		start = time.Now()
		if err := pause.For(ctx, time.Hour); !errors.Is(err, why) {
			t.Fatalf("cancelled pause: %v", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Fatalf("cancelled pause lasted %v, want 1s", d)
		}
	})
}
