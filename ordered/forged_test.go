package ordered_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/ordered"
	"github.com/natsio/natsio/pull"
)

// rawPublish sends HPUBs with a raw header block (a status line, which
// no client's header type writes) times over a TCP connection of its own
// and waits for the server's PONG, so the messages have been routed when
// it returns.
func rawPublish(t *testing.T, url, subject, hdr string, times int) {
	t.Helper()
	c, r := testutil.RawConn(t, url, 30*time.Second)
	defer c.Close()
	var b strings.Builder
	for range times {
		fmt.Fprintf(&b, "HPUB %s %d %d\r\n%s\r\n", subject, len(hdr), len(hdr), hdr)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	testutil.AwaitPong(t, c, r)
}

// forgedRead reads an ordered consumer in a goroutine until the test
// ends, recording the reasons given to OnReset and OnSkip.
type forgedRead struct {
	items    chan forgedItem
	checkSeq bool   // receive also wants consecutive stream sequences
	seq      uint64 // the stream sequence receive wants next
	mu       sync.Mutex
	resets   []error
	skips    []error
}

type forgedItem struct {
	data string
	seq  uint64
	err  error
}

func readForged(t *testing.T, ctx context.Context, oc *ordered.Consumer, checkSeq bool) *forgedRead {
	r := &forgedRead{items: make(chan forgedItem, 64), checkSeq: checkSeq, seq: 1}
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	opts := []ordered.Opt{ordered.OnReset(func(reason error) {
		r.mu.Lock()
		r.resets = append(r.resets, reason)
		r.mu.Unlock()
	})}
	if checkSeq {
		opts = append(opts, ordered.OnSkip(func(reason error) {
			r.mu.Lock()
			r.skips = append(r.skips, reason)
			r.mu.Unlock()
		}))
	}
	go func() {
		defer close(r.items)
		for m, err := range oc.Messages(ctx, opts...) {
			it := forgedItem{err: err}
			if m != nil {
				it.data = string(m.Data)
				if checkSeq {
					md, _ := m.Metadata()
					it.seq = md.StreamSeq
				}
			}
			r.items <- it
		}
	}()
	return r
}

// receive fails the test unless the next n messages hold 0 to n-1 (and,
// with checkSeq, the next stream sequences).
func (r *forgedRead) receive(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		select {
		case it := <-r.items:
			if r.checkSeq {
				if it.err != nil || it.data != fmt.Sprint(i) || it.seq != r.seq {
					t.Fatalf("yielded %q (stream seq %d) %v; want %d (stream seq %d)", it.data, it.seq, it.err, i, r.seq)
				}
				r.seq++
			} else if it.err != nil || it.data != fmt.Sprint(i) {
				t.Fatalf("yielded %q %v; want %d", it.data, it.err, i)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("message %d did not arrive", i)
		}
	}
}

// Another tenant that watches $JS.API.CONSUMER.MSG.NEXT.> publishes
// "409 Consumer Deleted" to an ordered consumer's pull inbox. The pull
// engine under the ordered consumer confirms such a status with consumer
// info before acting on it, so the ordered consumer neither ends nor
// recreates its server-side consumer, and goes on reading.
func TestForgedConsumerDeletedOrdered(t *testing.T) {
	e := newEnv(t, "memory")
	e.publish(t, "o.a", 3)
	spy := testutil.NewPullSpy(t, e.s.URL())

	oc := newOrdered(t, e.js, "O", ordered.Config{})
	r := readForged(t, e.ctx, oc, false)
	r.receive(t, 3)
	reply := spy.NextPull(t)
	rawPublish(t, e.s.URL(), reply, "NATS/1.0 409 Consumer Deleted\r\n\r\n", 5)
	e.publish(t, "o.a", 3)
	r.receive(t, 3)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.resets) != 0 {
		t.Fatalf("the ordered consumer was reset by the forged status: %v", r.resets)
	}
}

// Another tenant that watches $JS.API.CONSUMER.MSG.NEXT.> publishes plain
// messages to an ordered consumer's pull inbox. The read skips them,
// counts them (Skipped, OnSkip with pull.ErrStrayMessage), is not reset,
// and goes on reading the stream in order.
func TestForgedPlainMessageOrdered(t *testing.T) {
	e := newEnv(t, "memory")
	e.publish(t, "o.a", 3)
	spy := testutil.NewPullSpy(t, e.s.URL())

	oc := newOrdered(t, e.js, "O", ordered.Config{})
	r := readForged(t, e.ctx, oc, true)
	r.receive(t, 3)
	reply := spy.NextPull(t)
	forged := spy.Publish(t, reply, []byte("forged"), testutil.PlainForgeries("O", "C")...)
	e.publish(t, "o.a", 3)
	r.receive(t, 3)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.resets) != 0 {
		t.Fatalf("the ordered consumer was reset by the forged messages: %v", r.resets)
	}
	if oc.Skipped() != uint64(forged) || len(r.skips) != forged {
		t.Fatalf("Skipped %d, %d OnSkip calls; want %d", oc.Skipped(), len(r.skips), forged)
	}
	for _, reason := range r.skips {
		if !errors.Is(reason, pull.ErrStrayMessage) {
			t.Fatalf("OnSkip reason %v; want pull.ErrStrayMessage", reason)
		}
	}
}
