package pull

import (
	"context"
	"errors"
	"fmt"
	"github.com/natsio/natsio/internal/connx"
	"github.com/natsio/natsio/internal/jsx"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

// Messages returns a single-use iterator over the consumer's messages. It
// keeps MaxMessages (and MaxBytes) requested with pulls that expire after
// Expires and ask for heartbeats, pulling again when fewer than Threshold
// remain. It heals from reconnects, expired pulls, 409 statuses, pin
// mismatches and missed heartbeats by pulling again (reporting each but
// the expired pulls to OnError). A message on its reply subject that the
// server did not deliver (ErrStrayMessage: not a status, and its reply is
// not a readable $JS.ACK subject) is skipped, counted in Stats.Skipped and
// reported to OnError. It ends only on a terminal error, which
// it yields once: ErrConsumerDeleted (a "409 Consumer Deleted" ends it only
// once consumer info confirms it; otherwise it is reported to OnError as
// ErrUnconfirmedDeletion), jsapi.ErrStreamNotFound, a terminal
// *StatusError, conn.ErrClosed, or ctx's error. Invalid options are that
// error, yielded before any request. Breaking out of the loop stops it
// (messages requested and not yet yielded are redelivered after AckWait);
// with DrainOn it ends without an error once drained. No goroutine is left
// behind either way. Consume is the same loop with a handler.
func (c *Consumer) Messages(ctx context.Context, opts ...Opt) iter.Seq2[*jsapi.Msg, error] {
	return func(yield func(*jsapi.Msg, error) bool) {
		if ctx == nil {
			yield(nil, conn.ErrNilContext)
			return
		}
		s, err := resolve("messages", c.config(), opts)
		if err != nil {
			yield(nil, err)
			return
		}
		e, err := c.startEngine(ctx, s)
		if err != nil {
			yield(nil, err)
			return
		}
		defer e.stop()
		e.run(ctx, yield)
	}
}

// engine is the state of one Messages iteration.
type engine struct {
	c      *Consumer
	s      settings
	sub    *conn.Subscription
	prefix string // inbox prefix; pulls reply to prefix + epoch

	mu sync.Mutex
	// epoch numbers the generation of pulls: every pull of one epoch
	// replies to prefix + epoch (reply), and reset starts a new epoch, so
	// statuses for forgotten pulls are recognised and ignored. One reply
	// subject for many pulls, not one per pull: the server delivers to a
	// subject it has routed before (the ordered read-through ran 5–12 %
	// faster with the shared subject in four interleaved comparisons), and
	// nothing accumulates per pull.
	epoch        uint64
	reply        string
	pendingMsgs  int // requested, not yet yielded
	pendingBytes int
	terminal     error
	laterArmed   bool // a delayed top-up is scheduled (topUpLaterLocked)
	body         []byte
	// draining: no more pulls; the subscription is being drained (drain).
	draining    bool
	drainCancel context.CancelFunc
	// stopping: stop has begun; no goroutine may be started.
	stopping bool

	// confirmedAt is when consumer info last said the consumer exists
	// after a "409 Consumer Deleted" (onDeleted); confirmArmed: one more
	// question is scheduled.
	confirmedAt  time.Time
	confirmArmed bool

	activity atomic.Uint64 // messages and statuses received
	// life ends when stop begins: it bounds the requests of the engine's
	// goroutines.
	life    context.Context
	endLife context.CancelFunc
	done    chan struct{}
	wg      sync.WaitGroup
	unhook  func()
}

func (c *Consumer) startEngine(ctx context.Context, s settings) (*engine, error) {
	e := &engine{c: c, s: s, done: make(chan struct{})}
	e.life, e.endLife = context.WithCancel(ctx)
	e.prefix = c.nc.NewInbox() + "."
	e.newEpochLocked()
	// Messages are built straight into jsapi.Msgs (no conn.Msg of their
	// own to allocate and copy).
	_, lazy := readMode(c.config(), s)
	alloc, shell := jsx.NewSlab(c.nc, s.maxMsgs, lazy)
	if !s.borrowed {
		shell = nil
	}
	sub, err := connx.SubscribeBatches(c.nc, e.prefix+"*", alloc, shell)
	if err != nil {
		e.endLife()
		return nil, err
	}
	// The queue never holds more than what was requested, plus statuses.
	// Its byte bound counts each message's subject, ack reply and
	// per-message overhead besides the data (conn.PendingLimits): allow
	// 1 KiB of those per message, so a large MaxMessages of small messages
	// is never dropped as a slow consumer.
	_ = sub.SetPendingLimits(s.maxMsgs+1024, max(64<<20, 2*s.maxBytes)+(s.maxMsgs+1024)<<10)
	e.sub = sub
	e.unhook = c.nc.OnReconnect(func() { e.reset(ErrReconnected) })
	if err := e.topUp(); err != nil {
		e.stop()
		return nil, err
	}
	e.wg.Add(1)
	go e.watch(ctx)
	if s.drainOn != nil {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			select {
			case <-s.drainOn:
				e.drain()
			case <-e.done:
			}
		}()
	}
	return e, nil
}

