package pull_test

import (
	"context"
	"errors"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pubwin"
)

// A call made with a context that is already done sends nothing: no
// request reaches a responder, no message reaches the stream, no pull
// reaches the consumer (a pull sent then would leave messages delivered to
// nobody until their ack wait ran out). Each fails with the context's
// error.
func TestDeadContextSendsNothing(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, 3)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	var seen []string
	if _, err := e.nc.SubscribeInlineUnsafe(">", func(m *conn.Msg) { seen = append(seen, m.Subject) }); err != nil {
		t.Fatal(err)
	}
	if err := e.nc.Flush(e.ctx); err != nil {
		t.Fatal(err)
	}
	dead, cancel := context.WithCancel(context.Background())
	cancel()
	w, err := pubwin.New(e.js)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	calls := map[string]func() error{
		"Request":        func() error { _, err := e.nc.Request(dead, "svc.x", nil); return err },
		"Flush":          func() error { return e.nc.Flush(dead) },
		"jsapi.Publish":  func() error { _, err := e.js.Publish(dead, "s.x", []byte("late")); return err },
		"pull.Fetch":     func() error { _, err := c.Fetch(dead, 3); return err },
		"pubwin.Publish": func() error { _, err := w.Publish(dead, "s.x", []byte("late")); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a dead ctx: %v, want context.Canceled", name, err)
		}
	}
	if err := e.nc.Flush(e.ctx); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 0 {
		t.Fatalf("sent with a dead ctx: %v", seen)
	}
	info, err := c.Info(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.NumAckPending != 0 || info.NumPending != 3 || info.Delivered.Consumer != 0 {
		t.Fatalf("consumer after a dead-ctx Fetch: %d pending, %d ack pending, %d delivered",
			info.NumPending, info.NumAckPending, info.Delivered.Consumer)
	}
	// Live contexts still work.
	if msgs, err := c.Fetch(e.ctx, 3); err != nil || len(msgs) != 3 {
		t.Fatalf("fetch: %d %v", len(msgs), err)
	}
}
