package ordered_test

// The ordered consumer across a server restart: a file-store stream is
// read on in order after a hard restart; a memory stream lost in the
// restart ends it with a terminal error, without a recreation loop.
// Against a real embedded server.

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
)

// nats.go#1370: an ordered consumer reading a file-store stream survives a
// hard server restart (same port, same store dir) in the middle of the
// stream. Its ephemeral consumer is gone after the restart ("consumer not
// found"); that must lead to a recreation at the last delivered sequence
// + 1, never to a terminal error. Every stream sequence 1..N arrives
// exactly once and in order, pre-restart backlog and post-restart
// publishes alike.
func TestRegressionNatsGo1370OrderedAfterHardRestart(t *testing.T) {
	e := newEnv(t, jsapi.StorageFile)
	const before, after = 300, 50
	e.publish(t, "o.a", before)
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	var resets resetLog
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	got, done := startHandoffReader(ctx, oc, ordered.MaxMessages(10), ordered.Heartbeat(200*time.Millisecond), ordered.OnReset(resets.add))
	expectSeqs(t, ctx, got, done, 1, 100)

	// Mid-stream: the reader waits in yield with a pull outstanding.
	if err := e.s.Restart(); err != nil {
		t.Fatal(err)
	}
	expectSeqs(t, ctx, got, done, 101, before)
	for i := range after {
		if seq := publishOnce(t, ctx, e.js, "o.a", fmt.Sprint("post-", i)); seq != uint64(before+i+1) {
			t.Fatalf("post-restart publish %d stored at %d", i, seq)
		}
	}
	expectSeqs(t, ctx, got, done, before+1, before+after)
	// No duplicate is waiting either: the next thing delivered is the
	// next message published.
	publishOnce(t, ctx, e.js, "o.a", "tail")
	expectSeqs(t, ctx, got, done, before+after+1, before+after+1)
	if oc.Resets() == 0 {
		t.Fatalf("the consumer lost in the restart was never recreated (resets: %v)", resets.String())
	}
	t.Logf("%d resets: %v", oc.Resets(), resets.String())
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Messages ended with %v, want the context's error", err)
	}
}

// F03 (a): a MEMORY-storage stream does not survive a server restart. The
// ordered consumer reading it must end with a terminal
// jsapi.ErrStreamNotFound and must not spin recreating its consumer: the
// consumer-create requests the server sees (counted by a separate
// connection subscribed to $JS.API.CONSUMER.CREATE.>) and the JetStream
// API requests it served stay within a small bound over the seconds after
// the restart.
func TestMemoryStreamLostInRestartIsTerminal(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, "o.a", 5)
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	mon, err := conn.Connect(ctx, e.s.URL(), conn.ReconnectBackoff(10*time.Millisecond, 50*time.Millisecond), conn.ReconnectJitter(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	var creates atomic.Int64
	// Counted on the monitor's reader (SubscribeInline): after mon.Flush
	// every create the server sent before the PONG is counted.
	if _, err := mon.SubscribeInlineUnsafe("$JS.API.CONSUMER.CREATE.>", func(*conn.Msg) { creates.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if err := mon.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	var resets resetLog
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	got, done := startReader(t, ctx, oc, ordered.Heartbeat(100*time.Millisecond), ordered.OnReset(resets.add))
	expectSeqs(t, ctx, got, done, 1, 5)
	if err := mon.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := creates.Load(); n != 1 {
		t.Fatalf("%d consumer creates before the restart, want 1", n)
	}

	monReconnected := make(chan struct{}, 1)
	defer mon.OnReconnect(func() {
		select {
		case monReconnected <- struct{}{}:
		default:
		}
	})()
	if err := e.s.Restart(); err != nil {
		t.Fatal(err)
	} // the memory stream is gone
	restartedAt := time.Now()
	select {
	case <-monReconnected:
	case <-ctx.Done():
		t.Fatal("monitor connection did not reconnect")
	}
	base := creates.Load()

	var endErr error
	select {
	case endErr = <-done:
	case seq := <-got:
		t.Fatalf("delivered stream seq %d from a stream that no longer exists", seq)
	case <-ctx.Done():
		t.Fatalf("no terminal error after the stream was lost (resets %d: %v)", oc.Resets(), resets.String())
	}
	if !errors.Is(endErr, jsapi.ErrStreamNotFound) {
		t.Fatalf("Messages ended with %v, want jsapi.ErrStreamNotFound", endErr)
	}
	ended := time.Since(restartedAt)

	// Observe the server for a while after the end: nothing more may come.
	// A tight recreate loop would issue hundreds of requests here.
	const window = 2 * time.Second
	time.Sleep(window) // holding the observation window, not synchronising
	createsAfter := creates.Load() - base
	api := jsAPITotal(t, e.s)
	t.Logf("terminal %v after the restart; %d consumer creates seen, %d JS API requests served since the restart; resets %d",
		ended, createsAfter, api, oc.Resets())
	if createsAfter > 3 {
		t.Fatalf("%d consumer-create requests for a lost stream: recreate loop", createsAfter)
	}
	if api > 10 {
		t.Fatalf("%d JetStream API requests since the restart for a lost stream: retry loop", api)
	}
	if _, err := e.js.Stream(ctx, "O"); !errors.Is(err, jsapi.ErrStreamNotFound) {
		t.Fatalf("stream info after the restart: %v, the memory stream should be gone", err)
	}
}