// readMode chooses how a Messages loop's acknowledgements go out (lazy),
// and reports inline: whether the loop counts as one that waits on its
// queue rather than working long per message (ReadAhead unset or off).
//
// Acknowledgements are queued lazily (jsx.NewSlab with lazy), so that they
// travel with the next pull rather than each batch of them waking the
// connection's flusher. That is safe only when the server cannot stop for
// want of those acknowledgements: with MaxAckPending at least twice
// MaxMessages (or unlimited). Below that, or when ReadAhead(true) asks
// for it, each acknowledgement is written at once.
func readMode(cfg *jsapi.ConsumerConfig, s settings) (inline, lazy bool) {
	if cfg.AckPolicy == jsapi.AckNone {
		return s.readAhead <= 0, false
	}
	safe := cfg.MaxAckPending < 0 || cfg.MaxAckPending >= 2*s.maxMsgs
	switch {
	case s.readAhead > 0:
		return false, false
	case s.readAhead < 0:
		return true, safe
	}
	return safe, safe
}

func (e *engine) stop() {
	select {
	case <-e.done:
		return
	default:
	}
	e.mu.Lock()
	e.stopping = true
	if e.drainCancel != nil {
		e.drainCancel()
	}
	e.mu.Unlock()
	close(e.done)
	e.endLife()
	e.unhook()
	_ = e.sub.Unsubscribe()
	e.wg.Wait()
}

func (e *engine) report(err error) {
	if e.s.onError != nil {
		e.s.onError(err)
	}
}

// topUp sends a pull for what is missing below the limits. It is a no-op
// while more than Threshold remain requested.
func (e *engine) topUp() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.topUpLocked(false)
}

func (e *engine) topUpLocked(force bool) error {
	if e.terminal != nil || e.draining {
		return nil
	}
	if !force && e.pendingMsgs >= e.s.threshold && (e.s.maxBytes == 0 || e.pendingBytes >= e.s.maxBytes/2) {
		return nil
	}
	batch := e.s.maxMsgs - e.pendingMsgs
	maxBytes := 0
	if e.s.maxBytes > 0 {
		maxBytes = e.s.maxBytes - e.pendingBytes
		if maxBytes <= 0 {
			return nil
		}
	}
	if batch <= 0 {
		return nil
	}
	e.body = appendPullRequest(e.body[:0], batch, maxBytes, e.s.expires, e.s.hb, false, &e.s, e.c.pin(e.s.group))
	e.pendingMsgs += batch
	e.pendingBytes += maxBytes
	// Written by this goroutine when no write is under way: waking the
	// flusher for one pull costs more than the write.
	if err := connx.PublishNow(e.c.nc, e.c.next, e.reply, e.body); err != nil {
		e.pendingMsgs -= batch
		e.pendingBytes -= maxBytes
		if errors.Is(err, conn.ErrClosed) {
			return err
		}
		// Disconnected with a full buffer: the reconnect hook pulls again.
		return nil
	}
	e.c.count.pulls.Add(1)
	return nil
}

