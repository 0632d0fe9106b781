package pull_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// borrowedPayload is message i's body: a few hundred bytes, so that a
// batch takes several socket reads and some messages are cut by a read.
func borrowedPayload(i int) []byte { return bytes.Repeat(fmt.Appendf(nil, "[%d]", i), 50) }

// With Borrowed, Messages lends what the loop reads itself: every message
// still arrives once, in order and intact within its loop body, with its
// metadata, and every acknowledgement reaches the server. ReadAhead makes
// the reader goroutine read, and then nothing is lent.
func TestMessagesBorrowed(t *testing.T) {
	cases := []struct {
		name string
		ack  jsapi.AckPolicy
		opts []pull.Opt
		lent bool
	}{
		{"ack none", jsapi.AckNone, nil, true},
		{"ack explicit", jsapi.AckExplicit, nil, true},
		{"ack explicit, read ahead", jsapi.AckExplicit, []pull.Opt{pull.ReadAhead(true)}, false},
	}
	e := newEnv(t, jsapi.StorageMemory)
	const n = 3000
	for i := range n {
		if _, err := e.js.Publish(e.ctx, "s.x", borrowedPayload(i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := pull.CreateOrUpdate(e.ctx, e.js, "S", jsapi.ConsumerConfig{Durable: "B" + fmt.Sprint(len(tc.name)), AckPolicy: tc.ack})
			if err != nil {
				t.Fatal(err)
			}
			before := e.nc.Stats().BorrowedMsgs
			ctx, cancel := context.WithCancel(e.ctx)
			defer cancel()
			seen := 0
			opts := append([]pull.Opt{pull.MaxMessages(100), pull.Borrowed()}, tc.opts...)
			for m, err := range c.Messages(ctx, opts...) {
				if err != nil {
					t.Fatal(err)
				}
				md, err := m.Metadata()
				if err != nil || md.StreamSeq != uint64(seen+1) || !bytes.Equal(m.Data, borrowedPayload(seen)) {
					t.Fatalf("message %d: seq %d (%v), %.30q", seen, md.StreamSeq, err, m.Data)
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
			lent := e.nc.Stats().BorrowedMsgs - before
			if tc.lent && lent == 0 {
				t.Fatalf("nothing lent over %d messages", n)
			}
			if !tc.lent && lent != 0 {
				t.Fatalf("%d messages lent while the reader goroutine read ahead", lent)
			}
			if tc.ack != jsapi.AckNone {
				waitAcked(t, e, c, n)
			}
		})
	}
}

// Borrowed is an option of Messages only.
func TestBorrowedIsForMessages(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	if _, err := c.Fetch(e.ctx, 1, pull.Borrowed()); err == nil {
		t.Fatal("Fetch accepted Borrowed")
	}
}
