package conn_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/natsio/natsio/conn"
)

func TestNextBatch(t *testing.T) {
	s := coreServer(t)
	nc := connect(t, s.URL())
	ctx := ctxT(t)
	sub, err := nc.Subscribe("nb")
	if err != nil {
		t.Fatal(err)
	}

	// A done context ends it: nothing queued yet.
	done, cancel := context.WithCancel(ctx)
	cancel()
	if b, err := sub.NextBatch(done, nil); len(b) != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("done ctx, empty queue: %d messages, %v", len(b), err)
	}

	for i := range 100 {
		nc.Publish("nb", fmt.Appendf(nil, "%d", i))
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// A done context ends it with messages queued too.
	if b, err := sub.NextBatch(done, nil); len(b) != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("done ctx, messages queued: %d messages, %v", len(b), err)
	}
	var batch []*conn.Msg
	got := 0
	for got < 100 {
		batch, err = sub.NextBatch(ctx, batch)
		if err != nil {
			t.Fatalf("after %d: %v", got, err)
		}
		for _, m := range batch {
			if want := fmt.Sprint(got); string(m.Data) != want {
				t.Fatalf("message %q, want %q", m.Data, want)
			}
			got++
		}
	}
	if n, _ := sub.Pending(); n != 0 {
		t.Fatalf("%d still queued", n)
	}

	// Not while an iterator consumes the subscription.
	it := make(chan struct{})
	go func() {
		defer close(it)
		for range sub.Messages(ctx) {
			return
		}
	}()
	eventually(t, "the iterator to start", func() bool {
		_, err := sub.NextBatch(done, nil)
		return errors.Is(err, conn.ErrSubscriptionActive)
	})
	nc.Publish("nb", []byte("x"))
	<-it

	// The end of the subscription, once the queue is empty.
	nc.Publish("nb", []byte("last"))
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	if b, err := sub.NextBatch(ctx, nil); err != nil || len(b) != 1 || string(b[0].Data) != "last" {
		t.Fatalf("after unsubscribe: %d messages, %v", len(b), err)
	}
	if _, err := sub.NextBatch(ctx, nil); !errors.Is(err, conn.ErrBadSubscription) {
		t.Fatalf("ended subscription: %v, want ErrBadSubscription", err)
	}
	var noCtx context.Context
	if _, err := sub.NextBatch(noCtx, nil); !errors.Is(err, conn.ErrNilContext) {
		t.Fatalf("nil context: %v", err)
	}
}