// newEpochLocked forgets every pull sent so far: later pulls reply to a
// subject of their own, and statuses for the earlier ones are ignored.
// Messages still delivered for those pulls are yielded as usual.
func (e *engine) newEpochLocked() {
	e.epoch++
	e.reply = string(appendToken([]byte(e.prefix), e.epoch))
}

func appendToken(b []byte, tok uint64) []byte {
	var d [20]byte
	i := len(d)
	for {
		i--
		d[i] = byte('0' + tok%10)
		tok /= 10
		if tok == 0 {
			break
		}
	}
	return append(b, d[i:]...)
}

// reset forgets every pull (they are gone with a reconnect, a leadership
// change or missed heartbeats) and pulls afresh. cause is reported.
func (e *engine) reset(cause error) {
	e.c.count.resets.Add(1)
	if errors.Is(cause, ErrNoHeartbeat) {
		e.c.count.missedHeartbeats.Add(1)
	}
	e.mu.Lock()
	e.newEpochLocked()
	e.pendingMsgs, e.pendingBytes = 0, 0
	_ = e.topUpLocked(true)
	e.mu.Unlock()
	if cause != nil {
		e.report(cause)
	}
}

// drain ends the iteration in order: no more pulls are sent, the
// subscription is drained (UNSUB, then a round trip to the server, so that
// whatever the server sent before is received), and run yields what was
// received, then ends with no error. It does not wait. The pulls' other
// messages are left to redelivery.
func (e *engine) drain() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.draining || e.stopping || e.terminal != nil {
		return
	}
	e.draining = true
	ctx, cancel := context.WithTimeout(context.Background(), e.c.js.Timeout())
	e.drainCancel = cancel
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer cancel()
		// Whatever the outcome (a timeout, a lost connection), the
		// subscription has ended when Drain returns.
		_ = e.sub.Drain(ctx)
	}()
}

// fail ends the iteration with a terminal error.
func (e *engine) fail(err error) {
	e.mu.Lock()
	if e.terminal == nil {
		e.terminal = err
	}
	e.mu.Unlock()
	// Wake the iterator: its subscription ends in order.
	_ = e.sub.Unsubscribe()
}

// watch pulls again after two idle-heartbeat intervals without any traffic.
// It samples the activity counter eight times per interval (no timer is
// touched per message), so silence is noticed between 2 and 2¼ intervals
// after the last message or heartbeat.
func (e *engine) watch(ctx context.Context) {
	defer e.wg.Done()
	step := max(e.s.hb/8, 10*time.Millisecond)
	t := time.NewTicker(step)
	defer t.Stop()
	last := e.activity.Load()
	lastSeen := time.Now()
	for {
		select {
		case <-t.C:
		case <-e.done:
			return
		case <-ctx.Done():
			return
		}
		now := e.activity.Load()
		if now != last || !e.c.nc.IsConnected() {
			last, lastSeen = now, time.Now()
			continue
		}
		if time.Since(lastSeen) >= 2*e.s.hb {
			lastSeen = time.Now()
			e.reset(ErrNoHeartbeat)
		}
	}
}

