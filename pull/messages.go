package pull

import (
	"context"
	"errors"
	"github.com/natsio/natsio/internal/deadline"
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
// remain. It heals from reconnects, expired pulls, statuses that end one
// pull (leadership change, too many waiting pulls, message too large, pin
// mismatch, a status it does not know), and missed heartbeats by pulling
// again (reporting each but the expired pulls to OnError). A message on
// its reply subject that the server did not deliver (ErrStrayMessage: not
// a status, and its reply is not a readable $JS.ACK subject) is skipped,
// counted in Stats.Skipped and reported to OnError.
//
// No status alone ends it: anyone who may subscribe to the consumer's
// pull subject learns its reply subjects and can publish statuses there.
// A status claiming a terminal condition (409 Consumer Deleted, 409
// Consumer is push based, 400, 412, 409 Exceeded MaxRequest…, 503) ends it
// only once consumer info confirms the condition (asked at most once a
// second); otherwise it is ignored, counted in Stats.Unconfirmed and
// reported to OnError as ErrUnconfirmedStatus. It ends on a terminal
// error, which it yields once: ErrConsumerDeleted, jsapi.ErrStreamNotFound,
// ErrPushConsumer or ErrBadPull (each confirmed), conn.ErrClosed, or ctx's
// error. Invalid options are that error, yielded before any request.
//
// Breaking out of the loop stops it, and its pulls are withdrawn at the
// server (an UNSUB and a round trip, bounded by the API timeout) before
// the loop returns: a message published after that goes to the next
// reader at once; messages requested and already sent, not yet yielded,
// are redelivered after AckWait. With DrainOn it ends without an error
// once drained. No goroutine is left behind either way. Consume is the
// same loop with a handler.
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
		e.run(ctx, yield)
		// Ended by a break, a terminal error or a drain, the loop
		// withdraws its pulls at the server before it returns, so they
		// take no later message; ended by ctx, it returns at once.
		e.stop(ctx.Err() == nil)
	}
}

