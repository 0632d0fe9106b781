package pull_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// Who reads the socket for Messages: by default a consumer that does not
// acknowledge reads it itself (the connection counts inline batches), one
// that acknowledges leaves it to the reader goroutine, and ReadAhead
// overrides either way. Every message arrives once, in order, either way.
func TestMessagesReadAhead(t *testing.T) {
	cases := []struct {
		name   string
		ack    jsapi.AckPolicy
		opts   []pull.Opt
		inline bool
	}{
		{"ack none", jsapi.AckNone, nil, true},
		{"ack none, read ahead", jsapi.AckNone, []pull.Opt{pull.ReadAhead(true)}, false},
		{"ack explicit", jsapi.AckExplicit, nil, false},
		{"ack explicit, inline", jsapi.AckExplicit, []pull.Opt{pull.ReadAhead(false)}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, jsapi.StorageMemory)
			const n = 2000
			e.publish(t, n)
			c := e.consumer(t, jsapi.ConsumerConfig{AckPolicy: tc.ack})
			before := e.nc.Stats().InlineBatches
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
			got := e.nc.Stats().InlineBatches - before
			if tc.inline && got == 0 {
				t.Fatalf("the loop never read the socket itself over %d messages", n)
			}
			if !tc.inline && got != 0 {
				t.Fatalf("the loop read the socket %d times", got)
			}
			if tc.ack != jsapi.AckNone {
				// The acks reached the server.
				if err := e.nc.Flush(e.ctx); err != nil {
					t.Fatal(err)
				}
				info, err := c.Info(e.ctx)
				if err != nil {
					t.Fatal(err)
				}
				if info.NumAckPending != 0 || info.NumPending != 0 {
					t.Fatalf("ack pending %d, pending %d", info.NumAckPending, info.NumPending)
				}
			}
		})
	}
}

// ReadAhead is an option of Messages only.
func TestReadAheadIsForMessages(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	if _, err := c.Fetch(e.ctx, 1, pull.ReadAhead(true)); !errors.Is(err, pull.ErrInvalidOption) {
		t.Fatalf("Fetch with ReadAhead: %v", err)
	}
	if _, err := c.Next(e.ctx, pull.ReadAhead(false)); !errors.Is(err, pull.ErrInvalidOption) {
		t.Fatalf("Next with ReadAhead: %v", err)
	}
}
