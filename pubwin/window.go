package pubwin

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/natsio/natsio/internal/deadline"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

// Errors of the window. Failures reported by the stream are
// *jsapi.APIError.
var (
	// ErrTooManyStalled: the window stayed full for StallWait.
	ErrTooManyStalled = errors.New("pubwin: too many publishes awaiting acks")
	// ErrAckTimeout: no ack arrived within AckTimeout; the message may or
	// may not be stored. AckTimeout is the future's default timeout, so it
	// also matches conn.ErrTimeout and context.DeadlineExceeded.
	ErrAckTimeout error = ackTimeout{}
	// ErrAckLost: the connection was lost or closed before the ack arrived;
	// the message may or may not be stored. It also matches
	// conn.ErrDisconnected.
	ErrAckLost = errors.New("pubwin: ack lost with the connection")
	// ErrClosed: the window was closed.
	ErrClosed = errors.New("pubwin: window closed")
)

// ackTimeout is ErrAckTimeout.
type ackTimeout struct{}

func (ackTimeout) Error() string { return "pubwin: timed out waiting for ack" }

func (ackTimeout) Is(target error) bool {
	return target == conn.ErrTimeout || target == context.DeadlineExceeded
}

// Window publishes asynchronously. It is safe for concurrent use. It lives
// from New until Close; Close it when done, or its inbox subscription and
// timer stay.
//
// A publish whose reply says that no stream is listening (503) or that the
// stream is pushing back (429) is sent again, byte for byte, after a
// doubling wait, when RetryOnNoResponders is set; its future stays
// pending, holding its slot, until an attempt is acknowledged or the
// attempts are used up.
type Window struct {
	js     *jsapi.JS
	nc     *conn.Conn
	o      options
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
	ended   tally         // futures ended since the last Complete's report

	count counters

	// scratch receives each ack as onAck decodes it.
	scratch jsapi.PubAck

	obs jsapi.Observer // the connection's, if any (observe.go)
}

// New creates a window publishing through js's connection, configured by
// opts (MaxPending, StallWait, AckTimeout, RetryOnNoResponders; each
// documents its default). An invalid option fails New with an error
// matching conn.ErrInvalidOption, before anything is subscribed; New also
// fails when the connection cannot subscribe the window's inbox (it is
// closed, for example). Close the window when done.
func New(js *jsapi.JS, opts ...Option) (*Window, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt.apply(&o); err != nil {
			return nil, err
		}
	}
	nc := js.Conn()
	w := &Window{
		js:      js,
		nc:      nc,
		o:       o,
		prefix:  nc.NewInbox() + ".",
		slots:   make(chan struct{}, o.maxPending),
		pending: newPendingSet(o.maxPending),
		idle:    make(chan struct{}),
	}
	close(w.idle)
	// Acks are matched on the connection's reader as they are read: no
	// copy of the ack, no hand-off to another goroutine (onAck keeps
	// nothing of the borrowed message and never blocks).
	sub, err := nc.SubscribeInlineUnsafe(w.prefix+"*", w.onAck)
	if err != nil {
		return nil, err
	}
	w.sub = sub
	w.obs = js.Observer()
	w.timer = time.AfterFunc(time.Hour, w.expire)
	w.timer.Stop()
	w.undo = nc.OnDisconnect(func(reason error) { w.failAll(&lostError{reason}) })
	return w, nil
}

// Future is the outcome of one publish. Wait for it with Wait, or for the
// whole window with Complete. Every future ends, once: with its PubAck,
// the stream's error, ErrAckTimeout, ErrAckLost or ErrClosed. Its outcome
// and the window's Stats are recorded before its slot is freed and before
// anyone waiting for it, or for the window, is woken.
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

	observed func(*jsapi.PubAck, error) // the Observer's, called once resolved
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
		return nil, deadline.Err(context.Cause(ctx))
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

