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

// readThree starts a server with stream O holding messages 0-2, an
// attacker watching the pull requests, and an ordered read (checking
// stream sequences) that has received the three.
func readThree(t *testing.T) (*env, *testutil.PullSpy, *ordered.Consumer, *forgedRead) {
	t.Helper()
	e := newEnv(t, "memory")
	e.publish(t, "o.a", 3)
	spy := testutil.NewPullSpy(t, e.s.URL())
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	r := readForged(t, e.ctx, oc, true)
	r.receive(t, 3)
	return e, spy, oc, r
}

// Another tenant that watches $JS.API.CONSUMER.MSG.NEXT.> publishes plain
// messages to an ordered consumer's pull inbox. The read skips them,
// counts them (Skipped, OnSkip with pull.ErrStrayMessage), is not reset,
// and goes on reading the stream in order.
func TestForgedPlainMessageOrdered(t *testing.T) {
	e, spy, oc, r := readThree(t)
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

// Hostile suite: another tenant publishes each status a server may send to
// a pull onto an ordered consumer's pull inbox (every one the attacker has
// seen). None ends the read or recreates its server-side consumer: the
// pull engine underneath confirms the ones claiming a terminal condition
// (409 Consumer Deleted included) with consumer info, and the others end
// one pull at most, after which it pulls again. The read goes on in order.
func TestForgedStatusesDoNotEndOrdered(t *testing.T) {
	statuses := []struct{ name, header string }{
		{"400 Bad Request", "NATS/1.0 400 Bad Request\r\n\r\n"},
		{"409 Consumer is push based", "NATS/1.0 409 Consumer is push based\r\n\r\n"},
		{"409 Exceeded MaxRequestBatch", "NATS/1.0 409 Exceeded MaxRequestBatch of 1\r\n\r\n"},
		{"409 Exceeded MaxRequestExpires", "NATS/1.0 409 Exceeded MaxRequestExpires of 1s\r\n\r\n"},
		{"409 Message Size Exceeds MaxBytes", "NATS/1.0 409 Message Size Exceeds MaxBytes\r\nNats-Pending-Messages: 10\r\nNats-Pending-Bytes: 0\r\n\r\n"},
		{"412 Required Api Level", "NATS/1.0 412 Required Api Level\r\n\r\n"},
		{"418 unknown", "NATS/1.0 418 I'm a teapot\r\n\r\n"},
		{"409 Consumer Deleted", "NATS/1.0 409 Consumer Deleted\r\n\r\n"},
		{"409 Leadership Change", "NATS/1.0 409 Leadership Change\r\n\r\n"},
		{"503 No Responders", "NATS/1.0 503\r\n\r\n"},
		{"404 No Messages", "NATS/1.0 404 No Messages\r\n\r\n"},
		{"408 Request Timeout", "NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 1\r\nNats-Pending-Bytes: 0\r\n\r\n"},
	}
	for _, fs := range statuses {
		t.Run(fs.name, func(t *testing.T) {
			e, spy, _, r := readThree(t)
			replies := append([]string{spy.NextPull(t)}, spy.Seen()...)
			for _, reply := range replies {
				rawPublish(t, e.s.URL(), reply, fs.header, 1)
			}
			e.publish(t, "o.a", 3)
			r.receive(t, 3)
			select {
			case it := <-r.items:
				t.Fatalf("after the forged status the read yielded %+v", it)
			default:
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			if len(r.resets) != 0 {
				t.Fatalf("the ordered consumer was recreated for the forged status: %v", r.resets)
			}
			t.Logf("OUTCOME ordered | %s | goes on in order, not recreated", fs.name)
		})
	}
}
