package ordered

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nuid"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/consumectl"
	"github.com/natsio/natsio/internal/deadline"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// Errors of ordered consumers.
var (
	// ErrNoMessages ends Messages and Consume when IdleTimeout passed
	// without a message. It is pull.ErrNoMessages.
	ErrNoMessages = pull.ErrNoMessages
	// ErrBusy: Messages or Consume was called while another read of the
	// same Consumer runs.
	ErrBusy = errors.New("ordered: a read of the consumer is already running")
	// ErrConsumerDeleted: the Consumer was deleted with Delete; no read can run on
	// it any more. It matches pull.ErrConsumerDeleted.
	ErrConsumerDeleted = fmt.Errorf("ordered: consumer deleted: %w", pull.ErrConsumerDeleted)
	// ErrNoConsumer: Info was asked between reads, when there is no
	// server-side consumer (a read deletes its own when it ends). It
	// matches jsapi.ErrConsumerNotFound.
	ErrNoConsumer = fmt.Errorf("ordered: no server-side consumer between reads: %w", jsapi.ErrConsumerNotFound)
)

// Defaults.
const (
	DefaultHeartbeat         = 5 * time.Second
	DefaultInactiveThreshold = 5 * time.Minute
	DefaultMaxMessages       = 500
)

// Config is what defines an ordered consumer at the server: every
// server-side consumer made for it has this configuration (and starts
// after the last message read, once one was). How messages are read is up
// to the options of Messages and Consume. Zero fields take defaults.
type Config struct {
	// FilterSubjects select the subjects read (default: all of the
	// stream's).
	FilterSubjects []string
	// DeliverPolicy and OptStartSeq / OptStartTime choose the first message
	// (default: the stream's first). An OptStartSeq or OptStartTime alone
	// implies its policy.
	DeliverPolicy jsapi.DeliverPolicy
	OptStartSeq   uint64
	OptStartTime  time.Time
	// HeadersOnly delivers the messages without their data.
	HeadersOnly  bool
	ReplayPolicy jsapi.ReplayPolicy
	// InactiveThreshold removes a server-side consumer nobody reads
	// (default 5 min).
	InactiveThreshold time.Duration
	// NamePrefix prefixes the generated consumer names (default none).
	NamePrefix string
}

// Consumer is an ordered view of a stream. Its reads (Messages, Consume)
// run one at a time; each resumes after the last message the previous one
// yielded. It is safe for concurrent use.
type Consumer struct {
	js     *jsapi.JS
	stream string
	cfg    Config

	mu       sync.Mutex
	running  bool
	stopRun  context.CancelCauseFunc // ends the running read (Delete)
	deleted  atomic.Bool             // by Delete; set under mu, read without it per message
	started  bool
	consumer string         // the current server-side consumer ("" none)
	fresh    *pull.Consumer // created, not read from yet: the next read's
	lastSeq  atomic.Uint64  // last stream sequence yielded (0: none yet)
	resets   atomic.Uint64
	skipped  atomic.Uint64

	initialPending uint64 // num_pending of the consumer New created (InitialPending)
}

// New makes an ordered consumer of stream and creates its first
// server-side consumer, which the first read (Messages or Consume) then
// uses. It fails with jsapi.ErrStreamNotFound for a missing stream,
// jsapi.ErrInvalidName for an invalid stream name or NamePrefix,
// conn.ErrInvalidOption for an invalid Config, the server's error for a
// configuration it refuses, and ctx's error; while the failure may pass
// (JetStream not answering, a timeout) it retries with backoff until ctx
// ends. Until it is read, the server-side consumer lasts InactiveThreshold;
// Delete removes it at once.
func New(ctx context.Context, js *jsapi.JS, stream string, cfg Config) (*Consumer, error) {
	if ctx == nil {
		return nil, conn.ErrNilContext
	}
	if js == nil {
		return nil, fmt.Errorf("%w: nil JS", conn.ErrInvalidOption)
	}
	if err := jsapi.ValidateName(stream); err != nil {
		return nil, err
	}
	if cfg.InactiveThreshold < 0 {
		return nil, fmt.Errorf("%w: InactiveThreshold %v", conn.ErrInvalidOption, cfg.InactiveThreshold)
	}
	if cfg.InactiveThreshold == 0 {
		cfg.InactiveThreshold = DefaultInactiveThreshold
	}
	c := &Consumer{js: js, stream: stream, cfg: cfg}
	cons, err := c.create(ctx, nil)
	if err != nil {
		return nil, deadline.Err(err)
	}
	c.initialPending = cons.CachedInfo().NumPending
	c.mu.Lock()
	c.fresh = cons
	c.mu.Unlock()
	return c, nil
}

