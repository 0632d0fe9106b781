package ordered_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/leakcheck"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
	"github.com/natsio/natsio/pull"
)

// handlerLog records handler calls and fails the test on a call that
// overlaps another or comes out of order (stream sequences contiguous
// from first).
type handlerLog struct {
	t       *testing.T
	calls   atomic.Int64
	running atomic.Bool
	next    atomic.Uint64
}

func newHandlerLog(t *testing.T, first uint64) *handlerLog {
	h := &handlerLog{t: t}
	h.next.Store(first)
	return h
}

func (h *handlerLog) enter(m *jsapi.Msg) {
	if !h.running.CompareAndSwap(false, true) {
		h.t.Error("handler calls overlap")
	}
	md, err := m.Metadata()
	if err != nil {
		h.t.Errorf("metadata: %v", err)
	}
	if want := h.next.Add(1) - 1; md.StreamSeq != want {
		h.t.Errorf("stream seq %d, want %d", md.StreamSeq, want)
	}
	h.calls.Add(1)
}

func (h *handlerLog) leave() { h.running.Store(false) }

func waitClosed(t *testing.T, e *env, cc *pull.ConsumeContext) {
	t.Helper()
	select {
	case <-cc.Closed():
	case <-e.ctx.Done():
		t.Fatal("the Consume never ended")
	}
}

// Stop while a handler call is under way: that call finishes and no other
// one starts, Err is nil, the server-side consumer is deleted, nothing is
// left running, and the next read starts right after the last message
// handled.
func TestConsumeStop(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, "o.a", 50)
	before := leakcheck.Snapshot()
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	h := newHandlerLog(t, 1)
	const k = 10
	reached, release := make(chan struct{}), make(chan struct{})
	cc, err := oc.Consume(e.ctx, func(m *jsapi.Msg) {
		defer h.leave()
		h.enter(m)
		if h.calls.Load() == k {
			close(reached)
			<-release
		}
	}, ordered.MaxMessages(20))
	if err != nil {
		t.Fatal(err)
	}
	<-reached
	cc.Stop()
	close(release)
	waitClosed(t, e, cc)
	if n := h.calls.Load(); n != k || cc.Err() != nil {
		t.Fatalf("%d handler calls, Err %v; want %d and nil", n, cc.Err(), k)
	}
	if oc.Name() != "" || countConsumers(t, e) != 0 {
		t.Fatalf("server-side consumer %q left, %d on the stream", oc.Name(), countConsumers(t, e))
	}
	if n := readAll(t, oc, e.ctx, k+1); n != 50-k {
		t.Fatalf("the next read got %d, want the %d not handled", n, 50-k)
	}
	leakcheck.Wait(t, before, 5*time.Second)
}

