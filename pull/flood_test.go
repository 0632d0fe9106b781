package pull

// Hostile suite: a context's deadline ends Fetch, Next and a Messages loop
// while messages keep arriving. Another tenant floods the victim's pull
// inbox (learned from $JS.API.CONSUMER.MSG.NEXT.>) with plain messages,
// which the reads skip as not delivered by the server (ErrStrayMessage):
// a read that took what is queued before it looked at its context would
// never end. Each read must end by its deadline; the test logs the time
// from the deadline to the return.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/internal/testutil"
)

// floodDeadline is the reads' deadline; a read that has not returned
// floodPatience after it has failed to end by its context.
const (
	floodDeadline = 300 * time.Millisecond
	floodPatience = 10 * time.Second
)

// flood publishes plain messages to subject from a raw connection of its
// own until the test ends.
func flood(t *testing.T, url, subject string) {
	t.Helper()
	c, _ := testutil.RawConn(t, url, time.Minute)
	chunk := []byte(strings.Repeat("PUB "+subject+" 5\r\nflood\r\n", 256))
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { close(done); c.Close(); <-stopped })
}

// lateness runs read with a floodDeadline context while the inbox of its
// first pull is flooded, and returns how long after the deadline it
// returned.
func lateness(t *testing.T, e *forgeEnv, read func(ctx context.Context) error) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, floodDeadline)
	defer cancel()
	deadline, _ := ctx.Deadline()
	done := make(chan error, 1)
	go func() { done <- read(ctx) }()
	flood(t, e.url, e.spy.NextPull(t))
	select {
	case err := <-done:
		late := time.Since(deadline)
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("ended with %v", err)
		}
		return late
	case <-time.After(floodDeadline + floodPatience):
		t.Fatalf("still running %v after its deadline, under a flood", floodPatience)
		return 0
	}
}

// backlog stores n small messages in the stream (core publishes, then a
// round trip), so that a read always has more coming.
func (e *forgeEnv) backlog(t *testing.T, n int) {
	t.Helper()
	for range n {
		if err := e.nc.Publish("s.x", []byte("backlog")); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.nc.Flush(e.ctx); err != nil {
		t.Fatal(err)
	}
}

// work stands for a loop body that takes a while per message.
func work() {
	for t0 := time.Now(); time.Since(t0) < 100*time.Microsecond; {
	}
}

// A Messages loop whose body takes 100 µs per message and acknowledges it,
// over a backlog far larger than it can read by its deadline: the server
// keeps delivering, so the queue is never empty; the loop still ends by
// its deadline, yielding at most the message it had checked the context
// for as the context ended.
func TestFloodDeadlineEndsMessagesOverABacklog(t *testing.T) {
	e := newForgeEnv(t)
	e.backlog(t, 50_000)
	ctx, cancel := context.WithTimeout(e.ctx, floodDeadline)
	defer cancel()
	deadline, _ := ctx.Deadline()
	n, after := 0, 0
	var end error
	for m, err := range e.c.Messages(ctx) {
		if err != nil {
			end = err
			break
		}
		n++
		if ctx.Err() != nil {
			after++ // yielded once its context was done
		}
		work()
		m.Ack()
		if time.Since(deadline) > floodPatience {
			t.Fatalf("still yielding %v after the deadline", floodPatience)
		}
	}
	late := time.Since(deadline)
	if !errors.Is(end, context.DeadlineExceeded) {
		t.Fatalf("ended with %v after %d messages", end, n)
	}
	if after > 1 {
		t.Fatalf("yielded %d messages once its context was done (returned %v after the deadline)", after, late)
	}
	t.Logf("FLOOD Messages over a backlog (100 µs a message) returned %v after its deadline, having yielded %d of 50000", late.Round(time.Millisecond), n)
}

func TestFloodDeadlineEndsReads(t *testing.T) {
	reads := []struct {
		name string
		read func(c *Consumer, ctx context.Context) error
	}{
		{"Fetch", func(c *Consumer, ctx context.Context) error {
			_, err := c.Fetch(ctx, 1000)
			return err
		}},
		{"Next", func(c *Consumer, ctx context.Context) error {
			_, err := c.Next(ctx)
			return err
		}},
		{"Messages", func(c *Consumer, ctx context.Context) error {
			for _, err := range c.Messages(ctx) {
				if err != nil {
					return err
				}
			}
			return nil
		}},
	}
	for _, r := range reads {
		t.Run(r.name, func(t *testing.T) {
			e := newForgeEnv(t)
			late := lateness(t, e, func(ctx context.Context) error { return r.read(e.c, ctx) })
			t.Logf("FLOOD %s returned %v after its deadline (%d flood messages skipped)", r.name, late.Round(time.Millisecond), e.c.Stats().Skipped)
		})
	}
}
