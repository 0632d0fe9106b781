package conn

import (
	"context"
	"errors"
	"iter"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/natsio/natsio/proto"
)

// ErrNoReply is returned by Msg.Respond for a message without a reply
// subject.
var ErrNoReply = errors.New("nats: message has no reply subject")

// Subscription receives the messages published to a subject. Read them with
// Messages (an iterator), NextMsg, or a handler given to SubscribeFunc: one
// of these per subscription.
//
// Messages wait in a bounded queue (PendingLimits), which counts what each
// queued message holds: subject, reply, header and data, plus 128
// bytes for the message itself. When the queue is full,
// new messages are dropped and counted (Dropped), and one EventSlowConsumer
// is raised per episode; the connection's reader never waits for a slow
// subscriber.
type Subscription struct {
	// Fixed once registered: the connection, the server's sid for it, its
	// subject and queue group, and whether the subject has no wildcard.
	nc      *Conn
	sid     uint64
	Subject string
	Queue   string
	literal bool

	// mode is how the reader delivers s's messages (deliveryMode,
	// dispatch.go). Atomic: set when s is made; borrowBatches moves it
	// once from deliverQueue to deliverLent.
	mode atomic.Uint32
	// fn receives the messages of a deliverView or deliverMux
	// subscription on the goroutine that reads them. Fixed.
	fn func(*Msg)
	// newMsg provides delivered Msg structs (SubscribeBatches); nil: the
	// reader's slabs. Fixed.
	newMsg func() *Msg
	// more: a SubscribeFunc handler has further messages of its batch to
	// handle after the current one (Respond lets its reply wait for them).
	// Atomic.
	more atomic.Bool
	// closing: markClosed ran, close has yet to finish (Close). Under mu.
	closing bool

	// mu guards the queue and the state below it, up to handlerIdleEnd.
	// Lock order: nc.mu, then mu (unsubscribe); nothing is locked while
	// holding mu.
	mu sync.Mutex
	// q holds the delivered messages not yet taken; qBytes their size as
	// the pending limits count it; maxMsgs and maxBytes those limits.
	q        []*Msg
	qBytes   int
	maxMsgs  int
	maxBytes int
	// closed: the subscription ended (closeErr: why, nil for a plain
	// unsubscribe); draining: it ends once its queue is empty.
	closed   bool
	draining bool
	closeErr error
	// slow: in a slow-consumer episode (messages are being dropped).
	slow bool
	// consuming: a SubscribeFunc handler or a Messages loop consumes the
	// queue; NextMsg and NextBatch are refused meanwhile.
	consuming bool
	// max: auto-unsubscribe after this many deliveries (0: none). Atomic,
	// read by the reader; changed under mu with received.
	max atomic.Uint64
	// received counts the messages routed to s (auto-unsubscribe). Under mu.
	received uint64
	// wake signals a consumer waiting in take (capacity 1, never blocks);
	// done is closed when s ends. Both fixed.
	wake chan struct{}
	done chan struct{}
	// handlerDone is closed when a SubscribeFunc handler has returned for
	// the last time (nil without a handler).
	handlerDone chan struct{}
	// handler is a SubscribeFunc handler. Its goroutine starts with the
	// first message queued (startHandlerLocked): an idle subscription
	// holds no goroutine, and closing it wakes none. handlerStarted (under
	// mu) is set once the goroutine started, or the subscription closed
	// before any message; handlerIdleEnd: it closed first, so finishClose
	// closes handlerDone.
	handler        func(*Msg)
	handlerStarted bool
	handlerIdleEnd bool

	// delivered counts the messages taken by the consumer (under mu);
	// dropped those refused by the pending limits (atomic).
	delivered uint64
	dropped   atomic.Uint64
	// Under mu: the longest the queue has been (messages, bytes), and the
	// slow-consumer episodes (runs of drops).
	peakMsgs, peakBytes int
	episodes            uint64

	// taken counts the messages the consumer took from the queue (take,
	// NextMsg; less those put back, requeue): a lent subscription frees
	// the memory of what it took in earlier batches (lender.newBatch).
	// Under mu.
	taken uint64
	// lend: the lender of a deliverLent subscription (borrowBatches).
	// Atomic: set once, before mode moves to deliverLent.
	lend atomic.Pointer[lender]
	// alloc carves s's delivered messages (msg.go). Owned by the reader
	// goroutine.
	alloc msgAlloc
}

