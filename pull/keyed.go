package pull

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

// Defaults of Keyed.
const (
	DefaultKeyedWorkers     = 32
	DefaultKeyedBufferMsgs  = 1000
	DefaultKeyedBufferBytes = 64 << 20
)

// Keyed configures ConsumeKeyed: how a message's key is found and how much
// it may run and hold at once. The zero value keys by the whole subject,
// runs up to DefaultKeyedWorkers handlers at once and buffers up to
// DefaultKeyedBufferMsgs messages and DefaultKeyedBufferBytes bytes.
type Keyed struct {
	// Key returns a message's key. Nil: KeyToken, or the whole subject.
	// It runs on the goroutine reading the consumer and must not block.
	Key func(*jsapi.Msg) string
	// KeyToken keys by one token of the subject, counted from 1 ("orders.42.paid"
	// with KeyToken 2 is keyed "42"); a negative value counts from the end
	// (-1 is the last token). A subject without that token is keyed by the
	// whole subject. Ignored when Key is set.
	KeyToken int
	// Workers bounds the handlers running at once (0: DefaultKeyedWorkers).
	Workers int
	// MaxBufferedMsgs and MaxBufferedBytes bound the messages received and
	// not yet handled, over all keys (0: the defaults; a message larger than
	// MaxBufferedBytes is still taken when nothing else is buffered).
	// When either is reached, reading the consumer waits: nothing is dropped,
	// and the server keeps what was not pulled.
	MaxBufferedMsgs  int
	MaxBufferedBytes int
	// MaxPerKey bounds the messages buffered for one key (0: no bound but
	// MaxBufferedMsgs). When a key's queue is full, reading waits until its
	// handler has taken one.
	MaxPerKey int
	// NakDelay is the delay of the Nak sent for a failed message and for the
	// buffered messages of its key (0: redeliver at once).
	NakDelay time.Duration
	// HoldFor, when set, is asked about each message as it arrives; a
	// positive answer d holds back every handler not yet started for d,
	// while messages keep arriving, each key's queue stays in stream order
	// and the messages waiting are kept in progress (so a hold longer than
	// AckWait has none redelivered). It runs on the goroutine reading the
	// consumer and must not block.
	HoldFor func(*jsapi.Msg) time.Duration
	// HoldConfirmed makes a hold last, past its time, until the consumer
	// confirms that nothing it delivered is outstanding elsewhere: its
	// NumAckPending is no more than the messages waiting here that it had
	// delivered by then, asked of the server every tenth of AckWait (10 ms
	// to 250 ms). What another reader received and left unacknowledged is
	// thus back here, queued in stream order, before any handler starts,
	// however late the server redelivers it. A reader taking over a pinned
	// consumer holds so (a group member does). A hold still unconfirmed
	// twice the consumer's longest redelivery wait (AckWait, or its longest
	// BackOff) past its time ends anyway, counted in
	// KeyedStats.HoldsUnconfirmed: messages delivered and still on their
	// way to the handlers (beyond the buffer limits) are not counted as
	// here, so keep MaxBufferedMsgs at least the consumer's MaxAckPending.
	HoldConfirmed bool
}

// ErrKeyedBorrowed: ConsumeKeyed was given the Borrowed option; its
// messages outlive the reading loop, so they cannot be lent.
var ErrKeyedBorrowed = fmt.Errorf("%w: ConsumeKeyed keeps messages past the read loop: Borrowed cannot be used", conn.ErrInvalidOption)

// KeyedHandler handles one message of ConsumeKeyed. Returning nil
// acknowledges the message (unless the handler already did); an error naks
// it. ctx is the context ConsumeKeyed was given: Stop and Drain let running
// handlers finish, and acknowledge, undisturbed.
type KeyedHandler func(ctx context.Context, m *jsapi.Msg) error

