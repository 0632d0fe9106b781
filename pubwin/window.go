package pubwin

import (
	"context"
	"errors"
	"fmt"
	"github.com/natsio/natsio/internal/connx"
	"github.com/natsio/natsio/internal/jsx"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

// Defaults for zero Options fields.
const (
	DefaultMaxPending = 4000
	DefaultStallWait  = 200 * time.Millisecond
	DefaultAckTimeout = 5 * time.Second
)

// Errors of the window. Failures reported by the stream are
// *jsapi.APIError.
var (
	// ErrTooManyStalled: the window stayed full for StallWait.
	ErrTooManyStalled = errors.New("pubwin: too many publishes awaiting acks")
	// ErrAckTimeout: no ack arrived within AckTimeout; the message may or
	// may not be stored.
	ErrAckTimeout = errors.New("pubwin: timed out waiting for ack")
	// ErrAckLost: the connection was lost or closed before the ack arrived;
	// the message may or may not be stored. It also matches
	// conn.ErrDisconnected.
	ErrAckLost = errors.New("pubwin: ack lost with the connection")
	// ErrClosed: the window was closed.
	ErrClosed = errors.New("pubwin: window closed")
)

// Options configure a Window; zero fields take the defaults.
type Options struct {
	// MaxPending bounds publishes awaiting acks (default 4000).
	MaxPending int
	// StallWait is how long Publish waits for a free slot (default 200 ms).
	StallWait time.Duration
	// AckTimeout fails a future whose ack has not arrived (default 5 s).
	// It bounds a publish with all its retries.
	AckTimeout time.Duration
	// Retry says how a message whose reply is a 503 no-responders status
	// (no stream listening: a leader election, a stream not yet created)
	// or a 429 too-many-requests error is sent again: the very same
	// subject, headers (Nats-Msg-Id included) and data, after Wait,
	// doubling for each next attempt. The zero Retry (the default) sends
	// nothing again: such a future fails at once. DefaultRetry is
	// jsapi.Publish's policy, 2 attempts from 250 ms. Invalid values fail
	// New with conn.ErrInvalidOption. The future keeps its slot
	// while retried and ends with the PubAck of the attempt that was
	// stored, or with the last reply's error (jsapi.ErrNoStreamResponse,
	// jsapi.ErrTooManyRequests) once the attempts are used up or the next
	// one could not be sent before AckTimeout. Close (ErrClosed) and a
	// disconnect (ErrAckLost) end a waiting retry like any pending
	// publish. Retries are off by default because they cost: each pending
	// message's data is copied into a pooled buffer (no allocation once
	// warm), released when its future ends — about 20 % more client CPU
	// per 128-byte publish, measured. jsapi.RetryOnNoResponders passed to
	// Publish has no effect.
	Retry Retry
}

// Window publishes asynchronously. It is safe for concurrent use.
//
// A publish whose reply says that no stream is listening (503) or that the
// stream is pushing back (429) is sent again, byte for byte, after a
// doubling wait, as Options.Retry says; its future stays pending, holding
// its slot, until an attempt is acknowledged or the attempts are used up.
type Window struct {
	nc     *conn.Conn
	opts   Options
	retry  Retry  // resolved Options.Retry
	prefix string // "<inbox>." ; acks arrive on "<inbox>.<token>"
	sub    *conn.Subscription
	slots  chan struct{}
	undo   func()

	mu      sync.Mutex
	next    uint64
	pending pendingSet
	order   []*Future // publish order, for timeouts; may hold completed ones
	timer   *time.Timer
	closed  bool
	idle    chan struct{} // closed and replaced when pending becomes empty
	peak    int           // most futures pending at once

	count counters
}

// New creates a window publishing through js's connection. Close it when
// done.
func New(js *jsapi.JS, o Options) (*Window, error) {
	if o.MaxPending == 0 {
		o.MaxPending = DefaultMaxPending
	}
	if o.StallWait == 0 {
		o.StallWait = DefaultStallWait
	}
	if o.AckTimeout == 0 {
		o.AckTimeout = DefaultAckTimeout
	}
	if o.MaxPending < 0 || o.StallWait < 0 || o.AckTimeout < 0 {
		return nil, fmt.Errorf("%w: negative window option", conn.ErrInvalidOption)
	}
	retry, err := resolveRetry(o.Retry)
	if err != nil {
		return nil, err
	}
	nc := js.Conn()
	w := &Window{
		nc:      nc,
		opts:    o,
		retry:   retry,
		prefix:  nc.NewInbox() + ".",
		slots:   make(chan struct{}, o.MaxPending),
		pending: newPendingSet(o.MaxPending),
		idle:    make(chan struct{}),
	}
	close(w.idle)
	// Acks are matched on the connection's reader as they are read: no
	// copy of the ack, no hand-off to another goroutine (onAck keeps
	// nothing of the borrowed message and never blocks).
	sub, err := connx.SubscribeInline(nc, w.prefix+"*", w.onAck)
	if err != nil {
		return nil, err
	}
	w.sub = sub
	w.timer = time.AfterFunc(time.Hour, w.expire)
	w.timer.Stop()
	w.undo = nc.OnDisconnect(func(reason error) { w.failAll(&lostError{reason}) })
	return w, nil
}

// Future is the outcome of one publish. Wait for it with Wait, or for the
// whole window with Complete.
type Future struct {
	w        *Window
	token    uint64
	deadline time.Time
	// Retry state, guarded by w.mu: attempt counts the retries made;
	// waiting is set while timer is armed for the next one.
	attempt uint8
	waiting bool
	timer   *time.Timer

	mu      sync.Mutex
	done    bool
	sending int32  // retries being sent from fr
	fr      *frame // the message, kept for retries while pending (nil: none)
	ack     jsapi.PubAck
	err     error
	ch      chan struct{} // created by a Wait that must block
}

// Wait returns the PubAck or the publish's error, waiting until it is known
// or ctx ends. It never waits forever: every future ends by AckTimeout.
func (f *Future) Wait(ctx context.Context) (*jsapi.PubAck, error) {
	f.mu.Lock()
	if f.done {
		f.mu.Unlock()
		return f.result()
	}
	if f.ch == nil {
		f.ch = make(chan struct{})
	}
	ch := f.ch
	f.mu.Unlock()
	select {
	case <-ch:
		return f.result()
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// Done reports whether the outcome is known.
func (f *Future) Done() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.done
}

func (f *Future) result() (*jsapi.PubAck, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &f.ack, nil
}

// finish records the outcome once, counts it and frees the future's slot,
// then wakes Wait; it reports whether this call did. The message's frame
// is released, unless a retry is being sent from it. Only a future taken
// out of the window (pending set) is finished.
func (f *Future) finish(err error) bool {
	f.mu.Lock()
	if f.done {
		f.mu.Unlock()
		return false
	}
	f.done = true
	f.err = err
	// Counted, and its slot freed, before anyone waiting is woken: after
	// Wait returns, Stats includes this future and its slot is free.
	f.w.count.settled(err)
	<-f.w.slots
	if f.ch != nil {
		close(f.ch)
	}
	fr := f.takeFrameLocked()
	f.mu.Unlock()
	if fr != nil {
		fr.release()
	}
	return true
}

// Pending reports how many publishes await their acks.
func (w *Window) Pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pending.len()
}

var headerPool = sync.Pool{New: func() any { return new(proto.Header) }}

// Publish sends data to subject and returns its future at once. It waits
// for a free slot up to StallWait and ctx (ErrTooManyStalled). opts are
// jsapi publish options (message ID, expectations, TTL, headers), validated
// before anything is sent. A ctx that is already done fails with its
// error, and nothing is sent.
func (w *Window) Publish(ctx context.Context, subject string, data []byte, opts ...jsapi.PubOpt) (*Future, error) {
	return w.PublishMsg(ctx, subject, nil, data, opts...)
}

// PublishMsg is Publish with user headers h (may be nil).
func (w *Window) PublishMsg(ctx context.Context, subject string, h *proto.Header, data []byte, opts ...jsapi.PubOpt) (*Future, error) {
	if ctx == nil {
		return nil, conn.ErrNilContext
	}
	hdr := h
	if len(opts) > 0 {
		ph := headerPool.Get().(*proto.Header)
		defer func() { ph.Reset(); headerPool.Put(ph) }()
		if h != nil {
			for k, v := range h.All() {
				ph.Add(k, v)
			}
		}
		if err := jsx.ApplyPubOpts(ph, opts); err != nil {
			return nil, err
		}
		hdr = ph
	}
	if hdr != nil && hdr.Len() == 0 {
		hdr = nil
	}
	if err := proto.ValidatePublishSubject(subject); err != nil {
		return nil, err
	}
	if err := w.acquire(ctx); err != nil {
		return nil, err
	}
	f := &Future{w: w}
	if w.retry.Attempts > 0 {
		f.fr = newFrame(subject, hdr, data)
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		<-w.slots
		if f.fr != nil {
			f.fr.release()
		}
		return nil, ErrClosed
	}
	w.next++
	f.token = w.next
	f.deadline = time.Now().Add(w.opts.AckTimeout)
	if w.pending.len() == 0 {
		w.idle = make(chan struct{})
	}
	w.pending.add(f)
	w.peak = max(w.peak, w.pending.len())
	w.order = append(w.order, f)
	if len(w.order) == 1 {
		w.timer.Reset(w.opts.AckTimeout)
	}
	w.mu.Unlock()

	if err := w.send(subject, f.token, hdr, data); err != nil {
		w.complete(f.token, err)
		return nil, err
	}
	return f, nil
}

// send publishes a message with the reply subject of token tok.
func (w *Window) send(subject string, tok uint64, hdr *proto.Header, data []byte) error {
	// The reply subject lives on the stack: PublishMsg copies it.
	var rb [96]byte
	r := strconv.AppendUint(append(rb[:0], w.prefix...), tok, 10)
	return w.nc.PublishMsg(subject, unsafe.String(&r[0], len(r)), hdr, data)
}

// acquire takes a slot, waiting up to StallWait and ctx.
func (w *Window) acquire(ctx context.Context) error {
	// A dead ctx publishes nothing, even with a slot free.
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	select {
	case w.slots <- struct{}{}:
		return nil
	default:
	}
	w.count.stalls.Add(1)
	t := time.NewTimer(w.opts.StallWait)
	defer t.Stop()
	select {
	case w.slots <- struct{}{}:
		return nil
	case <-t.C:
		w.count.stallFailures.Add(1)
		return ErrTooManyStalled
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// onAck receives acks on the window's inbox, on the connection's reader;
// m is borrowed (ParsePubAck copies what it keeps). A reply asking for a
// retry arms the message's timer and returns: the reader never waits.
func (w *Window) onAck(m *conn.Msg) {
	tok, ok := proto.ParseUint(m.Subject[min(len(w.prefix), len(m.Subject)):])
	if !ok {
		return
	}
	var ack jsapi.PubAck
	var err error
	if len(m.Data) == 0 && m.Status() == 503 {
		err = jsapi.ErrNoStreamResponse
	} else {
		err = jsx.ParsePubAck(m.Data, &ack)
	}
	if err != nil && w.retryLater(tok, err) {
		return // still pending, sent again after the wait
	}
	f := w.take(tok)
	if f == nil {
		return // late ack for a future that already failed
	}
	// f is out of the window: nothing else writes its result now.
	f.ack = ack
	f.finish(err)
}

// complete ends the future of tok with err (nil: acked) and frees its slot.
func (w *Window) complete(tok uint64, err error) {
	if f := w.take(tok); f != nil {
		f.finish(err)
	}
}

// take removes the future of tok from the window (nil if it is gone).
func (w *Window) take(tok uint64) *Future {
	w.mu.Lock()
	f := w.pending.remove(tok)
	if f != nil {
		f.stopRetryLocked()
		w.trimLocked()
		w.releaseIdleLocked()
	}
	w.mu.Unlock()
	return f
}

// trimLocked drops completed futures from the head of the timeout order;
// acks mostly arrive in publish order, so this keeps order short.
func (w *Window) trimLocked() {
	i := 0
	for i < len(w.order) && w.pending.get(w.order[i].token) != w.order[i] {
		i++
	}
	if i > 0 {
		clear(w.order[:i])
		w.order = w.order[i:]
	}
}

func (w *Window) releaseIdleLocked() {
	if w.pending.len() == 0 {
		select {
		case <-w.idle:
		default:
			close(w.idle)
		}
		clear(w.order)
		w.order = w.order[:0]
	}
}

// expire fails futures whose ack timeout passed and re-arms the timer.
func (w *Window) expire() {
	now := time.Now()
	var expired []*Future
	w.mu.Lock()
	i := 0
	for ; i < len(w.order); i++ {
		f := w.order[i]
		if w.pending.get(f.token) != f {
			continue // completed
		}
		if f.deadline.After(now) {
			break
		}
		w.pending.remove(f.token)
		f.stopRetryLocked()
		expired = append(expired, f)
	}
	clear(w.order[:i])
	w.order = w.order[i:]
	if len(w.order) > 0 && !w.closed {
		w.timer.Reset(time.Until(w.order[0].deadline))
	}
	w.releaseIdleLocked()
	w.mu.Unlock()
	for _, f := range expired {
		f.finish(ErrAckTimeout)
	}
}

// failAll fails every outstanding future with err.
func (w *Window) failAll(err error) {
	w.mu.Lock()
	fs := w.pending.drain(make([]*Future, 0, w.pending.len()))
	for _, f := range fs {
		f.stopRetryLocked()
	}
	w.releaseIdleLocked()
	w.mu.Unlock()
	for _, f := range fs {
		f.finish(err)
	}
}

// lostError is ErrAckLost with the connection's reason.
type lostError struct{ reason error }

func (e *lostError) Error() string { return ErrAckLost.Error() + ": " + e.reason.Error() }
func (e *lostError) Is(t error) bool {
	return t == ErrAckLost || t == conn.ErrDisconnected
}
func (e *lostError) Unwrap() error { return e.reason }

// Complete waits until no publish awaits its ack, or ctx ends.
func (w *Window) Complete(ctx context.Context) error {
	w.mu.Lock()
	idle := w.idle
	w.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Close fails outstanding futures with ErrClosed, stops the timer and
// removes the window's subscription.
func (w *Window) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.timer.Stop()
	w.mu.Unlock()
	w.undo()
	w.failAll(ErrClosed)
	if err := w.sub.Unsubscribe(); err != nil && !errors.Is(err, conn.ErrClosed) && !errors.Is(err, conn.ErrBadSubscription) {
		return err
	}
	return nil
}