func newSubscription(nc *Conn, subject, queue string) *Subscription {
	return &Subscription{
		nc:       nc,
		Subject:  subject,
		Queue:    queue,
		literal:  proto.IsLiteral(subject),
		maxMsgs:  nc.opts.pendingMsgs,
		maxBytes: nc.opts.pendingBytes,
		wake:     make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
}

// SetPendingLimits changes the bounds of this subscription's queue.
func (s *Subscription) SetPendingLimits(msgs, bytes int) error {
	if msgs <= 0 || bytes <= 0 {
		return invalid("pending limits %d msgs, %d bytes", msgs, bytes)
	}
	s.mu.Lock()
	s.maxMsgs, s.maxBytes = msgs, bytes
	s.mu.Unlock()
	return nil
}

// Pending reports the messages and bytes waiting in the queue (bytes as the
// pending limits count them: subject, reply, header, data and 128
// bytes per message).
func (s *Subscription) Pending() (msgs, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.q), s.qBytes
}

// Delivered reports how many messages the subscription has received
// (queued or handed to the consumer).
func (s *Subscription) Delivered() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.delivered
}

// Dropped reports how many messages were dropped because the queue was full.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

// PeakPending reports the most messages and bytes the queue ever held (each
// peak on its own).
func (s *Subscription) PeakPending() (msgs, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peakMsgs, s.peakBytes
}

// SlowEpisodes reports how many times the queue overflowed: runs of drops,
// each ended by a message that fit again. Each raised one
// EventSlowConsumer.
func (s *Subscription) SlowEpisodes() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.episodes
}

// IsValid reports whether the subscription is still active.
func (s *Subscription) IsValid() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closed
}

// room reports how many more messages and bytes s's queue takes now
// (zero when s ended).
func (s *Subscription) room() (msgs, bytes int) {
	msgs, bytes, _ = s.roomEmpty()
	return msgs, bytes
}

// roomEmpty is room, and whether the queue is empty.
func (s *Subscription) roomEmpty() (msgs, bytes int, empty bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, 0, false
	}
	return s.maxMsgs - len(s.q), s.maxBytes - s.qBytes, len(s.q) == 0
}

// drop counts a message the queue had no room for. The first of a run of
// drops starts a slow-consumer episode and raises its event.
func (s *Subscription) drop() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.dropped.Add(1)
	first := !s.slow
	s.slow = true
	if first {
		s.episodes++
	}
	s.mu.Unlock()
	s.nc.stats.dropped.Add(1)
	if first {
		s.nc.slowConsumer(s)
	}
}

// pushAll queues ms, messages of s the reader admitted (reader.admit:
// their room was checked and their bytes reserved before they were
// copied), in order, under one lock. It runs on the reader goroutine and
// never blocks. It does not wake the consumer: it reports whether the
// queue was empty before, and the reader then wakes the consumer once per
// read from the socket (reader.deferWake), not once per message.
func (s *Subscription) pushAll(ms []*Msg) (wasEmpty bool) {
	size := 0
	for _, m := range ms {
		size += m.pendingSize()
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.nc.pendingBytes.Add(-int64(size))
		return false
	}
	s.slow = false
	wasEmpty = len(s.q) == 0
	s.q = append(s.q, ms...)
	s.qBytes += size
	s.notePeakLocked()
	s.delivered += uint64(len(ms))
	s.startHandlerLocked()
	s.mu.Unlock()
	return wasEmpty
}

// startHandlerLocked starts the goroutine of a SubscribeFunc handler
// that has none yet, now that a message is queued for it.
func (s *Subscription) startHandlerLocked() {
	if s.handler != nil && !s.handlerStarted {
		s.handlerStarted = true
		go s.runHandler(s.handler)
	}
}

// endIdleHandlerLocked notes, as s closes, that its handler never had a
// message: its goroutine is not started, and finishClose closes
// handlerDone.
func (s *Subscription) endIdleHandlerLocked() {
	if s.handler != nil && !s.handlerStarted {
		s.handlerStarted = true
		s.handlerIdleEnd = true
	}
}

// notePeakLocked records the queue's length if it is the longest yet.
func (s *Subscription) notePeakLocked() {
	s.peakMsgs = max(s.peakMsgs, len(s.q))
	s.peakBytes = max(s.peakBytes, s.qBytes)
}