// settleLocked ends f, which has just been taken out of the pending set,
// with ack (when err is nil) or err: it records the result, counts it in
// Stats, and frees f's slot, in that order. w.mu is held, so the window's
// idle signal, which the caller sends after this (and after counting f in
// w.ended, Complete's tally), cannot come before the outcome is recorded. What must wait until w.mu is
// released is returned in the wakeup: closing the channel a Wait blocks on
// (after the slot is free: a Publish right after Wait never stalls on it),
// and releasing the message's frame (unless a retry is being sent from it).
func (w *Window) settleLocked(f *Future, ack *jsapi.PubAck, err error) wakeup {
	f.mu.Lock()
	if f.done { // cannot happen: a future leaves the pending set once
		f.mu.Unlock()
		return wakeup{}
	}
	if f.observed != nil {
		// Before the outcome is visible: a Wait that returns finds it
		// reported. The Observer must not block (jsapi.Observer).
		if err != nil {
			ack = nil
		}
		f.observed(ack, err)
	}
	f.done = true
	f.err = err
	if err == nil && ack != nil {
		f.ack = *ack
	}
	wk := wakeup{ch: f.ch, fr: f.takeFrameLocked()}
	f.mu.Unlock()
	w.count.settled(err)
	<-w.slots
	return wk
}

// wakeup is what remains to do for a future once it is settled and the
// window's lock is released.
type wakeup struct {
	ch chan struct{}
	fr *frame
}

