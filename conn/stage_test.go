package conn_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
)

// TestStagedDeliveryOrderAndLimits: messages of several subscriptions
// interleaved in one socket read are queued in order per subscription;
// everything that arrived before a PONG is queued when Flush returns; a
// burst that overflows a subscription's pending limit part way keeps what
// fits, in order, and counts the rest as dropped.
func TestStagedDeliveryOrderAndLimits(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	sub := connect(t, s.URL())
	pub := connect(t, s.URL())
	ctx := ctxT(t)
	const n = 1000
	subs := make([]*conn.Subscription, 3)
	for i := range subs {
		var err error
		if subs[i], err = sub.Subscribe(fmt.Sprintf("st.%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := subs[2].SetPendingLimits(n/2, 1<<20); err != nil {
		t.Fatal(err)
	}
	if err := sub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Interleave: runs of 1, 2 and 3 messages per subject.
	for i := 0; i < n; i++ {
		for k := range subs {
			for range k + 1 {
				if err := pub.Publish(fmt.Sprintf("st.%d", k), fmt.Appendf(nil, "%d", i)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := pub.Flush(ctx); err != nil { // the server has routed them all
		t.Fatal(err)
	}
	if err := sub.Flush(ctx); err != nil { // and this PONG follows them
		t.Fatal(err)
	}
	for k, sb := range subs {
		want := n * (k + 1)
		if k == 2 {
			want = n / 2
		}
		if msgs, _ := sb.Pending(); msgs != want {
			t.Fatalf("st.%d: %d queued when Flush returned, want %d", k, msgs, want)
		}
		for i := 0; i < want; i++ {
			m, err := sb.NextMsg(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got, exp := string(m.Data), fmt.Sprint(i/(k+1)); got != exp {
				t.Fatalf("st.%d message %d: %q, want %q", k, i, got, exp)
			}
		}
	}
	if d := subs[2].Dropped(); d != uint64(3*n-n/2) {
		t.Fatalf("dropped %d, want %d", d, 3*n-n/2)
	}
}

// TestStagedBeforeResponse: a message that arrived before a request's
// response is queued when the request returns, whoever read the response
// (the requester inline, or the reader goroutine while a consumer was
// busy).
func TestStagedBeforeResponse(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	svc := connect(t, s.URL())
	ctx := ctxT(t)
	if _, err := svc.SubscribeFunc("svc", func(m *conn.Msg) { _ = m.Respond(nil) }); err != nil {
		t.Fatal(err)
	}
	if err := svc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	x, err := nc.Subscribe("x")
	if err != nil {
		t.Fatal(err)
	}
	// A ctx with a deadline lets the requester read its response itself;
	// one that can only be cancelled leaves it to the reader goroutine.
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range 300 {
		rctx := ctx
		if i%2 == 1 {
			rctx = cctx
		}
		for range i%3 + 1 {
			if err := nc.Publish("x", []byte("m")); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := nc.Request(rctx, "svc", nil); err != nil {
			t.Fatal(err)
		}
		if n, _ := x.Pending(); n != i%3+1 {
			t.Fatalf("round %d: %d messages queued when the request returned, want %d", i, n, i%3+1)
		}
		for range i%3 + 1 {
			if _, err := x.NextMsg(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
}