// signal wakes a consumer waiting in take or next.
func (s *Subscription) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// take moves every queued message into batch (which it returns), waiting
// for at least one until ctx ends or the subscription closes. A done ctx
// ends it, queued messages or not: a loop of takes ends by its context
// however fast messages arrive. On close it returns the messages still
// queued first, then the close error (nil for an orderly end: unsubscribe,
// drain, auto-unsubscribe). Messages taken by an earlier call of a lent
// subscription are over when it is called again (lender.newBatch).
func (s *Subscription) take(ctx context.Context, batch []*Msg) ([]*Msg, bool, error) {
	if ld := s.lend.Load(); ld != nil {
		s.mu.Lock()
		taken := s.taken
		s.mu.Unlock()
		ld.newBatch(taken)
	}
	for {
		if err := ctxEnded(ctx); err != nil {
			return batch[:0], true, err
		}
		if q, end, err := s.grab(batch); len(q) > 0 || end {
			return q, end, err
		}
		select {
		case <-s.wake:
		case <-s.done:
		case <-s.nc.subsClosed:
		case <-ctx.Done():
		}
	}
}

// grab moves every queued message into batch (which it returns) without
// waiting; with none queued it reports the end of the subscription (its
// close error) or, while it goes on, an empty batch.
func (s *Subscription) grab(batch []*Msg) ([]*Msg, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.q) > 0 {
		q := s.q
		s.q = batch[:0]
		s.releaseLocked(s.qBytes)
		s.qBytes = 0
		s.taken += uint64(len(q))
		return q, false, nil
	}
	if s.closed {
		return batch[:0], true, s.closeErr
	}
	return batch[:0], false, nil
}

// ctxEnded returns the error that ends a blocking call whose context is
// ctx, or nil while ctx goes on: its error once it is done (matching
// ErrTimeout too at its deadline, timeoutErr). A deadline that has passed
// by the clock while the timer that ends ctx has yet to run (on a busy
// process it may run late) ends the call too: ctxEnded then waits for ctx
// to be done, so that the caller sees ctx.Err() and its cause as usual.
func ctxEnded(ctx context.Context) error {
	if ctx.Err() == nil {
		dl, ok := ctx.Deadline()
		if !ok || time.Now().Before(dl) {
			return nil
		}
		// Due now: let the timer's goroutine run first, rather than sleep
		// until the scheduler gets to it (tens of milliseconds on a
		// loaded machine).
		for i := 0; i < 64 && ctx.Err() == nil; i++ {
			runtime.Gosched()
		}
		<-ctx.Done()
	}
	return timeoutErr(ctx)
}

func (s *Subscription) startConsuming() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.consuming {
		return ErrSubscriptionActive
	}
	if s.readByFunc() {
		return ErrBadSubscription
	}
	s.consuming = true
	return nil
}

// Messages returns a single-use iterator over the subscription's messages.
// It ends with a nil error when the subscription ends in order
// (Unsubscribe, Drain, auto-unsubscribe reached) after the queued messages
// have been yielded; it yields one non-nil error, then stops, when ctx ends
// (the context's cause), the connection closes (ErrClosed), or the
// subscription is already being consumed (ErrSubscriptionActive). Breaking
// out of the loop leaves the subscription active; Unsubscribe to stop it.
// With Borrowed, each message is lent for the loop body only.
func (s *Subscription) Messages(ctx context.Context, opts ...SubOpt) iter.Seq2[*Msg, error] {
	return func(yield func(*Msg, error) bool) {
		if ctx == nil {
			yield(nil, ErrNilContext)
			return
		}
		so, err := resolveSubOpts(opts)
		if err != nil {
			yield(nil, err)
			return
		}
		if err := s.startConsuming(); err != nil {
			yield(nil, err)
			return
		}
		defer s.stopConsuming()
		if so.borrowed {
			s.borrowBatches(nil)
		}
		ld := s.lend.Load()
		var batch []*Msg
		for {
			var err error
			var end bool
			batch, end, err = s.take(ctx, batch)
			for i, m := range batch {
				batch[i] = nil
				s.observeReceive(m)
				stop := !yield(m, nil)
				if !stop && (ctx.Err() != nil || i&15 == 15 && ctxEnded(ctx) != nil) {
					// The loop ends by ctx even in the middle of a
					// long batch: the rest waits in the queue.
					err, end, stop = ctxEnded(ctx), true, true
				}
				if stop {
					rest := batch[i+1:]
					if ld != nil {
						// Lent messages do not outlive this batch: what
						// goes back to the queue must be owned.
						for j, r := range rest {
							rest[j] = r.clone()
						}
					}
					s.requeue(rest)
					clear(rest)
					if end {
						yield(nil, err)
					}
					return
				}
			}
			if end {
				if err != nil {
					yield(nil, err)
				}
				return
			}
		}
	}
}

