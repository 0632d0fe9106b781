package ordered_test

// Helpers of the fault tests: an ordered consumer read in the background,
// a publish stored once across faults, the reasons given for resets, the
// JetStream API requests a server has served.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/ordered"
)

// reader runs Messages in the background and hands over stream sequences.
func startReader(t *testing.T, ctx context.Context, oc *ordered.Consumer, opts ...ordered.Opt) (<-chan uint64, <-chan error) {
	t.Helper()
	got := make(chan uint64, 1000)
	done := make(chan error, 1)
	go func() {
		for m, err := range oc.Messages(ctx, opts...) {
			if err != nil {
				done <- err
				return
			}
			md, _ := m.Metadata()
			got <- md.StreamSeq
		}
		done <- nil
	}()
	return got, done
}

// expectSeqs waits for the stream sequences from..to, in order.
func expectSeqs(t *testing.T, ctx context.Context, got <-chan uint64, done <-chan error, from, to uint64) {
	t.Helper()
	for want := from; want <= to; want++ {
		select {
		case seq := <-got:
			if seq != want {
				t.Fatalf("got stream seq %d, want %d", seq, want)
			}
		case err := <-done:
			t.Fatalf("Messages ended at %d: %v", want, err)
		case <-ctx.Done():
			t.Fatalf("stream seq %d never delivered", want)
		}
	}
}

// startHandoffReader runs Messages in the background and hands each stream
// sequence over an unbuffered channel: the iterator is parked in yield until
// the test takes the message, so the consumer is read at the test's pace
// and a fault can hit it mid-stream with pulls outstanding.
func startHandoffReader(ctx context.Context, oc *ordered.Consumer, opts ...ordered.Opt) (<-chan uint64, <-chan error) {
	got := make(chan uint64)
	done := make(chan error, 1)
	go func() {
		for m, err := range oc.Messages(ctx, opts...) {
			if err != nil {
				done <- err
				return
			}
			md, _ := m.Metadata()
			select {
			case got <- md.StreamSeq:
			case <-ctx.Done():
				// Keep ranging: the iterator yields ctx's error next.
			}
		}
		done <- nil
	}()
	return got, done
}

// publishOnce stores one message with message ID id, retrying across a
// reconnect or an election: the same ID makes the stream store it once.
func publishOnce(t *testing.T, ctx context.Context, js *jsapi.JS, subj, id string) uint64 {
	t.Helper()
	for {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		ack, err := testutil.Retrying(t, js, 20, 50*time.Millisecond).Publish(actx, subj, []byte(id), jsapi.MsgID(id))
		cancel()
		if err == nil {
			return ack.Sequence
		}
		if ctx.Err() != nil {
			t.Fatalf("publish %s: %v", id, err)
		}
	}
}

// resetLog records the reasons an ordered consumer gives for recreating
// itself.
type resetLog struct {
	mu      sync.Mutex
	reasons []error
}

func (l *resetLog) add(err error) {
	l.mu.Lock()
	l.reasons = append(l.reasons, err)
	l.mu.Unlock()
}

func (l *resetLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprint(l.reasons)
}

// jsAPITotal returns the JetStream API requests the server received since
// it started.
func jsAPITotal(t *testing.T, s *natstest.Server) uint64 {
	t.Helper()
	srv := s.Server()
	if srv == nil {
		t.Fatal("server not running")
	}
	info, err := srv.Jsz(&server.JSzOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return info.API.Total
}
