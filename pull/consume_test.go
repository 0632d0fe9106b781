package pull_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/leakcheck"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// handlerLog records handler calls and fails the test on a call that
// overlaps another or comes out of stream order.
type handlerLog struct {
	t       *testing.T
	calls   atomic.Int64
	running atomic.Bool
	lastSeq atomic.Uint64
}

func (h *handlerLog) enter(m *jsapi.Msg) uint64 {
	if !h.running.CompareAndSwap(false, true) {
		h.t.Error("handler calls overlap")
	}
	md, err := m.Metadata()
	if err != nil {
		h.t.Errorf("metadata: %v", err)
	}
	if last := h.lastSeq.Swap(md.StreamSeq); md.StreamSeq <= last {
		h.t.Errorf("stream seq %d after %d", md.StreamSeq, last)
	}
	h.calls.Add(1)
	return md.StreamSeq
}

func (h *handlerLog) leave() { h.running.Store(false) }

// waitClosed waits for the Consume to end, bounded by the test's context.
func waitClosed(t *testing.T, e *env, cc interface{ Closed() <-chan struct{} }) {
	t.Helper()
	select {
	case <-cc.Closed():
	case <-e.ctx.Done():
		t.Fatal("the Consume never ended")
	}
}

// Stop from outside while a handler call is under way: that call finishes
// and no other one starts; the messages requested and not handled stay
// unacknowledged at the server; Err is nil; no goroutine is left.
func TestConsumeStop(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{AckWait: time.Minute})
	e.publish(t, 50)
	before := leakcheck.Snapshot()
	h := &handlerLog{t: t}
	reached, release := make(chan struct{}), make(chan struct{})
	const k = 10
	cc, err := c.Consume(e.ctx, func(m *jsapi.Msg) {
		defer h.leave()
		h.enter(m)
		if err := m.AckSync(e.ctx); err != nil {
			t.Error(err)
		}
		if h.calls.Load() == k {
			close(reached)
			<-release
		}
	}, pull.MaxMessages(20))
	if err != nil {
		t.Fatal(err)
	}
	<-reached
	cc.Stop()
	if cc.Err() != nil {
		t.Fatalf("Err before the end: %v", cc.Err())
	}
	close(release)
	waitClosed(t, e, cc)
	if n := h.calls.Load(); n != k {
		t.Fatalf("%d handler calls, want %d (none after Stop)", n, k)
	}
	if err := cc.Err(); err != nil {
		t.Fatalf("Err after Stop: %v", err)
	}
	leakcheck.Wait(t, before, 5*time.Second)
	info, err := c.Info(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.AckFloor.Stream != k || info.NumAckPending == 0 {
		t.Fatalf("ack floor %d, %d awaiting acks; want %d and the unhandled rest", info.AckFloor.Stream, info.NumAckPending, k)
	}
	cc.Stop() // again: harmless
	cc.Drain()
}