// run yields messages until a terminal condition or the caller stops.
//
// It takes what the subscription has queued in batches, and counts a
// batch's messages as received before yielding them: the pulls are topped
// up against what the server still owes, as if read straight off the
// socket, not against what the caller has processed. (Counting at yield
// time would let the server run dry whenever a read's worth of messages
// waits in the queue.)
func (e *engine) run(ctx context.Context, yield func(*jsapi.Msg, error) bool) {
	var batch []*conn.Msg
	var endErr error // why the subscription ended
	for {
		var err error
		batch, err = connx.NextBatch(e.sub, ctx, batch)
		if err != nil {
			endErr = err
			break
		}
		// stray: messages the server did not deliver (ErrStrayMessage),
		// skipped below. They neither use up what the pulls requested
		// nor count as activity: another client's messages must not hide
		// missed heartbeats.
		n, size, stray := 0, 0, 0
		for _, m := range batch {
			switch {
			case isStatus(m):
			case !delivered(m):
				stray++
			default:
				n++
				size += len(m.Data) + len(m.Header.Block()) + len(m.Subject) + len(m.Reply)
			}
		}
		if stray < len(batch) {
			e.activity.Add(1)
		}
		if n > 0 {
			e.c.count.messages.Add(uint64(n))
			e.mu.Lock()
			// Never below zero: messages of pulls that a reset forgot
			// (and released) may still arrive.
			e.pendingMsgs = max(e.pendingMsgs-n, 0)
			if e.s.maxBytes > 0 {
				e.pendingBytes = max(e.pendingBytes-size, 0)
			}
			_ = e.topUpLocked(false)
			e.mu.Unlock()
		}
		for _, m := range batch {
			if st, ok := parseStatus(m); ok {
				e.c.count.noteStatus(st)
				if err := e.onStatus(ctx, m.Subject, st); err != nil {
					e.fail(err)
				}
				continue
			}
			if stray > 0 && !delivered(m) {
				e.c.count.skipped.Add(1)
				e.report(ErrStrayMessage)
				continue
			}
			e.c.notePin(e.s.group, m)
			if !yield(jsx.Receive(e.c.obs, jsx.FromSlab(m)), nil) {
				return
			}
		}
	}
	e.mu.Lock()
	err, drained := e.terminal, e.draining
	e.mu.Unlock()
	if err == nil && drained {
		return // drained: everything received was yielded
	}
	if err == nil && !errors.Is(endErr, conn.ErrBadSubscription) {
		err = endErr // ctx's cause, or the connection's end
	}
	if err == nil {
		err = context.Cause(ctx)
	}
	if err == nil {
		err = conn.ErrClosed
	}
	yield(nil, err)
}

// onStatus handles a status for the pull whose reply subject is subj. It
// returns a terminal error, or nil to go on.
func (e *engine) onStatus(ctx context.Context, subj string, st status) error {
	serr := st.err()
	if serr == nil {
		return nil // heartbeat
	}
	var se *StatusError
	isStatus := errors.As(serr, &se)
	switch {
	case errors.Is(serr, conn.ErrNoResponders):
		// Nobody serves the consumer: gone, or JetStream unreachable now.
		if why := e.c.whyNoResponders(ctx); why != nil {
			return why
		}
		e.report(serr)
		e.retryLater(ctx)
		return nil
	case errors.Is(serr, ErrConsumerDeleted):
		return e.onDeleted(ctx, serr)
	case isStatus && se.Terminal():
		return serr
	case errors.Is(serr, ErrLeadershipChange):
		e.reset(serr)
		return nil
	case errors.Is(serr, ErrPinMismatch):
		e.c.setPin(e.s.group, "")
	case errors.Is(serr, ErrMessageTooLarge) && st.hasPending && st.pendingBytes >= e.s.maxBytes:
		// A pull of the full MaxBytes that had taken nothing (its unused
		// budget is all of it) cannot take the next message: no pull can.
		// A pull that had spent part of its budget just ends.
		return serr
	}
	tok, ok := proto.ParseUint([]byte(strings.TrimPrefix(subj, e.prefix)))
	if !ok {
		return nil // not the reply subject of a pull
	}
	// Statuses that end a pull at once without progress (too many waiting
	// pulls, a message larger than what is left of a pull's MaxBytes): pull
	// again after a pause, not at once, or the loop could hammer the
	// server.
	later := errors.Is(serr, ErrMaxWaiting) || errors.Is(serr, ErrMessageTooLarge)
	// The pull ended: release what it still had requested. A status
	// without the counts (the server refused a pull outright: too many
	// waiting pulls, a pin mismatch) cannot be matched to one of the
	// epoch's pulls: forget them all and pull afresh.
	e.mu.Lock()
	if tok != e.epoch {
		e.mu.Unlock()
		return nil // a status for a pull already forgotten
	}
	if st.hasPending {
		e.pendingMsgs = max(e.pendingMsgs-st.pendingMsgs, 0)
		e.pendingBytes = max(e.pendingBytes-st.pendingBytes, 0)
	} else {
		e.c.count.resets.Add(1)
		e.newEpochLocked()
		e.pendingMsgs, e.pendingBytes = 0, 0
	}
	if later {
		e.topUpLaterLocked(ctx)
	} else {
		_ = e.topUpLocked(false)
	}
	e.mu.Unlock()
	if !errors.Is(serr, ErrRequestExpired) {
		e.report(serr)
	}
	return nil
}