// KeyedContext controls a ConsumeKeyed. Its methods may be called from any
// goroutine, the handlers' included, and more than once.
type KeyedContext struct {
	cancel  context.CancelFunc
	drainCh chan struct{}
	drainMu sync.Once
	closed  chan struct{}
	err     error

	mu      sync.Mutex
	cond    *sync.Cond
	queues  map[string]*keyQueue
	ready   []*keyQueue // keys with a message waiting and no handler running
	nmsgs   int
	nbytes  int
	held    bool      // no handler starts: a hold lasts
	holdEnd time.Time // the hold's time is up
	holdGen uint64    // counts the holds started or lengthened
	reading bool      // the reading loop has not ended
	stopped bool
	// startHold starts the goroutine that ends a hold (kc.held false
	// before, true after).
	startHold func()
	st        KeyedStats
}

// KeyedStats are the counters of a ConsumeKeyed.
type KeyedStats struct {
	// Handled counts messages whose handler returned nil; Failed those whose
	// handler returned an error; Deferred the buffered messages of a failed
	// key that were naked, unhandled, so that the key's order holds.
	Handled, Failed, Deferred uint64
	// MaxBuffered is the most messages buffered at once; MaxRunning the
	// most handlers running at once.
	MaxBuffered, MaxRunning int
	// Holds counts the holds (Keyed.HoldFor) that ended; HoldsUnconfirmed
	// those with Keyed.HoldConfirmed that ended without the confirmation.
	Holds, HoldsUnconfirmed uint64
	running                 int
}

type keyQueue struct {
	key     string
	msgs    []*jsapi.Msg
	running bool
	// naked holds the stream sequences of the key's messages naked after a
	// failure and not back yet, with when to stop waiting for them; while
	// it is not empty the key's later messages are naked too, and the
	// smallest is the next one handled.
	naked map[uint64]time.Time
}

// hold records that the message m of the key was naked and is expected
// back, unless it ran out of deliveries.
func (q *keyQueue) hold(md jsapi.Metadata, r *keyRules) {
	if md.StreamSeq == 0 || (r.maxDeliver > 0 && md.NumDelivered >= uint64(r.maxDeliver)) {
		return
	}
	if q.naked == nil {
		q.naked = map[uint64]time.Time{}
	}
	q.naked[md.StreamSeq] = time.Now().Add(r.wait)
}

// admit reports whether a message with metadata md may join the key's
// queue now; false means it must be naked, to come back after the
// key's earlier naked messages.
func (q *keyQueue) admit(md jsapi.Metadata, r *keyRules) bool {
	if len(q.naked) == 0 {
		return true
	}
	now := time.Now()
	first := uint64(0)
	for seq, until := range q.naked {
		if now.After(until) {
			delete(q.naked, seq) // not coming back (deleted, acked elsewhere)
			continue
		}
		if first == 0 || seq < first {
			first = seq
		}
	}
	switch {
	case first == 0 || md.StreamSeq < first:
		return true
	case md.StreamSeq == first:
		delete(q.naked, first)
		return true
	default:
		q.hold(md, r)
		return false
	}
}

// keyRules are what ConsumeKeyed knows of the consumer.
type keyRules struct {
	maxDeliver int
	ackWait    time.Duration
	wait       time.Duration // how long a naked message may take to come back
	recheck    time.Duration // how often an unconfirmed hold asks again
	unconfirm  time.Duration // how long past its time a hold waits for confirmation
	created    time.Time     // the consumer's creation: a hold is confirmed by it only
}