// Name returns the name of the current server-side consumer, ""
// when there is none (between reads, after Delete).
func (c *Consumer) Name() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.consumer
}

// Resets reports how many times the consumer was recreated.
func (c *Consumer) Resets() uint64 { return c.resets.Load() }

// Skipped reports how many messages the reads skipped because the server
// did not deliver them (pull.ErrStrayMessage): messages on the consumer's
// pull inbox that are not statuses and whose reply is not a readable
// $JS.ACK subject, which another client that learned the inbox published.
// Each is also given to OnSkip.
func (c *Consumer) Skipped() uint64 { return c.skipped.Load() }

// LastSequence returns the stream sequence of the last message yielded.
func (c *Consumer) LastSequence() uint64 { return c.lastSeq.Load() }

// Info fetches the information of the current server-side consumer: the
// one New created until a read starts, then the one the running read
// uses (a recreation replaces it). A read deletes its consumer when it
// ends, so between reads there is none: Info fails with ErrNoConsumer,
// and with ErrConsumerDeleted after Delete. A consumer the server removed fails
// with jsapi.ErrConsumerNotFound.
func (c *Consumer) Info(ctx context.Context) (*jsapi.ConsumerInfo, error) {
	c.mu.Lock()
	name, deleted := c.consumer, c.deleted.Load()
	c.mu.Unlock()
	switch {
	case deleted:
		return nil, ErrConsumerDeleted
	case name == "":
		return nil, ErrNoConsumer
	}
	return c.js.Consumer(ctx, c.stream, name)
}

// Delete ends the ordered consumer: it deletes the current server-side
// consumer, ends a running read with ErrConsumerDeleted (a Consume's Err), and
// makes every later read and Info fail with ErrConsumerDeleted. Deleting again
// does nothing. It fails with the server's error for the deletion (a
// consumer already gone is not an error); the Consumer is ended anyway.
func (c *Consumer) Delete(ctx context.Context) error {
	if ctx == nil {
		return conn.ErrNilContext
	}
	c.mu.Lock()
	if c.deleted.Load() {
		c.mu.Unlock()
		return nil
	}
	c.deleted.Store(true)
	name, stop := c.consumer, c.stopRun
	c.consumer, c.fresh = "", nil
	c.mu.Unlock()
	if stop != nil {
		stop(ErrConsumerDeleted)
	}
	if name == "" {
		return nil
	}
	err := c.js.DeleteConsumer(ctx, c.stream, name)
	if errors.Is(err, jsapi.ErrConsumerNotFound) {
		return nil
	}
	return err
}

// begin marks a read as running. It returns the read's context, which
// Delete cancels.
func (c *Consumer) begin(ctx context.Context) (context.Context, context.CancelCauseFunc, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.deleted.Load():
		return nil, nil, ErrConsumerDeleted
	case c.running:
		return nil, nil, ErrBusy
	}
	rctx, cancel := context.WithCancelCause(ctx)
	c.running, c.stopRun = true, cancel
	return rctx, cancel, nil
}

// finish marks the running read as ended.
func (c *Consumer) finish(cancel context.CancelCauseFunc) {
	cancel(nil)
	c.mu.Lock()
	c.running, c.stopRun = false, nil
	c.mu.Unlock()
}