// topUpLaterLocked tops the pulls up after retryPause, once however many
// statuses ask for it meanwhile.
func (e *engine) topUpLaterLocked(ctx context.Context) {
	if e.laterArmed {
		return
	}
	e.laterArmed = true
	e.afterPause(ctx, func() {
		e.mu.Lock()
		e.laterArmed = false
		_ = e.topUpLocked(false)
		e.mu.Unlock()
	})
}

// retryLater pulls again after a pause, for a JetStream that is briefly
// unavailable (a leader election).
func (e *engine) retryLater(ctx context.Context) {
	e.afterPause(ctx, func() { e.reset(nil) })
}

// retryPause is how long Messages waits before pulling again after a
// status that ended a pull without progress.
const retryPause = 250 * time.Millisecond

// afterPause runs f after retryPause on a goroutine of the engine, unless
// the engine stops or ctx ends first.
func (e *engine) afterPause(ctx context.Context, f func()) { e.after(ctx, retryPause, f) }

// after runs f after d on a goroutine of the engine, unless the engine
// stops or ctx ends first.
func (e *engine) after(ctx context.Context, d time.Duration, f func()) {
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			f()
		case <-e.done:
		case <-ctx.Done():
		}
	}()
}

// confirmEvery bounds how often a Messages loop asks the server whether its
// consumer exists after "409 Consumer Deleted" statuses.
const confirmEvery = time.Second

// onDeleted handles a "409 Consumer Deleted". Any client that learns the
// pull's reply subject (whoever may subscribe to the consumer's
// $JS.API.CONSUMER.MSG.NEXT subject) can publish one, so it ends the loop
// only once consumer info confirms that the consumer is gone. While the
// consumer exists the status is ignored (the pulls stand) and reported to
// OnError as ErrUnconfirmedDeletion. The server is asked at most once per
// confirmEvery: a status within that time of the last answer schedules one
// more question at its end, so a flood of forged statuses costs one request
// a second and a real deletion is still noticed.
func (e *engine) onDeleted(ctx context.Context, serr error) error {
	e.mu.Lock()
	if wait := confirmEvery - time.Since(e.confirmedAt); !e.confirmedAt.IsZero() && wait > 0 {
		if !e.confirmArmed {
			e.confirmArmed = true
			e.after(ctx, wait, func() {
				e.mu.Lock()
				e.confirmArmed = false
				e.mu.Unlock()
				if err := e.confirmDeleted(e.life, serr); err != nil {
					e.fail(err)
				}
			})
		}
		e.mu.Unlock()
		return nil
	}
	e.mu.Unlock()
	return e.confirmDeleted(ctx, serr)
}

// confirmDeleted asks the server whether the consumer is gone. It returns
// serr (or jsapi.ErrStreamNotFound) when it is, and nil when the consumer
// exists or the question got no answer.
func (e *engine) confirmDeleted(ctx context.Context, serr error) error {
	if why := e.c.whyNoResponders(ctx); why != nil {
		if errors.Is(why, ErrConsumerDeleted) {
			return serr
		}
		return why
	}
	if ctx.Err() != nil {
		return nil // stopping
	}
	e.mu.Lock()
	e.confirmedAt = time.Now()
	e.mu.Unlock()
	e.report(fmt.Errorf("%w: %v", ErrUnconfirmedDeletion, serr))
	return nil
}