// Stop from within the handler ends the Consume after that call.
func TestConsumeStopInHandler(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	e.publish(t, 30)
	h := &handlerLog{t: t}
	var cc *pull.ConsumeContext
	ready := make(chan struct{})
	cc, err := c.Consume(e.ctx, func(m *jsapi.Msg) {
		defer h.leave()
		<-ready
		h.enter(m)
		m.Ack()
		if h.calls.Load() == 5 {
			cc.Stop()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	close(ready)
	waitClosed(t, e, cc)
	if n := h.calls.Load(); n != 5 || cc.Err() != nil {
		t.Fatalf("%d handler calls, Err %v; want 5 and nil", n, cc.Err())
	}
}

// Drain: no pull after it, every message received by then is handled
// (none left unacknowledged), then the Consume ends with a nil Err. The
// same through DrainOn for Messages.
func TestConsumeDrain(t *testing.T) {
	for _, form := range []string{"Consume", "Messages"} {
		t.Run(form, func(t *testing.T) {
			e := newEnv(t, jsapi.StorageMemory)
			c := e.consumer(t, jsapi.ConsumerConfig{AckWait: time.Minute})
			const n = 50
			e.publish(t, n)
			before := leakcheck.Snapshot()
			in0 := e.nc.Stats().InMsgs
			h := &handlerLog{t: t}
			first, release := make(chan struct{}), make(chan struct{})
			handle := func(m *jsapi.Msg) {
				defer h.leave()
				h.enter(m)
				if h.calls.Load() == 1 {
					close(first)
					<-release
				}
				if err := m.Ack(); err != nil {
					t.Error(err)
				}
			}
			drain := make(chan struct{})
			var closed <-chan struct{}
			var errOf func() error
			switch form {
			case "Consume":
				cc, err := c.Consume(e.ctx, handle, pull.MaxMessages(100))
				if err != nil {
					t.Fatal(err)
				}
				go func() { <-drain; cc.Drain() }()
				closed, errOf = cc.Closed(), cc.Err
			case "Messages":
				done := make(chan struct{})
				var last error
				go func() {
					defer close(done)
					for m, err := range c.Messages(e.ctx, pull.MaxMessages(100), pull.DrainOn(drain)) {
						if err != nil {
							last = err
							return
						}
						handle(m)
					}
				}()
				closed, errOf = done, func() error { return last }
			}
			<-first
			// The connection has received all n (one pull of 100 asked
			// for them) before the drain starts: they are what it hands
			// over. (The server counts a message delivered before its
			// sending goroutine has passed it to the connection, so the
			// consumer's info cannot tell.)
			waitReceived(t, e, in0, n)
			pulls := c.Stats().Pulls
			close(drain)
			close(release)
			select {
			case <-closed:
			case <-e.ctx.Done():
				t.Fatal("the drain never ended")
			}
			if got := h.calls.Load(); got != n {
				t.Fatalf("%d of the %d received messages handled", got, n)
			}
			if err := errOf(); err != nil {
				t.Fatalf("ended with %v after a drain", err)
			}
			if p := c.Stats().Pulls; p != pulls {
				t.Fatalf("%d pulls sent during the drain", p-pulls)
			}
			leakcheck.Wait(t, before, 5*time.Second)
			waitAcked(t, e, c, n)
		})
	}
}

// waitReceived polls the connection's counter until it has received n
// messages since it counted in0 (it counts a message before its
// subscription holds it).
func waitReceived(t *testing.T, e *env, in0, n uint64) {
	t.Helper()
	for {
		got := e.nc.Stats().InMsgs - in0
		if got >= n {
			return
		}
		select {
		case <-e.ctx.Done():
			t.Fatalf("received %d of %d", got, n)
		case <-time.After(time.Millisecond): // polling interval
		}
	}
}

// The end of Consume's context ends it like Stop: Err is nil, nothing is
// left running.
func TestConsumeContextEnd(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	e.publish(t, 3)
	before := leakcheck.Snapshot()
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	h := &handlerLog{t: t}
	got := make(chan struct{}, 3)
	cc, err := c.Consume(ctx, func(m *jsapi.Msg) {
		defer h.leave()
		h.enter(m)
		m.Ack()
		got <- struct{}{}
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		<-got
	}
	cancel()
	waitClosed(t, e, cc)
	if err := cc.Err(); err != nil {
		t.Fatalf("Err after ctx's end: %v", err)
	}
	leakcheck.Wait(t, before, 5*time.Second)
}

// Terminal errors end the Consume and are its Err: the consumer deleted
// under it, the stream deleted, the connection closed.
func TestConsumeTerminal(t *testing.T) {
	cases := []struct {
		name string
		end  func(t *testing.T, e *env, c *pull.Consumer)
		want []error // any of
	}{
		{"consumer deleted", func(t *testing.T, e *env, c *pull.Consumer) {
			if err := e.js.DeleteConsumer(e.ctx, c.Stream(), c.Name()); err != nil {
				t.Fatal(err)
			}
		}, []error{pull.ErrConsumerDeleted}},
		{"stream deleted", func(t *testing.T, e *env, c *pull.Consumer) {
			if err := e.js.DeleteStream(e.ctx, "S"); err != nil {
				t.Fatal(err)
			}
		}, []error{jsapi.ErrStreamNotFound, pull.ErrConsumerDeleted}}, // the server ends waiting pulls with "409 Consumer Deleted"
		{"connection closed", func(t *testing.T, e *env, c *pull.Consumer) { e.nc.Close() }, []error{conn.ErrClosed}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, jsapi.StorageMemory)
			c := e.consumer(t, jsapi.ConsumerConfig{})
			e.publish(t, 2)
			before := leakcheck.Snapshot()
			h := &handlerLog{t: t}
			got := make(chan struct{}, 2)
			cc, err := c.Consume(e.ctx, func(m *jsapi.Msg) {
				defer h.leave()
				h.enter(m)
				m.Ack()
				got <- struct{}{}
			}, pull.Expires(2*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			<-got
			<-got
			tc.end(t, e, c)
			waitClosed(t, e, cc)
			err = cc.Err()
			matched := false
			for _, want := range tc.want {
				matched = matched || errors.Is(err, want)
			}
			if !matched {
				t.Fatalf("Err %v, want one of %v", err, tc.want)
			}
			leakcheck.Wait(t, before, 5*time.Second)
		})
	}
}

// What Consume refuses it refuses at once, starting nothing.
func TestConsumeRefusesUpFront(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	handler := func(*jsapi.Msg) { t.Error("handler called") }
	dead, cancel := context.WithCancel(e.ctx)
	cancel()
	cases := []struct {
		name    string
		ctx     context.Context
		handler func(*jsapi.Msg)
		opts    []pull.Opt
		want    error
	}{
		{"MaxMessages 0", e.ctx, handler, []pull.Opt{pull.MaxMessages(0)}, conn.ErrInvalidOption},
		{"Group on a plain consumer", e.ctx, handler, []pull.Opt{pull.Group("g")}, conn.ErrInvalidOption},
		{"DrainOn nil", e.ctx, handler, []pull.Opt{pull.DrainOn(nil)}, conn.ErrInvalidOption},
		{"zero Opt", e.ctx, handler, []pull.Opt{{}}, conn.ErrInvalidOption},
		{"nil handler", e.ctx, nil, nil, conn.ErrInvalidOption},
		{"nil ctx", nil, handler, nil, conn.ErrNilContext},
		{"dead ctx", dead, handler, nil, context.Canceled},
	}
	before := leakcheck.Snapshot()
	pulls := c.Stats().Pulls
	for _, tc := range cases {
		cc, err := c.Consume(tc.ctx, tc.handler, tc.opts...)
		if !errors.Is(err, tc.want) || cc != nil {
			t.Errorf("%s: %v, %v; want %v", tc.name, cc, err, tc.want)
		}
		if n := leakcheck.Snapshot(); n != before {
			t.Errorf("%s: %d natsio goroutines, %d before", tc.name, n, before)
		}
	}
	if p := c.Stats().Pulls; p != pulls {
		t.Fatalf("%d pulls sent", p-pulls)
	}
}