func (wk wakeup) run() {
	if wk.ch != nil {
		close(wk.ch)
	}
	if wk.fr != nil {
		wk.fr.release()
	}
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
		if err := w.js.ApplyPubOpts(ctx, ph, opts...); err != nil {
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
	var observed func(*jsapi.PubAck, error)
	if w.obs != nil {
		hdr, observed = jsapi.ObservePublish(w.obs, ctx, subject, hdr, len(data))
	}
	if err := w.acquire(ctx); err != nil {
		if observed != nil {
			observed(nil, err)
		}
		return nil, err
	}
	f := &Future{w: w, observed: observed}
	if w.o.retryAttempts > 0 {
		f.fr = newFrame(subject, hdr, data)
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		<-w.slots
		if f.fr != nil {
			f.fr.release()
		}
		if observed != nil {
			observed(nil, ErrClosed)
		}
		return nil, ErrClosed
	}
	w.next++
	f.token = w.next
	f.deadline = time.Now().Add(w.o.ackTimeout)
	if w.pending.len() == 0 {
		w.idle = make(chan struct{})
	}
	w.pending.add(f)
	w.peak = max(w.peak, w.pending.len())
	w.order = append(w.order, f)
	if len(w.order) == 1 {
		w.timer.Reset(w.o.ackTimeout)
	}
	w.mu.Unlock()

	if err := w.send(subject, f.token, hdr, data); err != nil {
		w.end(f.token, nil, err)
		return nil, err
	}
	return f, nil
}

// send publishes a message with the reply subject of token tok.
func (w *Window) send(subject string, tok uint64, hdr *proto.Header, data []byte) error {
	// The reply subject lives on the stack: PublishMsg copies it.
	var rb [96]byte
	r := strconv.AppendUint(append(rb[:0], w.prefix...), tok, 10)
	reply := unsafe.String(&r[0], len(r))
	if w.obs != nil {
		// Reported to the Observer by Publish (jsapi.ObservePublish):
		// sent past the connection's.
		return w.nc.PublishUnobserved(subject, reply, hdr, data, conn.WriteQueued)
	}
	return w.nc.PublishMsg(subject, reply, hdr, data)
}

// acquire takes a slot, waiting up to StallWait and ctx.
func (w *Window) acquire(ctx context.Context) error {
	// A dead ctx publishes nothing, even with a slot free.
	if ctx.Err() != nil {
		return deadline.Err(context.Cause(ctx))
	}
	select {
	case w.slots <- struct{}{}:
		return nil
	default:
	}
	w.count.stalls.Add(1)
	if w.o.stallWait == 0 {
		w.count.stallFailures.Add(1)
		return ErrTooManyStalled
	}
	t := time.NewTimer(w.o.stallWait)
	defer t.Stop()
	select {
	case w.slots <- struct{}{}:
		return nil
	case <-t.C:
		w.count.stallFailures.Add(1)
		return ErrTooManyStalled
	case <-ctx.Done():
		return deadline.Err(context.Cause(ctx))
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
	// The ack is decoded into the window's scratch PubAck (onAck runs on
	// the connection's reader, one call at a time), then copied into its
	// future.
	ack := &w.scratch
	*ack = jsapi.PubAck{}
	var err error
	if len(m.Data) == 0 && m.Status() == 503 {
		err = jsapi.ErrNoStreamResponse
	} else {
		err = jsapi.ParsePubAck(m.Data, ack)
	}
	if err != nil && w.retryLater(tok, err) {
		return // still pending, sent again after the wait
	}
	// A late ack, for a future that already failed, finds nothing to end.
	w.end(tok, ack, err)
}

// end takes the future of tok out of the window and ends it with ack (err
// nil) or err: settled, then the window's idle signal if it was the last
// pending one, then its waiter woken. A token no longer pending (the
// future already ended) is ignored.
func (w *Window) end(tok uint64, ack *jsapi.PubAck, err error) {
	w.mu.Lock()
	f := w.pending.remove(tok)
	if f == nil {
		w.mu.Unlock()
		return
	}
	f.stopRetryLocked()
	wk := w.settleLocked(f, ack, err)
	w.ended.add(err, 1)
	w.trimLocked()
	w.releaseIdleLocked()
	w.mu.Unlock()
	wk.run()
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

// expire fails futures whose ack timeout passed and re-arms the timer. Each
// is settled before the idle signal.
func (w *Window) expire() {
	now := time.Now()
	var woken []wakeup
	expired := 0
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
		if wk := w.settleLocked(f, nil, ErrAckTimeout); wk != (wakeup{}) {
			woken = append(woken, wk)
		}
		expired++
	}
	w.ended.add(ErrAckTimeout, expired)
	clear(w.order[:i])
	w.order = w.order[i:]
	if len(w.order) > 0 && !w.closed {
		w.timer.Reset(time.Until(w.order[0].deadline))
	}
	w.releaseIdleLocked()
	w.mu.Unlock()
	for _, wk := range woken {
		wk.run()
	}
}

// failAll fails every outstanding future with err. Each is settled before
// the idle signal.
func (w *Window) failAll(err error) {
	w.mu.Lock()
	fs := w.pending.drain(make([]*Future, 0, w.pending.len()))
	woken := make([]wakeup, 0, len(fs))
	for _, f := range fs {
		f.stopRetryLocked()
		if wk := w.settleLocked(f, nil, err); wk != (wakeup{}) {
			woken = append(woken, wk)
		}
	}
	w.ended.add(err, len(fs))
	w.releaseIdleLocked()
	w.mu.Unlock()
	for _, wk := range woken {
		wk.run()
	}
}

// lostError is ErrAckLost with the connection's reason.
type lostError struct{ reason error }

func (e *lostError) Error() string { return ErrAckLost.Error() + ": " + e.reason.Error() }
func (e *lostError) Is(t error) bool {
	return t == ErrAckLost || t == conn.ErrDisconnected
}
func (e *lostError) Unwrap() error { return e.reason }

// Complete waits until no publish awaits its ack, or ctx ends, and reports
// on the publishes that ended since the previous Complete that reported
// (or since New): nil when every one was acknowledged, otherwise a
// *CompleteError counting the failures by cause (ErrAckTimeout,
// ErrAckLost, ErrClosed, the stream's *jsapi.APIError, ...). It counts
// the same futures as Stats, so a publish whose send failed at once, which
// Publish already returned as its error, is counted here too; a Publish
// that got no slot (ErrTooManyStalled) or was refused before taking one is
// not.
//
// When Complete returns, every future that ended before the window became
// idle is Done and counted in Stats. Publishes made meanwhile by other
// goroutines may still be pending.
//
// When ctx ends first, Complete returns ctx's error (context.Cause) and
// reports nothing: the failures stay counted for the next Complete. With
// nothing pending it reports even when ctx is already done. Concurrent
// calls report each failure once, in whichever call takes it. A nil ctx
// fails with conn.ErrNilContext.
func (w *Window) Complete(ctx context.Context) error {
	if ctx == nil {
		return conn.ErrNilContext
	}
	w.mu.Lock()
	idle := w.idle
	w.mu.Unlock()
	select {
	case <-idle:
	default:
		select {
		case <-idle:
		case <-ctx.Done():
			return deadline.Err(context.Cause(ctx))
		}
	}
	w.mu.Lock()
	err := w.ended.report()
	w.mu.Unlock()
	return err
}

// Close fails outstanding futures with ErrClosed, stops the timer and
// removes the window's subscription. Publish fails with ErrClosed after
// it; Wait, Complete, Pending and Stats still work. Close is idempotent;
// it returns an error only when the subscription could not be removed.
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
