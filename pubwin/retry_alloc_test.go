//go:build !race

package pubwin_test

import (
	"runtime/debug"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pubwin"
)

// TestWindowPublishAllocs: a publish allocates its Future and nothing else,
// with retries on (its message is copied into a pooled frame) and off,
// with and without headers. The server runs in a child process.
func TestWindowPublishAllocs(t *testing.T) {
	s := natstest.NewProcess(t, true)
	js, _, ctx := setup(t, s.URL(), "")
	data := make([]byte, 128)
	// Retry frames come from a sync.Pool, which a garbage collection
	// empties: with collections off, a warm pool serves every publish, which
	// is the claim (a collection refills it at a few allocations, not one
	// per publish).
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for _, c := range []struct {
		name  string
		retry pubwin.Option
	}{{"retry", pubwin.RetryOnNoResponders(2, 250*time.Millisecond)}, {"noretry", pubwin.RetryOnNoResponders(0, 0)}} {
		w, err := pubwin.New(js, pubwin.MaxPending(1<<14), c.retry)
		if err != nil {
			t.Fatal(err)
		}
		for _, opts := range [][]jsapi.PubOpt{nil, {jsapi.MsgID("same-id")}} {
			pub := func() {
				if _, err := w.Publish(ctx, "w.a", data, opts...); err != nil {
					t.Fatal(err)
				}
			}
			for range 2000 { // warm up the pools and the connection's buffers
				pub()
			}
			if err := w.Complete(ctx); err != nil {
				t.Fatal(err)
			}
			// The pools are per P: when the reader, which returns the
			// frames, and the publisher run on other Ps than usual (other
			// packages' tests on the same cores), a whole measurement can
			// miss them. The claim is the steady state: the best of three.
			n := testing.AllocsPerRun(2000, pub)
			for try := 1; try < 3 && n > 1; try++ {
				if err := w.Complete(ctx); err != nil {
					t.Fatal(err)
				}
				n = min(n, testing.AllocsPerRun(2000, pub))
			}
			if n > 1 {
				t.Errorf("%s, %d options: %v allocs per publish, want 1 (the Future)", c.name, len(opts), n)
			}
			if err := w.Complete(ctx); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
	}
}