// requeue puts messages taken but not yielded back at the queue's head.
func (s *Subscription) requeue(rest []*Msg) {
	if len(rest) == 0 {
		return
	}
	s.mu.Lock()
	q := make([]*Msg, 0, len(rest)+len(s.q))
	q = append(q, rest...)
	q = append(q, s.q...)
	s.q = q
	n := 0
	for _, m := range rest {
		n += m.pendingSize()
	}
	s.qBytes += n
	s.taken -= uint64(len(rest))
	if !s.closed {
		s.nc.pendingBytes.Add(int64(n))
	}
	s.mu.Unlock()
}

func (s *Subscription) stopConsuming() {
	s.mu.Lock()
	s.consuming = false
	s.mu.Unlock()
}

// nextBatch waits until at least one message is queued, then returns every
// queued message (at most the queue's limit), in order, in a slice the
// caller owns until its next call. buf is handed to the subscription to
// hold the next messages: pass the previous result (or nil) and do not use
// it afterwards. A done ctx ends it with ctx's error (matching ErrTimeout
// too at its deadline), messages queued or not; at the end of the
// subscription it returns ErrBadSubscription (or the close error), and
// while Messages or a handler consumes the subscription it returns
// ErrSubscriptionActive. For a lent subscription (SubscribeBatches or
// SubscribeBatchesOf with lent), the messages of the previous call are over.
func (s *Subscription) nextBatch(ctx context.Context, buf []*Msg) ([]*Msg, error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	if s.readByFunc() {
		return nil, ErrBadSubscription // its messages go to its function
	}
	s.mu.Lock()
	active := s.consuming
	s.mu.Unlock()
	if active {
		return nil, ErrSubscriptionActive
	}
	clear(buf)
	batch, end, err := s.take(ctx, buf)
	if len(batch) > 0 {
		return batch, nil
	}
	if end && err == nil {
		err = ErrBadSubscription
	}
	return nil, err
}

// readByFunc reports whether s's messages go to a function on the reading
// goroutine (deliverView, deliverMux) rather than to a queue.
func (s *Subscription) readByFunc() bool {
	m := s.mode.Load()
	return m == deliverView || m == deliverMux
}

// NextMsg returns the next message, waiting until ctx ends. A done ctx
// ends it with ctx's error, messages queued or not (at its deadline the
// error matches both ErrTimeout and context.DeadlineExceeded), so a loop
// of NextMsg calls ends by its context however fast messages arrive; to
// take a queued message without waiting, use TryNextMsg. At the end of
// the subscription it returns ErrBadSubscription (or the close error).
func (s *Subscription) NextMsg(ctx context.Context) (*Msg, error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	if s.readByFunc() {
		return nil, ErrBadSubscription // its messages go to its function
	}
	for {
		if err := ctxEnded(ctx); err != nil {
			return nil, err
		}
		m, ok, err := s.pop()
		if ok || err != nil {
			return m, err
		}
		select {
		case <-s.wake:
		case <-s.done:
		case <-ctx.Done():
		}
	}
}

// TryNextMsg returns the next queued message without waiting, and false
// when none is queued. It returns false also at the end of the
// subscription and while Messages or a handler consumes it (IsValid tells
// the end apart).
func (s *Subscription) TryNextMsg() (*Msg, bool) {
	if s.readByFunc() {
		return nil, false
	}
	m, ok, _ := s.pop()
	return m, ok
}

// pop takes the queue's first message (ok), or reports why there is none:
// nothing queued (no error), the end of the subscription, or another
// consumer.
func (s *Subscription) pop() (*Msg, bool, error) {
	s.mu.Lock()
	if s.consuming {
		s.mu.Unlock()
		return nil, false, ErrSubscriptionActive
	}
	if len(s.q) > 0 {
		m := s.q[0]
		s.q[0] = nil
		s.q = s.q[1:]
		n := m.pendingSize()
		s.qBytes -= n
		s.taken++
		s.releaseLocked(n)
		s.mu.Unlock()
		if s.lend.Load() != nil {
			// It may be lent: its memory is recycled at the next batch
			// of a Borrowed loop. One taken singly is a copy of its own.
			m = m.clone()
		}
		s.observeReceive(m)
		return m, true, nil
	}
	if s.closed {
		err := s.closeErr
		s.mu.Unlock()
		if err == nil {
			err = ErrBadSubscription
		}
		return nil, false, err
	}
	s.mu.Unlock()
	return nil, false, nil
}