// ConsumeKeyed reads the consumer with Messages (opts are its options;
// Borrowed is refused with ErrKeyedBorrowed) and runs handler on many
// messages at once, but on one message of each key at a time, in the order
// they arrived: messages of different keys run in parallel on up to
// cfg.Workers goroutines, messages of one key one after the other.
//
// A message is acknowledged after its handler returned nil (an Ack, or
// nothing when the handler acknowledged it itself) and naked when it returned
// an error. When a handler fails, the messages of its key already buffered
// are naked too, unhandled, and so is each later arrival of the key until
// the naked ones have come back, each handled in stream order: the key's
// order holds across redeliveries. Each such deferral counts as a delivery
// towards MaxDeliver. A naked message that had reached the consumer's
// MaxDeliver does not come back, and the key goes on without it, as it
// does when one has not come back within twice the AckWait.
// Order holds within one ConsumeKeyed: give each key to one reader (one
// ConsumeKeyed per consumer, or a partitioned group).
//
// Memory is bounded by cfg's buffer limits, and the server-side window by
// the consumer's MaxAckPending: keep it above MaxBufferedMsgs plus
// MaxMessages or the reader waits for acknowledgements.
//
// Errors: invalid options and a nil handler fail at once, with nothing
// started. The loop ends on Stop, Drain, ctx's end or a terminal error of
// Messages, reported by Err once Closed is closed. On Stop or ctx's end the
// messages buffered and not yet handled are naked; handlers already running
// finish first.
func (c *Consumer) ConsumeKeyed(ctx context.Context, handler KeyedHandler, cfg Keyed, opts ...Opt) (*KeyedContext, error) {
	if handler == nil {
		return nil, fmt.Errorf("%w: nil handler", conn.ErrInvalidOption)
	}
	for _, o := range opts {
		if o.kind == optBorrowed {
			return nil, ErrKeyedBorrowed
		}
	}
	if cfg.Workers < 0 || cfg.MaxBufferedMsgs < 0 || cfg.MaxBufferedBytes < 0 || cfg.MaxPerKey < 0 || cfg.NakDelay < 0 {
		return nil, fmt.Errorf("%w: negative Keyed limit", conn.ErrInvalidOption)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if cfg.Workers == 0 {
		cfg.Workers = DefaultKeyedWorkers
	}
	if cfg.MaxBufferedMsgs == 0 {
		cfg.MaxBufferedMsgs = DefaultKeyedBufferMsgs
	}
	if cfg.MaxBufferedBytes == 0 {
		cfg.MaxBufferedBytes = DefaultKeyedBufferBytes
	}
	if cfg.MaxPerKey == 0 || cfg.MaxPerKey > cfg.MaxBufferedMsgs {
		cfg.MaxPerKey = cfg.MaxBufferedMsgs
	}
	keyOf := cfg.Key
	if keyOf == nil {
		tok := cfg.KeyToken
		keyOf = func(m *jsapi.Msg) string { return subjectToken(m.Subject, tok) }
	}
	rules := &keyRules{ackWait: 30 * time.Second}
	redeliver := time.Duration(0) // the longest wait before a redelivery
	if info := c.CachedInfo(); info != nil {
		rules.created = info.Created
		rules.maxDeliver = info.Config.MaxDeliver
		if info.Config.AckWait > 0 {
			rules.ackWait = info.Config.AckWait
		}
		for _, b := range info.Config.BackOff {
			redeliver = max(redeliver, b)
		}
	}
	rules.wait = 2*rules.ackWait + cfg.NakDelay
	rules.recheck = min(max(rules.ackWait/10, 10*time.Millisecond), 250*time.Millisecond)
	rules.unconfirm = 2 * max(redeliver, rules.ackWait)

	runCtx, cancel := context.WithCancel(ctx)
	kc := &KeyedContext{cancel: cancel, drainCh: make(chan struct{}), closed: make(chan struct{}),
		queues: map[string]*keyQueue{}, reading: true}
	kc.cond = sync.NewCond(&kc.mu)
	opts = append(opts[:len(opts):len(opts)], DrainOn(kc.drainCh))
	seq := c.Messages(runCtx, opts...)

	var wg sync.WaitGroup
	for range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			kc.work(ctx, handler, cfg, rules)
		}()
	}
	var holding sync.WaitGroup
	kc.startHold = func() {
		holding.Add(1)
		go func() {
			defer holding.Done()
			kc.holdLoop(runCtx, c, cfg, rules)
		}()
	}
	go func() {
		err := kc.read(runCtx, seq, keyOf, cfg, rules)
		kc.mu.Lock()
		kc.reading = false
		if err != nil && kc.err == nil {
			kc.err = err
			kc.stopped = true
		}
		kc.cond.Broadcast()
		kc.mu.Unlock()
		wg.Wait()
		kc.nakLeft(cfg)
		cancel()
		holding.Wait() // startHold runs on the reading goroutine only
		close(kc.closed)
	}()
	// Wake waiters when ctx ends.
	go func() {
		select {
		case <-runCtx.Done():
			kc.mu.Lock()
			kc.stopped = true
			kc.cond.Broadcast()
			kc.mu.Unlock()
		case <-kc.closed:
		}
	}()
	return kc, nil
}