// Opt is an option of Messages and Consume: how the consumer is read.
// Options are plain values.
type Opt struct {
	kind optKind
	n    int
	d    time.Duration
	f    func(error)
}

type optKind uint8

const (
	optMaxMessages optKind = iota + 1
	optHeartbeat
	optReadAhead
	optBorrowed
	optIdleTimeout
	optUntilDrained
	optOnReset
	optOnSkip
)

// MaxMessages sets how many messages are kept requested (default 500).
func MaxMessages(n int) Opt { return Opt{kind: optMaxMessages, n: n} }

// Heartbeat sets the idle heartbeat asked of the server (default 5 s, at
// least 100 ms); two missed ones recreate the consumer.
func Heartbeat(d time.Duration) Opt { return Opt{kind: optHeartbeat, d: d} }

// ReadAhead lets the connection's reader goroutine read ahead while the
// loop body or handler works. By default the read reads the socket itself
// when its queue runs dry, which saves a goroutine hand-off per batch:
// right for small messages and little work each. Turn it on when each
// message costs much work (the object store does, to hash large chunks
// while the next ones are read). See pull.ReadAhead.
func ReadAhead(on bool) Opt {
	n := 0
	if on {
		n = 1
	}
	return Opt{kind: optReadAhead, n: n}
}

// Borrowed lends each message instead of handing over a copy: the message
// and every string and slice in it (Subject, Reply, Header, Data,
// Metadata) are valid only until the loop body or handler it was given to
// returns. Acknowledge it there, and copy (strings.Clone, bytes.Clone)
// anything kept longer. A borrowed message costs no copy and no
// allocation.
//
// The lending happens when the read reads the socket itself (not with
// ReadAhead); messages read ahead by the reader goroutine are copies,
// under the same contract. See pull.Borrowed.
func Borrowed() Opt { return Opt{kind: optBorrowed} }

// IdleTimeout ends the read with ErrNoMessages when no message arrives for
// d.
func IdleTimeout(d time.Duration) Opt { return Opt{kind: optIdleTimeout, d: d} }

// UntilDrained ends the read without error the moment it is caught up:
// when a delivery reports that nothing more is pending for the consumer
// (the server's per-delivery count, no timer) and consumer info confirms
// it (one request at the end of the read: the server may count a message
// stored just before that delivery only after it), or at once when
// nothing is pending as the read starts. "Caught up" is at delivery time: messages
// stored while the read runs, before the delivery that reports nothing
// pending, are yielded too. An empty stream yields nothing; a later read
// resumes after the last message yielded.
func UntilDrained() Opt { return Opt{kind: optUntilDrained} }

// OnReset is told why the consumer was recreated, on the read's goroutine,
// before reading goes on.
func OnReset(f func(reason error)) Opt { return Opt{kind: optOnReset, f: f} }

// OnSkip is told of each message the read skips because the server did
// not deliver it (reason matches pull.ErrStrayMessage; see Skipped), on
// the read's goroutine, before reading goes on. It must not block.
func OnSkip(f func(reason error)) Opt { return Opt{kind: optOnSkip, f: f} }

// settings are resolved read options.
type settings struct {
	maxMsgs   int
	hb        time.Duration
	readAhead bool
	borrowed  bool
	idle      time.Duration
	drained   bool
	onReset   func(error)
	onSkip    func(error)
}