// engine is the state of one Messages iteration.
type engine struct {
	c       *Consumer
	s       settings
	sub     *conn.Subscription
	batches *jsapi.Batches // sub's messages
	prefix  string         // inbox prefix; pulls reply to prefix + epoch

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
	laterArmed   bool      // a delayed top-up is scheduled (topUpLaterLocked)
	retryArmed   bool      // a delayed reset is scheduled (retryLater)
	statusPull   time.Time // the last pull made at once after a status (onStatus)
	body         []byte
	// draining: no more pulls; the subscription is being drained (drain).
	draining    bool
	drainCancel context.CancelFunc
	// stopping: stop has begun; no goroutine may be started.
	stopping bool

	// confirmedAt is when consumer info last contradicted (or did not
	// answer) a status claiming the loop's end (onClaim); confirmArmed:
	// one more question is scheduled.
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
	b, err := jsapi.SubscribeBatches(c.nc, e.prefix+"*", s.maxMsgs, lazy, s.borrowed)
	if err != nil {
		e.endLife()
		return nil, err
	}
	sub := b.Subscription()
	e.batches = b
	// The queue never holds more than what was requested, plus statuses.
	// Its byte bound counts each message's subject, ack reply and
	// per-message overhead besides the data (conn.PendingLimits): allow
	// 1 KiB of those per message, so a large MaxMessages of small messages
	// is never dropped as a slow consumer.
	_ = sub.SetPendingLimits(s.maxMsgs+1024, max(64<<20, 2*s.maxBytes)+(s.maxMsgs+1024)<<10)
	e.sub = sub
	e.unhook = c.nc.OnReconnect(func() { e.reset(ErrReconnected) })
	if err := e.topUp(); err != nil {
		e.stop(false)
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
// Acknowledgements are queued lazily (jsapi.SubscribeBatches with lazyAcks), so that they
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

// stop ends the engine: no more pulls, its goroutines ended, its
// subscription ended — withdrawn at the server (withdraw) with wd.
func (e *engine) stop(wd bool) {
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
	if wd {
		e.withdraw()
	} else {
		_ = e.sub.Unsubscribe()
	}
	e.wg.Wait()
}

// withdraw ends the engine's subscription and, with a round trip, its
// pulls at the server (withdraw in fetchsub.go).
func (e *engine) withdraw() { withdraw(context.Background(), e.c.js, e.sub) }

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
	if err := e.c.nc.PublishUnobserved(e.c.next, e.reply, nil, e.body, conn.WriteNow); err != nil {
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
	var batch []*jsapi.Msg
	var endErr error // why the subscription ended
	for {
		// ctx first: while messages keep arriving the subscription always
		// has some queued, and the loop must still end by its deadline.
		if err := ctx.Err(); err != nil {
			endErr = context.Cause(ctx)
			break
		}
		var err error
		batch, err = e.batches.Next(ctx)
		if err != nil {
			endErr = err
			break
		}
		// stray: messages the server did not deliver (ErrStrayMessage),
		// skipped below. They neither use up what the pulls requested
		// nor count as activity: another client's messages must not hide
		// missed heartbeats.
		n, size, stray := 0, 0, 0
		for _, jm := range batch {
			m := &jm.Msg
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
		for _, jm := range batch {
			m := &jm.Msg
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
			if ctx.Err() != nil {
				break // the rest of the batch is redelivered after AckWait
			}
			e.c.notePin(e.s.group, m)
			if !yield(receive(e.c.obs, jm), nil) {
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
	yield(nil, deadline.Err(err))
}

// onStatus handles a status for the pull whose reply subject is subj. It
// returns a terminal error, or nil to go on. No status alone ends the
// loop: one that claims a terminal condition is confirmed with consumer
// info first (onClaim, confirm.go); the others end one pull at most.
func (e *engine) onStatus(ctx context.Context, subj string, st status) error {
	serr := st.err()
	if serr == nil {
		return nil // heartbeat
	}
	if errors.Is(serr, conn.ErrNoResponders) || claimsEnd(errors.Unwrap(serr)) {
		return e.onClaim(ctx, serr)
	}
	if st.code == 404 || st.code == 408 && !st.hasPending {
		// The loop's pulls are not no-wait: the server sends them no 404,
		// and every 408 it sends them carries the pull's counts. Another
		// client's: ignored.
		e.c.count.unconfirmed.Add(1)
		e.report(unconfirmed(serr))
		return nil
	}
	if errors.Is(serr, ErrPinMismatch) {
		e.c.setPin(e.s.group, "")
	}
	if errors.Is(serr, ErrUnknownStatus) {
		e.c.count.unknown.Add(1)
	}
	tok, ok := proto.ParseUint([]byte(strings.TrimPrefix(subj, e.prefix)))
	if !ok {
		return nil // not the reply subject of a pull
	}
	// Statuses that end a pull at once without progress (too many waiting
	// pulls, a message larger than what is left of a pull's MaxBytes, a
	// leadership change, a status this client does not know): pull again
	// after a pause, not at once, or the loop could hammer the server —
	// and a client that forges such statuses could make it pull in a loop.
	//
	// An expired pull is pulled for at once, but at most once per
	// retryPause: statuses with counts cannot be told from the server's,
	// and a client that forges them must not drive a pull loop.
	later := !errors.Is(serr, ErrRequestExpired) || time.Since(e.statusPull) < retryPause
	// The pull ended: release what it still had requested. A status
	// without the counts (the server refused a pull outright: too many
	// waiting pulls, a pin mismatch, a leadership change) cannot be
	// matched to one of the epoch's pulls: forget them all and pull
	// afresh.
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
		e.statusPull = time.Now()
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
	e.onceLaterLocked(ctx, &e.laterArmed, func() {
		e.mu.Lock()
		_ = e.topUpLocked(false)
		e.mu.Unlock()
	})
}

// retryLater pulls afresh after a pause, for a JetStream that is briefly
// unavailable (a leader election). However many ask meanwhile, one pull is
// made.
func (e *engine) retryLater(ctx context.Context) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.onceLaterLocked(ctx, &e.retryArmed, func() { e.reset(nil) })
}

// onceLaterLocked runs f after retryPause unless *armed says it is already
// scheduled; armed is cleared before f runs. e.mu is held.
func (e *engine) onceLaterLocked(ctx context.Context, armed *bool, f func()) {
	if *armed {
		return
	}
	*armed = true
	e.afterPause(ctx, func() {
		e.mu.Lock()
		*armed = false
		e.mu.Unlock()
		f()
	})
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

// confirmEvery bounds how often a Messages loop asks the server whether a
// status that claims its end tells the truth.
const confirmEvery = time.Second

// onClaim handles a status that claims a condition ending the loop: 409
// Consumer Deleted, 409 Consumer is push based, a rejected pull (400, 412,
// 409 Exceeded MaxRequest…) or 503. Any client that learns the pull's
// reply subject can publish one, so it ends the loop only once consumer
// info confirms the condition (confirm). While the consumer exists and
// accepts the loop's pulls, the status is ignored (the pulls stand),
// counted and reported to OnError as ErrUnconfirmedStatus; a 503 whose
// question got no answer (JetStream unreachable) pulls afresh after a
// pause. The server is asked at most once per confirmEvery: a status
// within that time of the last answer schedules one more question at its
// end, so a flood of forged statuses costs one request a second and a
// real condition is still noticed.
func (e *engine) onClaim(ctx context.Context, serr error) error {
	e.mu.Lock()
	if wait := confirmEvery - time.Since(e.confirmedAt); !e.confirmedAt.IsZero() && wait > 0 {
		e.c.count.unconfirmed.Add(1)
		if !e.confirmArmed {
			e.confirmArmed = true
			e.after(ctx, wait, func() {
				e.mu.Lock()
				e.confirmArmed = false
				e.mu.Unlock()
				if err := e.confirmClaim(e.life, serr); err != nil {
					e.fail(err)
				}
			})
		}
		e.mu.Unlock()
		return nil
	}
	e.mu.Unlock()
	return e.confirmClaim(ctx, serr)
}

// confirmClaim asks the server whether the condition serr claims holds. It
// returns the error that ends the loop when it does, and nil when the
// consumer exists and accepts the loop's pulls, or the question got no
// answer.
func (e *engine) confirmClaim(ctx context.Context, serr error) error {
	end, answered := e.c.confirm(ctx, serr, &e.s, e.s.maxMsgs, e.s.expires)
	if end != nil {
		return end
	}
	if ctx.Err() != nil {
		return nil // stopping
	}
	e.mu.Lock()
	e.confirmedAt = time.Now()
	e.mu.Unlock()
	if !answered && errors.Is(serr, conn.ErrNoResponders) {
		// JetStream did not answer either: the pull may well have
		// reached nobody. Pull afresh after a pause.
		e.report(serr)
		e.retryLater(ctx)
		return nil
	}
	e.c.count.unconfirmed.Add(1)
	e.report(unconfirmed(serr))
	return nil
}
