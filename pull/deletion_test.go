package pull_test

// A consumer or its stream gone under a consume loop or a Fetch — deleted,
// removed by the server for inactivity, lost in a restart: the loop or the
// Fetch ends with a terminal error instead of healing or reporting missed
// heartbeats forever.

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pull"
)

// F18: the stream is deleted under a consume loop. Messages ends with a
// terminal error — the stream or its consumer is gone — instead of healing
// forever, and it leaves no loop of API requests behind; Fetch on the
// consumer fails the same way.
func TestMessagesEndsOnStreamDelete(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	e.publish(t, 3)
	apiTotal := func() uint64 {
		info, err := e.s.Server().Jsz(&server.JSzOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return info.API.Total
	}
	terminal := func(err error) bool {
		return errors.Is(err, jsapi.ErrStreamNotFound) || errors.Is(err, pull.ErrConsumerDeleted)
	}
	got := 0
	var last error
	for m, err := range c.Messages(e.ctx, pull.Expires(2*time.Second), pull.Heartbeat(500*time.Millisecond)) {
		if err != nil {
			last = err
			break
		}
		m.Ack()
		if got++; got == 3 {
			if err := e.js.DeleteStream(e.ctx, "S"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !terminal(last) {
		t.Fatalf("Messages ended with %v, want ErrStreamNotFound or ErrConsumerDeleted", last)
	}
	t.Logf("Messages ended with %v", last)
	// Nothing keeps asking the server once the loop has ended.
	before := apiTotal()
	time.Sleep(time.Second) // an observation window, not synchronisation
	if n := apiTotal() - before; n > 2 {
		t.Fatalf("%d JetStream API requests in the second after the loop ended", n)
	}
	if _, err := c.Fetch(e.ctx, 1); !terminal(err) {
		t.Fatalf("Fetch after the stream's deletion: %v", err)
	}
}

func TestFetchConsumerDeletedInFlight(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(e.ctx, 20*time.Second)
		defer cancel()
		_, err := c.Fetch(ctx, 10)
		errc <- err
	}()
	waitWaiting(t, e, c, 1)
	if err := e.js.DeleteConsumer(e.ctx, "S", "C"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, pull.ErrConsumerDeleted) {
			t.Fatalf("fetch ended with %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("fetch did not end when its consumer was deleted")
	}
}

// nats.go#1900: a named consumer with a short InactiveThreshold is deleted
// by the server while the link to it is stalled (its pulls expire, nobody
// pulls). Once the link works again, Messages must end with the terminal
// pull.ErrConsumerDeleted (the re-pull finds no responder and the consumer
// lookup says it is gone) instead of looping forever on missed heartbeats.
func TestRegressionNatsGo1900InactiveThresholdDeletionSurfaced(t *testing.T) {
	s := natstest.NewServer(t)
	p := testutil.Proxy(t, s.URL())
	e := envOn(t, s, p.URL(), jsapi.StorageMemory) // the consumer's side, proxied
	admin := envOn(t, s, s.URL(), jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{Durable: "C", InactiveThreshold: time.Second})
	admin.publish(t, 5)

	const hb = 500 * time.Millisecond
	var reports errLog
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	got, done := consume(ctx, c, pull.Expires(time.Second), pull.Heartbeat(hb), reports.opt())
	expectRange(t, ctx, got, done, 1, 5) // all acknowledged: nothing keeps the consumer alive

	p.Stall(faultproxy.Up, true)
	p.Stall(faultproxy.Down, true)
	stalledAt := time.Now()
	waitUntil(t, 15*time.Second, "the server to delete the inactive consumer", func() bool {
		ictx, icancel := context.WithTimeout(ctx, 2*time.Second)
		defer icancel()
		_, err := admin.js.Consumer(ictx, "S", "C")
		return errors.Is(err, jsapi.ErrConsumerNotFound)
	})
	t.Logf("consumer deleted %v into the stall", time.Since(stalledAt))
	select {
	case err := <-done:
		t.Fatalf("Messages ended while the link was stalled: %v", err)
	default:
	}
	p.Stall(faultproxy.Up, false)
	p.Stall(faultproxy.Down, false)
	liftedAt := time.Now()

	select {
	case err := <-done:
		if !errors.Is(err, pull.ErrConsumerDeleted) {
			t.Fatalf("Messages ended with %v, want pull.ErrConsumerDeleted", err)
		}
		t.Logf("terminal %v, %v after the stall was lifted; reports: %v", err, time.Since(liftedAt), reports.String())
	case seq := <-got:
		t.Fatalf("stream seq %d delivered by a deleted consumer", seq)
	case <-time.After(10 * time.Second):
		t.Fatalf("no terminal error 10s after the stall, reports: %v (%d missed heartbeats)",
			reports.String(), reports.count(pull.ErrNoHeartbeat))
	}
}

// F03 (b): a durable pull consumer of a MEMORY stream; the server restarts
// and both are gone. Messages must not go silent: it ends with the
// terminal jsapi.ErrStreamNotFound soon after the reconnect.
func TestDurableOnLostMemoryStreamSurfaced(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	e.publish(t, 3)
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	var reports errLog
	var reconnects atomic.Int32
	defer e.nc.OnReconnect(func() { reconnects.Add(1) })()
	got, done := consume(ctx, c, pull.Expires(time.Second), pull.Heartbeat(200*time.Millisecond), reports.opt())
	expectRange(t, ctx, got, done, 1, 3)

	if err := e.s.Restart(); err != nil {
		t.Fatal(err)
	}
	restartedAt := time.Now()
	select {
	case err := <-done:
		if !errors.Is(err, jsapi.ErrStreamNotFound) {
			t.Fatalf("Messages ended with %v, want jsapi.ErrStreamNotFound", err)
		}
		t.Logf("terminal %v, %v after the restart (%d reconnects); reports: %v", err, time.Since(restartedAt), reconnects.Load(), reports.String())
	case seq := <-got:
		t.Fatalf("stream seq %d delivered from a lost stream", seq)
	case <-time.After(10 * time.Second):
		t.Fatalf("Messages silent 10s after losing its stream; reports: %v", reports.String())
	}
	if reconnects.Load() == 0 {
		t.Fatal("ended without the restart being seen as a reconnect")
	}
}
