package conn_test

import (
	"bytes"
	"errors"
	"fmt"
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

// SubscribeInline: every message in order on the reader, its fields
// readable during the call (and copied by the handler to keep), responses
// sent from the handler, and the queue-based reads refused.
func TestSubscribeInline(t *testing.T) {
	s := coreServer(t)
	nc := connect(t, s.URL())
	pub := connect(t, s.URL())
	ctx := ctxT(t)
	if _, err := nc.SubscribeInlineUnsafe("x", nil); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("nil handler: %v", err)
	}
	const n = 5000
	var kept [][]byte
	done := make(chan struct{})
	sub, err := nc.SubscribeInlineUnsafe("inl.*", func(m *conn.Msg) {
		kept = append(kept, bytes.Clone(m.Data))
		if m.Reply != "" {
			m.Respond(append([]byte("re:"), m.Data...))
		}
		if len(kept) == n {
			close(done)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.NextMsg(ctx); !errors.Is(err, conn.ErrBadSubscription) {
		t.Fatalf("NextMsg on an inline subscription: %v", err)
	}
	if _, err := sub.NextBatch(ctx, nil); !errors.Is(err, conn.ErrBadSubscription) {
		t.Fatalf("NextBatch on an inline subscription: %v", err)
	}
	for _, err := range sub.Messages(ctx) {
		if !errors.Is(err, conn.ErrBadSubscription) {
			t.Fatalf("Messages on an inline subscription: %v", err)
		}
	}
	for i := range n - 1 {
		pub.Publish(fmt.Sprint("inl.", i%7), fmt.Appendf(nil, "%d", i))
	}
	r, err := pub.Request(ctx, "inl.req", []byte("last"))
	if err != nil || string(r.Data) != "re:last" {
		t.Fatalf("request answered from an inline handler: %v %v", r, err)
	}
	<-done
	for i, b := range kept[:n-1] {
		if want := fmt.Sprint(i); string(b) != want {
			t.Fatalf("message %d is %q: order or content lost", i, b)
		}
	}
}