func resolve(opts []Opt) (settings, error) {
	s := settings{maxMsgs: DefaultMaxMessages, hb: DefaultHeartbeat}
	for _, o := range opts {
		switch o.kind {
		case optMaxMessages:
			if o.n <= 0 {
				return s, fmt.Errorf("%w: MaxMessages %d", conn.ErrInvalidOption, o.n)
			}
			s.maxMsgs = o.n
		case optHeartbeat:
			if o.d < 100*time.Millisecond {
				return s, fmt.Errorf("%w: Heartbeat %v (at least 100ms)", conn.ErrInvalidOption, o.d)
			}
			s.hb = o.d
		case optReadAhead:
			s.readAhead = o.n == 1
		case optBorrowed:
			s.borrowed = true
		case optIdleTimeout:
			if o.d <= 0 {
				return s, fmt.Errorf("%w: IdleTimeout %v", conn.ErrInvalidOption, o.d)
			}
			s.idle = o.d
		case optUntilDrained:
			s.drained = true
		case optOnReset:
			s.onReset = o.f
		case optOnSkip:
			s.onSkip = o.f
		default:
			return s, fmt.Errorf("%w: zero Opt", conn.ErrInvalidOption)
		}
	}
	return s, nil
}

// errRecreate is the cause that ends one server-side consumer's reading.
var errRecreate = errors.New("ordered: recreate consumer")

// errDrained ends a read once drained.
var errDrained = errors.New("ordered: drained")