// runHandler feeds a SubscribeFunc handler until the subscription ends.
func (s *Subscription) runHandler(f func(*Msg)) {
	defer close(s.handlerDone)
	ctx := context.Background()
	var batch []*Msg
	for {
		var end bool
		batch, end, _ = s.take(ctx, batch)
		for i, m := range batch {
			batch[i] = nil
			s.more.Store(i+1 < len(batch))
			s.handle(f, m)
		}
		s.more.Store(false)
		if end {
			return
		}
	}
}

// Unsubscribe removes the interest at once; queued messages are still
// delivered, then the iterator ends with no error.
func (s *Subscription) Unsubscribe() error {
	return s.nc.unsubscribe(s, 0)
}

// AutoUnsubscribe removes the subscription after max messages in total
// have been received, counting those already received. It survives
// reconnects: the remaining count is sent again. max is 1 to
// MaxAutoUnsubscribe: the server reads at most nine digits and takes a
// longer count as "unsubscribe now", so a larger max fails with
// ErrInvalidOption before anything is sent.
func (s *Subscription) AutoUnsubscribe(max int) error {
	if max <= 0 || max > MaxAutoUnsubscribe {
		return invalid("auto-unsubscribe max %d (1 to %d)", max, MaxAutoUnsubscribe)
	}
	return s.nc.unsubscribe(s, uint64(max))
}

// MaxAutoUnsubscribe is the largest count AutoUnsubscribe takes: the
// largest the server reads (nine digits).
const MaxAutoUnsubscribe = 999_999_999

// Drain stops interest and lets the messages already in flight arrive: it
// sends UNSUB, waits for the server to confirm everything sent before it
// (a PING/PONG round trip), then ends the subscription in order. Messages
// still queued are delivered to the consumer before its iterator ends.
// Drain returns when the subscription has ended, or when ctx ends.
func (s *Subscription) Drain(ctx context.Context) error {
	if ctx == nil {
		return ErrNilContext
	}
	if err := s.nc.unsubscribeDrain(ctx, s); err != nil {
		return err
	}
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// close ends the subscription with err (nil: orderly). Queued messages stay
// available to the consumer.
func (s *Subscription) close(err error) {
	s.mu.Lock()
	if s.closed {
		finish := s.closing
		s.closing = false
		s.mu.Unlock()
		if finish {
			s.finishClose()
		}
		return
	}
	s.closed = true
	s.closeErr = err
	s.endIdleHandlerLocked()
	// What is still queued no longer counts against the connection: it
	// waits for a consumer that may never come.
	s.nc.pendingBytes.Add(-int64(s.qBytes))
	s.mu.Unlock()
	s.finishClose()
}

// markClosed is the first half of close, for Close: s is closed, but
// close (the second half) wakes its consumer. Close calls both in turn,
// from one goroutine.
func (s *Subscription) markClosed(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	s.closing = true
	s.closeErr = err
	s.endIdleHandlerLocked()
	s.nc.pendingBytes.Add(-int64(s.qBytes))
}

// finishClose wakes whoever waits for s.
func (s *Subscription) finishClose() {
	close(s.done)
	if s.handlerIdleEnd {
		close(s.handlerDone)
	}
}

// releaseLocked returns n queued bytes to the connection's budget; after
// close they were already returned.
func (s *Subscription) releaseLocked(n int) {
	if !s.closed {
		s.nc.pendingBytes.Add(-int64(n))
	}
}

// Closed returns a channel closed when the subscription has ended. The
// handler of a SubscribeFunc subscription may still be working through
// the messages queued before the end: see HandlerDone.
func (s *Subscription) Closed() <-chan struct{} { return s.done }

// HandlerDone returns a channel closed once the subscription has ended and
// its SubscribeFunc (or QueueSubscribeFunc) handler has returned for the
// last time, every queued message handled. For a subscription without a
// handler goroutine it is Closed's channel. Waiting on it from
// the subscription's own handler never ends.
func (s *Subscription) HandlerDone() <-chan struct{} {
	if s.handlerDone != nil {
		return s.handlerDone
	}
	return s.done
}