func countConsumers(t *testing.T, e *env) int {
	t.Helper()
	n := 0
	for _, err := range e.js.ConsumerNames(e.ctx, "O") {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// Drain: every message received by then is handled, no consumer is
// recreated, then the Consume ends with a nil Err; the next read resumes
// after the last message handled.
func TestConsumeDrain(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	const n = 50
	e.publish(t, "o.a", n)
	before := leakcheck.Snapshot()
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	in0 := e.nc.Stats().InMsgs
	h := newHandlerLog(t, 1)
	first, release := make(chan struct{}), make(chan struct{})
	cc, err := oc.Consume(e.ctx, func(m *jsapi.Msg) {
		defer h.leave()
		h.enter(m)
		if h.calls.Load() == 1 {
			close(first)
			<-release
		}
	}, ordered.MaxMessages(100))
	if err != nil {
		t.Fatal(err)
	}
	<-first
	// The connection has received all n (one pull asked for them) before
	// the drain starts.
	for e.nc.Stats().InMsgs-in0 < n {
		select {
		case <-e.ctx.Done():
			t.Fatalf("received %d of %d", e.nc.Stats().InMsgs-in0, n)
		case <-time.After(time.Millisecond): // polling interval
		}
	}
	cc.Drain()
	close(release)
	waitClosed(t, e, cc)
	if got := h.calls.Load(); got != n || cc.Err() != nil {
		t.Fatalf("%d of the %d received messages handled, Err %v", got, n, cc.Err())
	}
	if oc.Resets() != 0 || oc.LastSequence() != n {
		t.Fatalf("%d resets, last sequence %d", oc.Resets(), oc.LastSequence())
	}
	leakcheck.Wait(t, before, 5*time.Second)
	e.publish(t, "o.a", 5)
	if got := readAll(t, oc, e.ctx, n+1); got != 5 {
		t.Fatalf("the next read got %d, want 5", got)
	}
}

// The end of Consume's context ends it like Stop.
func TestConsumeContextEnd(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, "o.a", 3)
	before := leakcheck.Snapshot()
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	h := newHandlerLog(t, 1)
	got := make(chan struct{}, 3)
	cc, err := oc.Consume(ctx, func(m *jsapi.Msg) {
		defer h.leave()
		h.enter(m)
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

// Terminal errors end the Consume and are its Err: Delete (ErrConsumerDeleted,
// which matches pull.ErrConsumerDeleted), the stream deleted, the
// connection closed, the idle timeout. A server-side consumer deleted
// behind its back is not one: it is recreated.
func TestConsumeTerminal(t *testing.T) {
	cases := []struct {
		name string
		opts []ordered.Opt
		end  func(t *testing.T, e *env, oc *ordered.Consumer)
		want []error // all of
	}{
		{"Delete", nil, func(t *testing.T, e *env, oc *ordered.Consumer) {
			if err := oc.Delete(e.ctx); err != nil {
				t.Fatal(err)
			}
		}, []error{ordered.ErrConsumerDeleted, pull.ErrConsumerDeleted}},
		{"stream deleted", nil, func(t *testing.T, e *env, oc *ordered.Consumer) {
			if err := e.js.DeleteStream(e.ctx, "O"); err != nil {
				t.Fatal(err)
			}
		}, []error{jsapi.ErrStreamNotFound}},
		{"connection closed", nil, func(t *testing.T, e *env, oc *ordered.Consumer) { e.nc.Close() }, []error{conn.ErrClosed}},
		{"idle timeout", []ordered.Opt{ordered.IdleTimeout(300 * time.Millisecond)}, func(*testing.T, *env, *ordered.Consumer) {},
			[]error{ordered.ErrNoMessages}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, jsapi.StorageMemory)
			e.publish(t, "o.a", 2)
			before := leakcheck.Snapshot()
			oc := newOrdered(t, e.js, "O", ordered.Config{})
			h := newHandlerLog(t, 1)
			got := make(chan struct{}, 2)
			cc, err := oc.Consume(e.ctx, func(m *jsapi.Msg) {
				defer h.leave()
				h.enter(m)
				got <- struct{}{}
			}, append(tc.opts, ordered.Heartbeat(200*time.Millisecond))...)
			if err != nil {
				t.Fatal(err)
			}
			<-got
			<-got
			tc.end(t, e, oc)
			waitClosed(t, e, cc)
			for _, want := range tc.want {
				if err := cc.Err(); !errors.Is(err, want) {
					t.Fatalf("Err %v, want %v", err, want)
				}
			}
			leakcheck.Wait(t, before, 5*time.Second)
		})
	}
}

// What Consume refuses it refuses at once, starting nothing.
func TestConsumeRefusesUpFront(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	handler := func(*jsapi.Msg) { t.Error("handler called") }
	dead, cancel := context.WithCancel(e.ctx)
	cancel()
	cases := []struct {
		name    string
		ctx     context.Context
		handler func(*jsapi.Msg)
		opts    []ordered.Opt
		want    error
	}{
		{"MaxMessages 0", e.ctx, handler, []ordered.Opt{ordered.MaxMessages(0)}, conn.ErrInvalidOption},
		{"Heartbeat 1ms", e.ctx, handler, []ordered.Opt{ordered.Heartbeat(time.Millisecond)}, conn.ErrInvalidOption},
		{"IdleTimeout 0", e.ctx, handler, []ordered.Opt{ordered.IdleTimeout(0)}, conn.ErrInvalidOption},
		{"zero Opt", e.ctx, handler, []ordered.Opt{{}}, conn.ErrInvalidOption},
		{"nil handler", e.ctx, nil, nil, conn.ErrInvalidOption},
		{"nil ctx", nil, handler, nil, conn.ErrNilContext},
		{"dead ctx", dead, handler, nil, context.Canceled},
	}
	before := leakcheck.Snapshot()
	for _, tc := range cases {
		cc, err := oc.Consume(tc.ctx, tc.handler, tc.opts...)
		if !errors.Is(err, tc.want) || cc != nil {
			t.Errorf("%s: %v, %v; want %v", tc.name, cc, err, tc.want)
		}
		if n := leakcheck.Snapshot(); n != before {
			t.Errorf("%s: %d natsio goroutines, %d before", tc.name, n, before)
		}
	}
	// While one read runs, another is refused.
	ctx, stop := context.WithCancel(e.ctx)
	defer stop()
	cc, err := oc.Consume(ctx, func(*jsapi.Msg) {})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oc.Consume(e.ctx, handler); !errors.Is(err, ordered.ErrBusy) {
		t.Fatalf("a second Consume: %v", err)
	}
	for _, err := range oc.Messages(e.ctx) {
		if !errors.Is(err, ordered.ErrBusy) {
			t.Fatalf("Messages during a Consume: %v", err)
		}
		break
	}
	cc.Stop()
	waitClosed(t, e, cc)
}
