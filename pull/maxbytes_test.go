package pull_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// countPulls counts the pull requests the server receives for consumer C
// of stream S (seen by a subscription on the pull subject).
func countPulls(t *testing.T, e *env) *atomic.Int32 {
	t.Helper()
	var n atomic.Int32
	if _, err := e.nc.SubscribeInlineUnsafe("$JS.API.CONSUMER.MSG.NEXT.S.C", func(*conn.Msg) { n.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if err := e.nc.Flush(e.ctx); err != nil {
		t.Fatal(err)
	}
	return &n
}

// A message larger than MaxBytes can never be pulled with that MaxBytes:
// Fetch returns what fit and then ErrMessageTooLarge. Messages does not
// end for it (the status ends one pull, and anyone who learns the pull's
// reply subject can publish it): it reports ErrMessageTooLarge to OnError
// for each pull that meets the message, and pulls again after a pause, one
// pull per report — not silently, and not in a loop that hammers the
// server (taken for an expired pull, it pulled 36,000 times in 2 s).
func TestMessageLargerThanMaxBytes(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	for _, size := range []int{10, 10, 1024} {
		if _, err := e.js.Publish(e.ctx, "s.x", make([]byte, size)); err != nil {
			t.Fatal(err)
		}
	}
	c := e.consumer(t, jsapi.ConsumerConfig{})
	pulls := countPulls(t, e)

	msgs, err := c.Fetch(e.ctx, 10, pull.FetchMaxBytes(300))
	if err != nil || len(msgs) != 2 {
		t.Fatalf("fetch: %d messages, %v; want the 2 small ones", len(msgs), err)
	}
	for _, m := range msgs {
		m.Ack()
	}
	msgs, err = c.Fetch(e.ctx, 10, pull.FetchMaxBytes(300))
	var se *jsapi.StatusError
	if len(msgs) != 0 || !errors.Is(err, pull.ErrMessageTooLarge) || !errors.As(err, &se) || se.Code != 409 {
		t.Fatalf("fetch of the large one: %d messages, %v; want ErrMessageTooLarge (409)", len(msgs), err)
	}

	ctx, cancel := context.WithTimeout(e.ctx, 20*time.Second)
	defer cancel()
	before := pulls.Load()
	var tooLarge atomic.Int32
	mctx, mcancel := context.WithCancel(ctx)
	n := 0
	var end error
	for _, err := range c.Messages(mctx, pull.MaxBytes(300), pull.OnError(func(err error) {
		if errors.Is(err, pull.ErrMessageTooLarge) && tooLarge.Add(1) == 3 {
			mcancel()
		}
	})) {
		if err != nil {
			end = err
			break
		}
		n++
	}
	mcancel()
	if n != 0 || !errors.Is(end, context.Canceled) || ctx.Err() != nil {
		t.Fatalf("Messages yielded %d and ended with %v; want it to go on until stopped", n, end)
	}
	if p, r := pulls.Load()-before, tooLarge.Load(); p > r+1 {
		t.Fatalf("Messages sent %d pulls for %d ErrMessageTooLarge reports; want one each", p, r)
	}

	// A MaxBytes that fits takes it.
	msgs, err = c.Fetch(e.ctx, 1, pull.FetchMaxBytes(4096))
	if err != nil || len(msgs) != 1 || len(msgs[0].Data) != 1024 {
		t.Fatalf("fetch with room: %d messages, %v", len(msgs), err)
	}
}

// A message that fits MaxBytes but not what is left of a pull that has
// already delivered part of its budget ends only that pull (409 with part
// of the budget unused): Messages pulls again and delivers it.
func TestMessageLargerThanWhatIsLeftOfAPull(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	for _, size := range []int{500, 500, 500, 500, 2000} {
		if _, err := e.js.Publish(e.ctx, "s.x", make([]byte, size)); err != nil {
			t.Fatal(err)
		}
	}
	c := e.consumer(t, jsapi.ConsumerConfig{})
	ctx, cancel := context.WithTimeout(e.ctx, 20*time.Second)
	defer cancel()
	var sizes []int
	for m, err := range c.Messages(ctx, pull.MaxBytes(3000)) {
		if err != nil {
			t.Fatalf("Messages ended after %v: %v", sizes, err)
		}
		m.Ack()
		if sizes = append(sizes, len(m.Data)); len(sizes) == 5 {
			break
		}
	}
	if sizes[4] != 2000 {
		t.Fatalf("got %v", sizes)
	}
}
