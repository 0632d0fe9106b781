package pubwin_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pubwin"
)

// Every future is counted once, by how it ended: acked, failed by the
// stream's answer, timed out, lost at Close; stalls are counted as they
// happen.
func TestWindowStats(t *testing.T) {
	s := natstest.NewServer(t)
	js, nc, ctx := setup(t, s.URL(), "")
	// "silent.x": a plain subscriber takes the message and never answers.
	if _, err := nc.Subscribe("silent.>"); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	w, err := pubwin.New(js, pubwin.MaxPending(4), pubwin.StallWait(time.Second), pubwin.AckTimeout(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	const acked = 20
	for i := range acked {
		if _, err := w.Publish(ctx, "w.a", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Complete(ctx); err != nil {
		t.Fatal(err)
	}
	// No responder at all: the server's 503 fails it at once (no retries).
	f, err := w.Publish(ctx, "nobody.x", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Wait(ctx); err == nil {
		t.Fatal("publish to no stream succeeded")
	}
	st := w.Stats()
	if st.Published != acked+1 || st.Acked != acked || st.Failed != 1 || st.Pending != 0 ||
		st.PeakPending < 1 || st.PeakPending > 4 || st.MaxPending != 4 {
		t.Fatalf("after acks and a 503: %+v", st)
	}

	// Fill the window with messages nobody answers; the fifth publish
	// stalls and gives up. (The acked ones above may have stalled too,
	// waiting for acks to free a slot.)
	before := st.Stalls
	for range 4 {
		if _, err := w.Publish(ctx, "silent.x", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Publish(ctx, "silent.x", nil); !errors.Is(err, pubwin.ErrTooManyStalled) {
		t.Fatalf("publish into a full window: %v", err)
	}
	if st := w.Stats(); st.Stalls != before+1 || st.StallFailures != 1 || st.Pending != 4 || st.PeakPending != 4 {
		t.Fatalf("with a full window: %+v", st)
	}
	// The four time out.
	testutil.Eventually(t, "the silent publishes to time out", func() bool { return w.Stats().TimedOut == 4 })

	// One more left pending, then Close: lost.
	if _, err := w.Publish(ctx, "silent.x", nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	st = w.Stats()
	if st.Lost != 1 || st.Pending != 0 {
		t.Fatalf("after Close: %+v", st)
	}
	if end := st.Acked + st.Failed + st.TimedOut + st.Lost; end != st.Published {
		t.Fatalf("%d published, %d ended: %+v", st.Published, end, st)
	}
}
