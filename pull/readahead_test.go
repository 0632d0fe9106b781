package pull_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// Who reads the socket for Messages: by default the loop reads it itself
// (the connection counts inline batches), unless it acknowledges under a
// MaxAckPending below twice MaxMessages; ReadAhead overrides either way.
// Every message arrives once, in order, and every acknowledgement reaches
// the server, in every mode (with MaxAckPending 1 each next message waits
// for the previous acknowledgement).
func TestMessagesReadAhead(t *testing.T) {
	cases := []struct {
		name   string
		ack    jsapi.AckPolicy
		map_   int // MaxAckPending (0: the server's 1000)
		opts   []pull.Opt
		inline bool
	}{
		{"ack none", jsapi.AckNone, 0, nil, true},
		{"ack none, read ahead", jsapi.AckNone, 0, []pull.Opt{pull.ReadAhead(true)}, false},
		// MaxAckPending 1000 ≥ 2 × 50: inline, acknowledgements lazy.
		{"ack explicit", jsapi.AckExplicit, 0, nil, true},
		{"ack explicit, read ahead", jsapi.AckExplicit, 0, []pull.Opt{pull.ReadAhead(true)}, false},
		// MaxAckPending 60 < 2 × 50: the server may wait for the acks.
		{"ack explicit, small max ack pending", jsapi.AckExplicit, 60, nil, false},
		{"ack explicit, small max ack pending, inline", jsapi.AckExplicit, 60, []pull.Opt{pull.ReadAhead(false)}, true},
		{"ack explicit, max ack pending 1", jsapi.AckExplicit, 1, nil, false},
		{"ack all, unlimited", jsapi.AckAll, -1, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, jsapi.StorageMemory)
			const n = 2000
			e.publish(t, n)
			c := e.consumer(t, jsapi.ConsumerConfig{AckPolicy: tc.ack, MaxAckPending: tc.map_})
			ctx, cancel := context.WithCancel(e.ctx)
			defer cancel()
			seen := 0
			opts := append([]pull.Opt{pull.MaxMessages(50)}, tc.opts...)
			for m, err := range c.Messages(ctx, opts...) {
				if err != nil {
					t.Fatal(err)
				}
				if string(m.Data) != fmt.Sprint(seen) {
					t.Fatalf("message %d is %q", seen, m.Data)
				}
				if tc.ack != jsapi.AckNone {
					if err := m.Ack(); err != nil {
						t.Fatal(err)
					}
				}
				if seen++; seen == n {
					break
				}
			}
			if tc.ack != jsapi.AckNone {
				// Every ack reaches the consumer. The server applies acks
				// on the consumer's own goroutine, after the connection
				// has read them, so a Flush alone does not order them
				// before the Info: look until they are all in.
				waitAcked(t, e, c, n)
			}
		})
	}
}

// waitAcked waits until the consumer has n messages acknowledged and none
// pending, failing at e's deadline.
func waitAcked(t *testing.T, e *env, c *pull.Consumer, n uint64) {
	t.Helper()
	if err := e.nc.Flush(e.ctx); err != nil {
		t.Fatal(err)
	}
	for {
		info, err := c.Info(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.NumAckPending == 0 && info.NumPending == 0 && info.AckFloor.Consumer == n {
			return
		}
		select {
		case <-e.ctx.Done():
			t.Fatalf("ack pending %d, pending %d, ack floor %d of %d", info.NumAckPending, info.NumPending, info.AckFloor.Consumer, n)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Lazy acknowledgements need no later write to reach the server: while the
// loop waits for more messages, with no pull due (70 of 100 still
// requested), they are written within a millisecond.
func TestLazyAcksWrittenWithoutFurtherTraffic(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	const n = 30
	e.publish(t, n)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	acked := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		seen := 0
		for m, err := range c.Messages(ctx, pull.MaxMessages(100)) {
			if err != nil {
				done <- err
				return
			}
			if err := m.Ack(); err != nil {
				done <- err
				return
			}
			if seen++; seen == n {
				close(acked)
			}
		}
		done <- nil
	}()
	select {
	case <-acked:
	case err := <-done:
		t.Fatalf("the loop ended: %v", err)
	}
	// Another connection watches the consumer; the loop's connection
	// sends nothing more.
	other := e.bindOther(t)
	for {
		info, err := other.Info(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.NumAckPending == 0 && info.AckFloor.Consumer == n {
			break
		}
		select {
		case <-e.ctx.Done():
			t.Fatalf("acknowledgements never arrived: ack pending %d, ack floor %d", info.NumAckPending, info.AckFloor.Consumer)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

// A loop of Next and Ack under MaxAckPending 1: each acknowledgement waits
// for the next Next's pull and goes ahead of it in the same write, so every
// message is served; the last one goes with the Flush. A Fetch of a batch
// reads inline, Next does not.
func TestNextLoopLazyAcksMaxAckPending1(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	const n = 50
	e.publish(t, n)
	c := e.consumer(t, jsapi.ConsumerConfig{MaxAckPending: 1})
	for i := range n {
		m, err := c.Next(e.ctx)
		if err != nil {
			t.Fatalf("next %d: %v", i, err)
		}
		if string(m.Data) != fmt.Sprint(i) {
			t.Fatalf("message %d is %q", i, m.Data)
		}
		if err := m.Ack(); err != nil {
			t.Fatal(err)
		}
	}
	waitAcked(t, e, c, n)
	// A batch consumer (MaxAckPending 1000) fetching 2 at a time.
	f := e.consumer(t, jsapi.ConsumerConfig{Durable: "F"})
	for got := 0; got < n; {
		msgs, err := f.Fetch(e.ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if string(m.Data) != fmt.Sprint(got) {
				t.Fatalf("fetched message %d is %q", got, m.Data)
			}
			if err := m.Ack(); err != nil {
				t.Fatal(err)
			}
			got++
		}
	}
	waitAcked(t, e, f, n)
}
