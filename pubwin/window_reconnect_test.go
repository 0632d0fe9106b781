package pubwin_test

// A publish window whose acks were lost to a disconnect. The test of a bug
// reported against another client carries the issue in its name
// (docs/reliability.md).

import (
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pubwin"
)

// nats.go PR#1346: a window filled to MaxPending with publishes whose acks
// are lost to a disconnect must not stay full: after the reconnect a whole
// new window's worth of publishes goes out without ErrTooManyStalled, and
// their acks arrive.
func TestRegressionNatsGo1346WindowNotStuckFullAfterDisconnect(t *testing.T) {
	s := natstest.NewServer(t)
	// no_ack: no ack ever comes, so the window fills up.
	js, nc, ctx := setup(t, s.URL(), `,"no_ack":true`)
	const max = 20
	w, err := pubwin.New(js, pubwin.MaxPending(max), pubwin.StallWait(100*time.Millisecond), pubwin.AckTimeout(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for range max {
		if _, err := w.Publish(ctx, "w.a", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Publish(ctx, "w.a", nil); !errors.Is(err, pubwin.ErrTooManyStalled) {
		t.Fatalf("publish into a full window: %v, want ErrTooManyStalled", err)
	}
	before := nc.Stats().Reconnects
	nc.ForceReconnect()
	deadline := time.Now().Add(10 * time.Second)
	for !(nc.IsConnected() && nc.Stats().Reconnects > before) || w.Pending() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("window still holds %d pending after the reconnect", w.Pending())
		}
		time.Sleep(2 * time.Millisecond) // polling
	}
	for i := range max {
		if _, err := w.Publish(ctx, "w.a", nil); err != nil {
			t.Fatalf("publish %d after the reconnect: %v", i, err)
		}
	}
}