// Messages returns a single-use iterator over the stream in order; see the
// package documentation for how it ends. Errors are terminal:
// jsapi.ErrStreamNotFound, ErrNoMessages (IdleTimeout), ErrConsumerDeleted,
// conn.ErrClosed, ErrBusy, conn.ErrInvalidOption (before any request), or
// ctx's error. A message whose delivery metadata cannot be read (its reply
// is not a readable $JS.ACK subject: the server did not send it) is
// skipped, counted by Skipped and given to OnSkip; a gap it hides is still
// caught by the consumer sequence of the next message. Consume is the same
// read with a handler.
func (c *Consumer) Messages(ctx context.Context, opts ...Opt) iter.Seq2[*jsapi.Msg, error] {
	return func(yield func(*jsapi.Msg, error) bool) {
		if ctx == nil {
			yield(nil, conn.ErrNilContext)
			return
		}
		s, err := resolve(opts)
		if err != nil {
			yield(nil, err)
			return
		}
		rctx, cancel, err := c.begin(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		defer c.finish(cancel)
		r := &reader{c: c, s: s}
		defer r.cleanup()
		r.run(rctx, yield)
	}
}

// Consume runs handler on each message of the stream, in order, one at a
// time, on a goroutine of its own, until Stop, Drain, ctx's end or a
// terminal error: the read of Messages with a handler in place of the loop
// body, with the same options (Borrowed messages are valid until the
// handler returns), the same recreations and the same terminal errors,
// which end it and are then reported by Err.
//
// Invalid options (conn.ErrInvalidOption), a nil handler, a ctx already done,
// another read running (ErrBusy) or a deleted Consumer (ErrConsumerDeleted) fail
// Consume at once, with no goroutine started.
func (c *Consumer) Consume(ctx context.Context, handler func(*jsapi.Msg), opts ...Opt) (*pull.ConsumeContext, error) {
	if ctx == nil {
		return nil, conn.ErrNilContext
	}
	if handler == nil {
		return nil, fmt.Errorf("%w: nil handler", conn.ErrInvalidOption)
	}
	s, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	rctx, cancel, err := c.begin(ctx)
	if err != nil {
		return nil, err
	}
	drain := make(chan struct{})
	var once sync.Once
	ctl := consumectl.New(cancel, func() { once.Do(func() { close(drain) }) }, nil)
	cc, stopped, finish := (*pull.ConsumeContext)(ctl), ctl.Stopped, ctl.Finish
	r := &reader{c: c, s: s, drain: drain, stopped: stopped}
	go func() {
		var final error
		r.run(rctx, func(m *jsapi.Msg, err error) bool {
			if err != nil {
				final = err
				return false
			}
			consumectl.Process(c.js.Observer(), handler, m) // the reader checked for Stop (reader.read)
			return true
		})
		r.cleanup()
		c.finish(cancel)
		if stopped() || ctx.Err() != nil {
			final = nil // stopped, or ctx ended: not a failure
		}
		finish(final)
	}()
	return cc, nil
}

// reader is one read (a Messages or a Consume call).
type reader struct {
	c        *Consumer
	s        settings
	drain    <-chan struct{} // closed by ConsumeContext.Drain (nil for Messages)
	stopped  func() bool     // reports ConsumeContext.Stop (nil for Messages)
	cons     *pull.Consumer
	expected uint64        // next consumer sequence expected
	activity atomic.Uint64 // messages read, counted only with an idle timeout
}

// draining reports whether Drain was called.
func (r *reader) draining() bool {
	select {
	case <-r.drain:
		return true
	default:
		return false
	}
}

func (r *reader) run(ctx context.Context, yield func(*jsapi.Msg, error) bool) {
	var idleStop func()
	if r.s.idle > 0 {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		idleStop = r.watchIdle(ctx, cancel)
		defer idleStop()
	}
	for {
		if r.draining() {
			return
		}
		info, err := r.create(ctx)
		if errors.Is(err, errDrained) {
			return
		}
		if err != nil {
			yield(nil, r.endErr(ctx, err))
			return
		}
		if r.s.drained && info.NumPending == 0 && !r.pendingNow(ctx) {
			return // caught up: nothing (more) to read
		}
		again, err := r.read(ctx, yield)
		if err != nil {
			yield(nil, r.endErr(ctx, err))
			return
		}
		if !again || r.draining() {
			return
		}
		r.c.resets.Add(1)
	}
}

// pendingNow reports whether the current server-side consumer has messages
// pending now: its creation info may be older than the read (New made the
// first one), and a drained read ends when it is caught up at the time it
// reads, not at the time the consumer was made. It reports false when the
// question gets no answer (the read then ends as caught up: it must not
// wait on an empty stream).
func (r *reader) pendingNow(ctx context.Context) bool {
	ictx, cancel := context.WithTimeout(ctx, r.c.js.Timeout())
	defer cancel()
	info, err := r.cons.Info(ictx)
	return err == nil && info.NumPending > 0
}

// caughtUp confirms a delivery's report that nothing more is pending: the
// server counts a consumer's pending messages as it learns of them, so a
// delivery can report 0 while a message stored before it is still being
// counted. Consumer info asked afterwards has counted it, or has already
// sent it (its last delivered stream sequence is past seq). It reports
// true when the question gets no answer: a drained read must not wait.
func (r *reader) caughtUp(ctx context.Context, seq uint64) bool {
	ictx, cancel := context.WithTimeout(ctx, r.c.js.Timeout())
	defer cancel()
	info, err := r.cons.Info(ictx)
	return err != nil || (info.NumPending == 0 && info.Delivered.Stream <= seq)
}

// endErr turns the reason reading stopped into the error to yield.
func (r *reader) endErr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && errors.Is(cause, ErrNoMessages) {
		return ErrNoMessages
	}
	return deadline.Err(err)
}

// watchIdle cancels ctx with ErrNoMessages when no message arrives for the
// idle timeout. It returns a function that stops it.
func (r *reader) watchIdle(ctx context.Context, cancel context.CancelCauseFunc) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		step := max(r.s.idle/8, time.Millisecond)
		t := time.NewTicker(step)
		defer t.Stop()
		last, since := r.activity.Load(), time.Now()
		for {
			select {
			case <-t.C:
			case <-done:
				return
			case <-ctx.Done():
				return
			}
			if n := r.activity.Load(); n != last {
				last, since = n, time.Now()
			} else if time.Since(since) >= r.s.idle {
				cancel(ErrNoMessages)
				return
			}
		}
	}()
	return func() { close(done); wg.Wait(); cancel(nil) }
}