// subjectToken returns the tok'th token of subject (1-based, negative from
// the end), or subject when tok is 0 or out of range.
func subjectToken(subject string, tok int) string {
	if tok == 0 {
		return subject
	}
	n := strings.Count(subject, ".") + 1
	if tok < 0 {
		tok = n + tok + 1
	}
	if tok < 1 || tok > n {
		return subject
	}
	rest := subject
	for range tok - 1 {
		rest = rest[strings.IndexByte(rest, '.')+1:]
	}
	if i := strings.IndexByte(rest, '.'); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// keyLen is how many messages key has waiting or running. kc.mu is held.
func (kc *KeyedContext) keyLen(key string) int {
	if q := kc.queues[key]; q != nil {
		return len(q.msgs)
	}
	return 0
}

func streamSeq(m *jsapi.Msg) uint64 {
	md, _ := m.Metadata()
	return md.StreamSeq
}

func msgSize(m *jsapi.Msg) int { return len(m.Subject) + len(m.Data) + m.Header.EncodedLen() }

// read takes messages from the consumer into the per-key queues, waiting
// while the buffer or the message's key queue is full.
func (kc *KeyedContext) read(ctx context.Context, seq func(func(*jsapi.Msg, error) bool), keyOf func(*jsapi.Msg) string, cfg Keyed, rules *keyRules) error {
	var rerr error
	seq(func(m *jsapi.Msg, err error) bool {
		if err != nil {
			if ctx.Err() == nil {
				rerr = err
			}
			return false
		}
		key := keyOf(m)
		size := msgSize(m)
		md, _ := m.Metadata()
		kc.mu.Lock()
		defer kc.mu.Unlock()
		// Look the key's queue up after waiting: a worker drops a queue it
		// emptied, and a second queue for one key would run it twice.
		for !kc.stopped && (kc.keyLen(key) >= cfg.MaxPerKey || kc.nmsgs >= cfg.MaxBufferedMsgs ||
			(kc.nmsgs > 0 && kc.nbytes+size > cfg.MaxBufferedBytes)) {
			kc.cond.Wait()
		}
		q := kc.queues[key]
		if q == nil {
			q = &keyQueue{key: key}
			kc.queues[key] = q
		}
		if kc.stopped {
			_ = nak(m, cfg.NakDelay)
			return false
		}
		if !q.admit(md, rules) {
			// A later message of a key whose naked messages have not come back.
			kc.st.Deferred++
			_ = nak(m, cfg.NakDelay)
			return true
		}
		if cfg.HoldFor != nil {
			if d := cfg.HoldFor(m); d > 0 {
				kc.hold(d)
			}
		}
		// Keep the key's queue in stream order (a redelivery of an older
		// message can arrive after newer ones); the running head stays.
		pos, lo := len(q.msgs), 0
		if q.running {
			lo = 1
		}
		for pos > lo && streamSeq(q.msgs[pos-1]) > md.StreamSeq {
			pos--
		}
		if pos > lo && streamSeq(q.msgs[pos-1]) == md.StreamSeq {
			// A redelivery of a message still waiting here: the newer
			// delivery replaces it.
			kc.nbytes += size - msgSize(q.msgs[pos-1])
			q.msgs[pos-1] = m
			return true
		}
		q.msgs = slices.Insert(q.msgs, pos, m)
		kc.nmsgs++
		kc.nbytes += size
		kc.st.MaxBuffered = max(kc.st.MaxBuffered, kc.nmsgs)
		if !q.running && len(q.msgs) == 1 {
			kc.ready = append(kc.ready, q)
			kc.cond.Broadcast()
		}
		return true
	})
	return rerr
}

func nak(m *jsapi.Msg, d time.Duration) error {
	if m.Acked() {
		return nil
	}
	if d > 0 {
		return m.NakWithDelay(d)
	}
	return m.Nak()
}

// work runs handlers for ready keys until the reading has ended and
// nothing is left, or the ConsumeKeyed is stopped.
func (kc *KeyedContext) work(ctx context.Context, handler KeyedHandler, cfg Keyed, rules *keyRules) {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	for {
		for (len(kc.ready) == 0 || kc.held) && !kc.stopped && (kc.reading || kc.nmsgs > 0) {
			kc.cond.Wait()
		}
		if kc.stopped || len(kc.ready) == 0 {
			return
		}
		q := kc.ready[0]
		kc.ready[0] = nil
		kc.ready = kc.ready[1:]
		m := q.msgs[0]
		q.running = true
		kc.st.running++
		kc.st.MaxRunning = max(kc.st.MaxRunning, kc.st.running)
		kc.mu.Unlock()

		err := handler(ctx, m)
		if err == nil && !m.Acked() {
			err = m.Ack()
		}
		md, _ := m.Metadata()

		kc.mu.Lock()
		kc.st.running--
		q.running = false
		q.msgs[0] = nil
		q.msgs = q.msgs[1:]
		kc.nmsgs--
		kc.nbytes -= msgSize(m)
		if err == nil {
			kc.st.Handled++
		} else {
			kc.st.Failed++
			// Keep the key's order: nak the failed message, then what is
			// buffered behind it, and the later arrivals until it comes
			// back. The lock is held, so a redelivery cannot overtake.
			_ = nak(m, cfg.NakDelay)
			q.hold(md, rules)
			for i, later := range q.msgs {
				_ = nak(later, cfg.NakDelay)
				lmd, _ := later.Metadata()
				q.hold(lmd, rules)
				kc.nmsgs--
				kc.nbytes -= msgSize(later)
				kc.st.Deferred++
				q.msgs[i] = nil
			}
			q.msgs = q.msgs[:0]
		}
		if len(q.msgs) > 0 {
			kc.ready = append(kc.ready, q)
		} else if len(q.naked) == 0 {
			delete(kc.queues, q.key)
		}
		kc.cond.Broadcast()
	}
}

// hold holds handlers back for at least d. kc.mu is held.
func (kc *KeyedContext) hold(d time.Duration) {
	until := time.Now().Add(d)
	if kc.held && !until.After(kc.holdEnd) {
		return
	}
	kc.holdEnd = until
	kc.holdGen++
	if !kc.held {
		kc.held = true
		kc.startHold()
	}
}

// holdLoop ends a hold: once its time is up and, with HoldConfirmed, the
// consumer has confirmed it (or could not in rules.unconfirm). Meanwhile
// it tells the server every ackWait/3 that the messages waiting here are
// in progress, so that a hold longer than AckWait does not have them
// redelivered.
func (kc *KeyedContext) holdLoop(ctx context.Context, c *Consumer, cfg Keyed, rules *keyRules) {
	every := max(rules.ackWait/3, 10*time.Millisecond)
	nextProgress := time.Now().Add(every)
	var giveUp time.Time
	kc.mu.Lock()
	defer kc.mu.Unlock()
	for {
		if kc.stopped {
			kc.held = false
			return
		}
		now := time.Now()
		if !now.Before(nextProgress) {
			kc.inProgress()
			nextProgress = now.Add(every)
		}
		wait := kc.holdEnd.Sub(now)
		if wait <= 0 {
			confirmed := !cfg.HoldConfirmed
			if !confirmed {
				if giveUp.IsZero() {
					giveUp = kc.holdEnd.Add(rules.unconfirm)
				}
				gen, waiting := kc.holdGen, kc.waitingSeqs()
				kc.mu.Unlock()
				confirmed = confirmHold(ctx, c, rules.created, waiting)
				kc.mu.Lock()
				if kc.holdGen != gen {
					giveUp = time.Time{} // lengthened meanwhile: wait for its new end
					continue
				}
				if !confirmed && time.Now().After(giveUp) {
					kc.st.HoldsUnconfirmed++
					confirmed = true
				}
			}
			if confirmed {
				kc.held = false
				kc.st.Holds++
				kc.cond.Broadcast()
				return
			}
			wait = rules.recheck
		}
		wait = min(wait, time.Until(nextProgress))
		kc.mu.Unlock()
		t := time.NewTimer(max(wait, 0))
		select {
		case <-ctx.Done():
			t.Stop()
			kc.mu.Lock()
			kc.held = false
			return // the ConsumeKeyed is ending; its workers are stopped
		case <-t.C:
		}
		kc.mu.Lock()
	}
}

// inProgress tells the server that the messages waiting here are in
// progress. kc.mu is held.
func (kc *KeyedContext) inProgress() {
	for _, q := range kc.queues {
		for i, m := range q.msgs {
			if i > 0 || !q.running {
				_ = m.InProgress()
			}
		}
	}
}

// waitingSeqs returns the consumer sequences of the messages waiting here
// (not running). kc.mu is held.
func (kc *KeyedContext) waitingSeqs() []uint64 {
	var seqs []uint64
	for _, q := range kc.queues {
		for i, m := range q.msgs {
			if i > 0 || !q.running {
				md, _ := m.Metadata()
				seqs = append(seqs, md.ConsumerSeq)
			}
		}
	}
	return seqs
}

// confirmHold reports whether the consumer has nothing delivered and
// unacknowledged but the messages waiting here (their consumer sequences,
// taken before asking): its NumAckPending counts every message delivered
// up to its Delivered.Consumer and not acknowledged, including what
// another reader left (until it is redelivered, here, with a later
// sequence). Messages still on their way here count against it, so it
// errs on holding longer. A consumer of the same name created since
// (created differs) confirms nothing: this one was deleted, and the loop
// is about to end.
func confirmHold(ctx context.Context, c *Consumer, created time.Time, waiting []uint64) bool {
	rctx, cancel := context.WithTimeout(ctx, c.js.Timeout())
	defer cancel()
	info, err := c.js.Consumer(rctx, c.stream, c.name)
	if err != nil || !created.IsZero() && !info.Created.Equal(created) {
		return false
	}
	here := 0
	for _, s := range waiting {
		if s != 0 && s <= info.Delivered.Consumer {
			here++
		}
	}
	return info.NumAckPending <= here
}

// nakLeft naks what is still buffered once every worker has returned.
func (kc *KeyedContext) nakLeft(cfg Keyed) {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	for _, q := range kc.queues {
		for _, m := range q.msgs {
			_ = nak(m, cfg.NakDelay)
		}
		q.msgs = nil
	}
	kc.ready = nil
	kc.nmsgs, kc.nbytes = 0, 0
}

// Stop ends the ConsumeKeyed: no handler starts any more, the running ones
// finish, and the messages buffered and not yet handled are naked so the
// server redelivers them at once. Stop does not wait: Closed tells when
// everything has ended. After Stop, Err reports nil.
func (kc *KeyedContext) Stop() { kc.cancel() }

// Drain ends the ConsumeKeyed in order: no more pulls are sent, every
// message received is still handled, and then it ends. It does not wait:
// Closed tells when the last handler has returned.
func (kc *KeyedContext) Drain() { kc.drainMu.Do(func() { close(kc.drainCh) }) }

// Closed returns a channel closed once every handler has returned for the
// last time and every goroutine of the ConsumeKeyed has ended.
func (kc *KeyedContext) Closed() <-chan struct{} { return kc.closed }

// Err reports why the ConsumeKeyed ended, once Closed is closed (nil before):
// nil after Stop, Drain or the end of its context, otherwise the terminal
// error of Messages (ErrConsumerDeleted, jsapi.ErrStreamNotFound…).
func (kc *KeyedContext) Err() error {
	select {
	case <-kc.closed:
		return kc.err
	default:
		return nil
	}
}

// Stats returns the ConsumeKeyed's counters.
func (kc *KeyedContext) Stats() KeyedStats {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	s := kc.st
	s.running = 0
	return s
}
