package pull_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// F21: every status the server sends to a pull maps to a typed error, and
// the terminal ones end Messages.
func TestPullStatuses(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, 30)

	// 409 Exceeded MaxRequestBatch: terminal, typed.
	c := e.consumer(t, jsapi.ConsumerConfig{Durable: "batch10", MaxRequestBatch: 10})
	_, err := c.Fetch(e.ctx, 20)
	var se *jsapi.StatusError
	if !errors.As(err, &se) || se.Code != 409 || !errors.Is(err, pull.ErrBadPull) || !terminalStatus(se) {
		t.Fatalf("fetch above max_batch: %v", err)
	}
	for _, err := range c.Messages(e.ctx, pull.MaxMessages(20)) {
		if !errors.Is(err, pull.ErrBadPull) {
			t.Fatalf("Messages above max_batch ended with %v", err)
		}
		break
	}

	// 409 Exceeded MaxRequestExpires: terminal.
	c = e.consumer(t, jsapi.ConsumerConfig{Durable: "exp1s", MaxRequestExpires: time.Second})
	ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
	defer cancel()
	if _, err := c.Fetch(ctx, 1); !errors.Is(err, pull.ErrBadPull) {
		t.Fatalf("fetch above max_expires: %v", err)
	}

	// 409 Exceeded MaxWaiting: reported, not terminal; the waiting pull
	// still gets its messages.
	c = e.consumer(t, jsapi.ConsumerConfig{Durable: "wait1", MaxWaiting: 1, DeliverPolicy: jsapi.DeliverNew})
	var wg sync.WaitGroup
	var first []*jsapi.Msg
	var firstErr error
	wctx, wcancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer wcancel()
	wg.Go(func() { first, firstErr = c.Fetch(wctx, 1) })
	waitWaiting(t, e, c, 1)
	if _, err := c.Fetch(e.ctx, 1); !errors.Is(err, pull.ErrMaxWaiting) {
		t.Fatalf("second pull over max_waiting: %v", err)
	} else if errors.As(err, &se) && terminalStatus(se) {
		t.Fatal("Exceeded MaxWaiting must not be terminal")
	}
	e.publish(t, 1)
	wg.Wait()
	if firstErr != nil || len(first) != 1 {
		t.Fatalf("the waiting pull: %d %v", len(first), firstErr)
	}

	// 404 with no_wait on an empty consumer: ErrNoMessages.
	c = e.consumer(t, jsapi.ConsumerConfig{Durable: "empty", DeliverPolicy: jsapi.DeliverNew})
	msgs, err := c.Fetch(e.ctx, 5, pull.NoWait())
	if err != nil || len(msgs) != 0 {
		t.Fatalf("no-wait on empty: %d %v", len(msgs), err)
	}
}

// terminalStatus reports whether se claims a condition that ends a read
// (consumer deleted, push based, pull rejected), which a read confirms
// with consumer info before it ends.
func terminalStatus(se *jsapi.StatusError) bool {
	return errors.Is(se, pull.ErrConsumerDeleted) || errors.Is(se, pull.ErrPushConsumer) || errors.Is(se, pull.ErrBadPull)
}