// consumerConfig is the configuration of the next server-side consumer.
func (c *Consumer) consumerConfig(name string) jsapi.ConsumerConfig {
	o := &c.cfg
	cfg := jsapi.ConsumerConfig{
		Name:              name,
		AckPolicy:         jsapi.AckNone,
		MaxDeliver:        1,
		MemoryStorage:     true,
		Replicas:          1,
		InactiveThreshold: o.InactiveThreshold,
		HeadersOnly:       o.HeadersOnly,
		ReplayPolicy:      o.ReplayPolicy,
		DeliverPolicy:     o.DeliverPolicy,
		OptStartSeq:       o.OptStartSeq,
		OptStartTime:      o.OptStartTime,
	}
	if cfg.DeliverPolicy == "" && cfg.OptStartSeq > 0 {
		cfg.DeliverPolicy = jsapi.DeliverByStartSequence
	} else if cfg.DeliverPolicy == "" && !cfg.OptStartTime.IsZero() {
		cfg.DeliverPolicy = jsapi.DeliverByStartTime
	}
	if len(o.FilterSubjects) == 1 {
		cfg.FilterSubject = o.FilterSubjects[0]
	} else if len(o.FilterSubjects) > 1 {
		cfg.FilterSubjects = o.FilterSubjects
	} else if cfg.DeliverPolicy == jsapi.DeliverLastPerSubject {
		// The server wants a filter with this policy; without one the
		// caller means every subject.
		cfg.FilterSubject = ">"
	}
	c.mu.Lock()
	if c.started {
		// Resume after the last message yielded.
		cfg.DeliverPolicy = jsapi.DeliverByStartSequence
		cfg.OptStartSeq = c.lastSeq.Load() + 1
		cfg.OptStartTime = time.Time{}
	}
	c.mu.Unlock()
	return cfg
}

// create makes a new server-side consumer, retrying with backoff while the
// failure may pass; a missing stream is terminal. It gives up with
// errDrained when drain is closed during a pause.
func (c *Consumer) create(ctx context.Context, drain <-chan struct{}) (*pull.Consumer, error) {
	var backoff time.Duration
	for {
		name := c.cfg.NamePrefix + nuid.Next()
		cfg := c.consumerConfig(name)
		// Each attempt gets the API timeout even when ctx has a far
		// deadline: a request nobody answers (no meta leader) must not
		// hold up the retries until the caller's deadline.
		actx, acancel := context.WithTimeout(ctx, c.js.Timeout())
		var cons *pull.Consumer
		info, err := c.js.CreateConsumer(actx, c.stream, cfg)
		acancel()
		if err == nil {
			cons, err = pull.FromInfo(c.js, info)
		}
		if err == nil {
			c.mu.Lock()
			if c.deleted.Load() {
				c.mu.Unlock()
				deleteConsumer(c.js, c.stream, name)
				return nil, ErrConsumerDeleted
			}
			c.consumer = name
			c.started = true
			if cfg.DeliverPolicy == jsapi.DeliverByStartSequence && c.lastSeq.Load() == 0 && cfg.OptStartSeq > 1 {
				c.lastSeq.Store(cfg.OptStartSeq - 1)
			}
			c.mu.Unlock()
			return cons, nil
		}
		if errors.Is(err, jsapi.ErrStreamNotFound) || errors.Is(err, conn.ErrClosed) ||
			errors.Is(err, jsapi.ErrInvalidName) || errors.Is(err, conn.ErrInvalidOption) {
			return nil, err
		}
		var ae *jsapi.APIError
		if errors.As(err, &ae) && !ae.Temporary() && ae.Code == 400 {
			return nil, err // a configuration the server will never accept
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		backoff = min(max(2*backoff, 100*time.Millisecond), 5*time.Second)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, context.Cause(ctx)
		case <-drain:
			t.Stop()
			return nil, errDrained
		}
	}
}

// deleteConsumer deletes a server-side consumer, best effort.
func deleteConsumer(js *jsapi.JS, stream, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = js.DeleteConsumer(ctx, stream, name)
}

