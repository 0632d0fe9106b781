package conn_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
)

// TestBorrowedLifetime: with conn.Borrowed, a handler or loop body sees
// each message whole, copies of what it keeps stay intact after it
// returns, and messages were lent (delivered in recycled memory). The same
// test shape runs in pull and ordered.
func TestBorrowedLifetime(t *testing.T) {
	const n, maxRounds = 2000, 20
	for _, form := range []string{"SubscribeFunc", "QueueSubscribeFunc", "Messages"} {
		t.Run(form, func(t *testing.T) {
			s := coreServer(t)
			nc := connect(t, s.URL())
			pub := connect(t, s.URL())
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()

			var kept [][]byte // copies made in the body
			var bad error
			got := 0
			roundDone := make(chan struct{}, 1)
			handler := func(m *conn.Msg) {
				if bad == nil && (m.Subject != "lend.x" || !bytes.Equal(m.Data, borrowPayload(got))) {
					bad = fmt.Errorf("message %d in the body: %q %q", got, m.Subject, m.Data)
				}
				kept = append(kept, bytes.Clone(m.Data))
				if got++; got%n == 0 {
					roundDone <- struct{}{}
				}
			}
			var sub *conn.Subscription
			var err error
			switch form {
			case "SubscribeFunc":
				sub, err = nc.SubscribeFunc("lend.x", handler, conn.Borrowed())
			case "QueueSubscribeFunc":
				sub, err = nc.QueueSubscribeFunc("lend.x", "q", handler, conn.Borrowed())
			case "Messages":
				sub, err = nc.Subscribe("lend.x")
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := nc.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			lent0 := nc.Stats().BorrowedMsgs
			var lent uint64
			for round := 0; round < maxRounds && lent == 0; round++ {
				// Published while the subscription is being read, so that
				// its own goroutine reads (and is lent) some of them.
				pubDone := make(chan error, 1)
				go func() {
					for i := range n {
						if err := pub.Publish("lend.x", borrowPayload(round*n+i)); err != nil {
							pubDone <- err
							return
						}
					}
					pubDone <- pub.Flush(ctx)
				}()
				if form == "Messages" {
					for m, err := range sub.Messages(ctx, conn.Borrowed()) {
						if err != nil {
							t.Fatal(err)
						}
						handler(m)
						if got == (round+1)*n {
							<-roundDone
							break
						}
					}
				} else {
					select {
					case <-roundDone:
					case <-ctx.Done():
						t.Fatalf("%d messages handled", got)
					}
				}
				if err := <-pubDone; err != nil {
					t.Fatal(err)
				}
				lent = nc.Stats().BorrowedMsgs - lent0
			}
			if form != "Messages" {
				_ = sub.Unsubscribe()
				<-sub.HandlerDone()
			}
			if bad != nil {
				t.Fatal(bad)
			}
			for i, k := range kept {
				if !bytes.Equal(k, borrowPayload(i)) {
					t.Fatalf("copy of message %d changed after its body returned: %q", i, k)
				}
			}
			if lent == 0 {
				t.Fatalf("no message of %d rounds of %d was lent", maxRounds, n)
			}
		})
	}
}

// Breaking out of a borrowed Messages loop leaves the rest of its batch
// queued as owned copies: a later NextMsg returns them intact, after
// more traffic has gone through the read buffer they were lent from.
func TestBorrowedBreakRequeuesCopies(t *testing.T) {
	s := coreServer(t)
	nc := connect(t, s.URL())
	pub := connect(t, s.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub, err := nc.Subscribe("lend.y")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 500
	for i := range n {
		if err := pub.Publish("lend.y", borrowPayload(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := 0
	for m, err := range sub.Messages(ctx, conn.Borrowed()) {
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(m.Data, borrowPayload(got)) {
			t.Fatalf("message %d: %q", got, m.Data)
		}
		if got++; got == 3 {
			break
		}
	}
	// More traffic through the same connection and buffers.
	other, err := nc.Subscribe("lend.other")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx); err != nil { // the server has the interest before pub publishes
		t.Fatal(err)
	}
	for range 200 {
		if err := pub.Publish("lend.other", bytes.Repeat([]byte("Z"), 300)); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for range 200 {
		if _, err := other.NextMsg(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var rest []*conn.Msg
	for got < n {
		m, err := sub.NextMsg(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", got, err)
		}
		rest = append(rest, m)
		got++
	}
	for i, m := range rest {
		if m.Subject != "lend.y" || !bytes.Equal(m.Data, borrowPayload(i+3)) {
			t.Fatalf("message %d after the break: %q %q", i+3, m.Subject, m.Data)
		}
	}
}

// A zero SubOpt is rejected before anything is subscribed.
func TestSubOptZeroRejected(t *testing.T) {
	s := coreServer(t)
	nc := connect(t, s.URL())
	if _, err := nc.SubscribeFunc("x", func(*conn.Msg) {}, conn.SubOpt{}); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("zero SubOpt: %v", err)
	}
}
