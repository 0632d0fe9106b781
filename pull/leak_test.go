package pull_test

import (
	"context"
	"testing"
	"time"

	"github.com/natsio/natsio/internal/leakcheck"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pull"
)

// Fetch, Next, a Messages loop left by break and one blocked when the
// connection closes leave no goroutine of natsio running.
func TestNoGoroutineLeak(t *testing.T) {
	s := natstest.NewServer(t)
	before := leakcheck.Snapshot()
	e := envOn(t, s, s.URL(), jsapi.StorageMemory)
	e.publish(t, 20)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	msgs, err := c.Fetch(e.ctx, 5)
	if err != nil || len(msgs) != 5 {
		t.Fatalf("fetch: %d %v", len(msgs), err)
	}
	for _, m := range msgs {
		m.Ack()
	}
	m, err := c.Next(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	m.AckSync(e.ctx)
	for m, err := range c.Messages(e.ctx, pull.MaxMessages(5), pull.Heartbeat(100*time.Millisecond), pull.Expires(time.Second)) {
		if err != nil {
			t.Fatal(err)
		}
		m.Ack()
		break
	}
	ctx, cancel := context.WithTimeout(e.ctx, 20*time.Second)
	defer cancel()
	done := make(chan struct{})
	started := make(chan struct{})
	go func() {
		defer close(done)
		first := true
		for m, err := range c.Messages(ctx, pull.Heartbeat(100*time.Millisecond), pull.Expires(time.Second)) {
			if err != nil {
				return
			}
			m.Ack()
			if first {
				first = false
				close(started)
			}
		}
	}()
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("Messages delivered nothing")
	}
	e.nc.Close()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("Messages did not end when the connection closed")
	}
	leakcheck.Wait(t, before, 10*time.Second)
}
