package conn_test

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
)

// A burst of subscriptions shares writes: 1,000 Subscribe calls and a
// Flush take at most one socket write per 64 SUB lines, and each of the
// subscriptions is in place at the server after the Flush.
func TestSubscribeBurstSharesWrites(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	const n = 1000
	w0 := conn.Writes(nc)
	for i := range n {
		if _, err := nc.Subscribe("burst." + strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
		// A caller doing a little work between its subscriptions: the
		// connection's goroutines get to run, and a flusher woken by
		// each SUB would write each on its own.
		runtime.Gosched()
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	w := conn.Writes(nc) - w0
	t.Logf("%d subscriptions and a Flush: %d writes", n, w)
	// A burst's SUB lines wait subMaxWait at most: the race detector's
	// slower subscriptions leave fewer of them to each write.
	limit := uint64(n / 64)
	if conn.RaceEnabled {
		limit = n / 16
	}
	if w > limit {
		t.Fatalf("%d subscriptions and a Flush took %d writes, want at most %d", n, w, limit)
	}
	if got := serverSubs(t, s, nc); got != n {
		t.Fatalf("server holds %d subscriptions, want %d", got, n)
	}
}
