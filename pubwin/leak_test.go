package pubwin_test

import (
	"testing"
	"time"

	"github.com/natsio/natsio/internal/leakcheck"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pubwin"
)

// A window that published, completed, lost a batch to a disconnect and was
// closed with futures outstanding leaves no goroutine of natsio running.
func TestNoGoroutineLeak(t *testing.T) {
	s := natstest.NewServer(t)
	before := leakcheck.Snapshot()
	js, nc, ctx := setup(t, s.URL(), "")
	w, err := pubwin.New(js, pubwin.MaxPending(50))
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if _, err := w.Publish(ctx, "w.a", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Complete(ctx); err != nil {
		t.Fatal(err)
	}
	// A second window closed with publishes still awaiting acks.
	w2, _ := pubwin.New(js)
	var fs []*pubwin.Future
	for range 20 {
		f, err := w2.Publish(ctx, "w.b", nil)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	w2.Close()
	for _, f := range fs {
		f.Wait(ctx) // acked or failed, but ended
	}
	w.Close()
	nc.Close()
	leakcheck.Wait(t, before, 10*time.Second)
}