// create makes the server-side consumer to read from next: the one New
// made, if no read has used it yet, or a new one.
func (r *reader) create(ctx context.Context) (*jsapi.ConsumerInfo, error) {
	r.cleanup()
	r.c.mu.Lock()
	cons := r.c.fresh
	r.c.fresh = nil
	r.c.mu.Unlock()
	if cons == nil {
		var err error
		if cons, err = r.c.create(ctx, r.drain); err != nil {
			return nil, err
		}
	}
	r.cons = cons
	r.expected = 1
	return cons.CachedInfo(), nil
}

// cleanup deletes the current server-side consumer, best effort.
func (r *reader) cleanup() {
	if r.cons == nil {
		return
	}
	name := r.cons.Name()
	r.cons = nil
	r.c.mu.Lock()
	if r.c.consumer == name {
		r.c.consumer = ""
	}
	r.c.mu.Unlock()
	deleteConsumer(r.c.js, r.c.stream, name)
}

// read yields from the current consumer. It returns again=true when the
// consumer must be recreated, or a terminal error.
func (r *reader) read(ctx context.Context, yield func(*jsapi.Msg, error) bool) (again bool, err error) {
	inner, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	onErr := func(err error) {
		switch {
		case errors.Is(err, pull.ErrNoHeartbeat):
			cancel(fmt.Errorf("%w: %w", errRecreate, err))
		case errors.Is(err, pull.ErrStrayMessage):
			// On this goroutine, from the pull loop (pull.Messages).
			r.skip(err)
		}
	}
	opts := []pull.Opt{pull.MaxMessages(r.s.maxMsgs),
		pull.Expires(max(2*r.s.hb, time.Second)), pull.Heartbeat(r.s.hb), pull.OnError(onErr),
		pull.ReadAhead(r.s.readAhead)}
	if r.s.borrowed {
		opts = append(opts, pull.Borrowed())
	}
	if r.drain != nil {
		opts = append(opts, pull.DrainOn(r.drain))
	}
	for m, err := range r.cons.Messages(inner, opts...) {
		if err != nil {
			if ctx.Err() != nil {
				return false, context.Cause(ctx)
			}
			if cause := context.Cause(inner); errors.Is(cause, errRecreate) {
				r.reset(cause) // carries the reason, e.g. pull.ErrNoHeartbeat
				return true, nil
			}
			if errors.Is(err, pull.ErrConsumerDeleted) {
				r.reset(errors.Join(errRecreate, err))
				return true, nil
			}
			return false, err
		}
		md, merr := m.Metadata()
		if merr != nil {
			// Not from the server (the pull loop skips these already): a
			// gap it hides shows in the next message's consumer
			// sequence.
			r.skip(fmt.Errorf("%w: %w", pull.ErrStrayMessage, merr))
			continue
		}
		if r.s.idle > 0 { // watchIdle's only input: no locked add otherwise
			r.activity.Add(1)
		}
		if md.ConsumerSeq != r.expected {
			r.reset(errors.New("ordered: consumer sequence gap"))
			return true, nil
		}
		r.expected++
		if r.c.deleted.Load() {
			return false, ErrConsumerDeleted // no message after Delete
		}
		if r.stopped != nil && r.stopped() {
			// Not given to the handler: a later read starts with it.
			return false, nil
		}
		r.c.lastSeq.Store(md.StreamSeq) // one writer: the running reader
		if !yield(m, nil) {
			return false, nil
		}
		if r.s.drained && md.NumPending == 0 && r.caughtUp(ctx, md.StreamSeq) {
			return false, nil
		}
	}
	return false, nil // drained (pull.DrainOn)
}

// skip counts a message skipped because the server did not deliver it.
func (r *reader) skip(reason error) {
	r.c.skipped.Add(1)
	if f := r.s.onSkip; f != nil {
		f(reason)
	}
}

func (r *reader) reset(reason error) {
	if f := r.s.onReset; f != nil {
		f(reason)
	}
}
