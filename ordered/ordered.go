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
	"github.com/natsio/natsio/internal/pause"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// ErrNoMessages ends Messages when IdleTimeout passed without a message.
var ErrNoMessages = errors.New("ordered: no messages within the idle timeout")

// Defaults.
const (
	DefaultHeartbeat         = 5 * time.Second
	DefaultInactiveThreshold = 5 * time.Minute
	DefaultMaxMessages       = 500
)

// Options configure an ordered consumer. Zero fields take defaults.
type Options struct {
	FilterSubjects []string
	// DeliverPolicy and OptStartSeq / OptStartTime choose the first message
	// (default: the stream's first).
	DeliverPolicy jsapi.DeliverPolicy
	OptStartSeq   uint64
	OptStartTime  time.Time
	HeadersOnly   bool
	ReplayPolicy  jsapi.ReplayPolicy
	// Heartbeat is the idle heartbeat asked of the server; two missed ones
	// recreate the consumer (default 5 s).
	Heartbeat time.Duration
	// InactiveThreshold removes an abandoned consumer (default 5 min).
	InactiveThreshold time.Duration
	// MaxMessages is how many messages are kept requested (default 500).
	MaxMessages int
	// ReadAhead lets the connection's reader goroutine read ahead while
	// the loop body works. By default the loop reads the socket itself when
	// its queue runs dry, which saves a goroutine hand-off per batch: right
	// for small messages and little work each. Set it when each message
	// costs much work (the object store sets it to hash large chunks while
	// the next ones are read). See pull.ReadAhead.
	ReadAhead bool
	// Borrowed lends the messages Messages yields instead of handing over
	// copies: each is valid only until the loop body it was yielded to
	// returns, and costs no copy and no allocation when the loop read it
	// itself (not with ReadAhead). See pull.Borrowed.
	Borrowed bool
	// NamePrefix prefixes the generated consumer names (default none).
	NamePrefix string
	// OnReset, if set, is told why the consumer was recreated.
	OnReset func(reason error)
}

// Consumer is an ordered view of a stream. Its Messages calls run one at a
// time; each resumes after the last message the previous one yielded.
type Consumer struct {
	js     *jsapi.JS
	stream string
	opts   Options

	mu       sync.Mutex
	running  bool
	lastSeq  atomic.Uint64 // last stream sequence yielded (0: none yet)
	started  bool
	resets   atomic.Uint64
	consumer string
}

// New returns an ordered consumer of stream. It does not contact the
// server; Messages creates the server-side consumer.
func New(js *jsapi.JS, stream string, o Options) *Consumer {
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.InactiveThreshold <= 0 {
		o.InactiveThreshold = DefaultInactiveThreshold
	}
	if o.MaxMessages <= 0 {
		o.MaxMessages = DefaultMaxMessages
	}
	return &Consumer{js: js, stream: stream, opts: o}
}

// ConsumerName returns the name of the current server-side consumer ("" before
// the first Messages call).
func (c *Consumer) ConsumerName() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.consumer
}

// Resets reports how many times the consumer was recreated.
func (c *Consumer) Resets() uint64 { return c.resets.Load() }

// LastSequence returns the stream sequence of the last message yielded.
func (c *Consumer) LastSequence() uint64 { return c.lastSeq.Load() }

// ReadOpt is an option of Messages.
type ReadOpt struct {
	drained bool
	idle    time.Duration
}

// UntilDrained ends Messages without error once everything the stream held
// has been yielded.
func UntilDrained() ReadOpt { return ReadOpt{drained: true} }

// IdleTimeout ends Messages with ErrNoMessages when no message arrives for
// d.
func IdleTimeout(d time.Duration) ReadOpt { return ReadOpt{idle: d} }

// ErrBusy is returned when Messages is called while another Messages of the
// same Consumer runs.
var ErrBusy = errors.New("ordered: Messages already running")

// errRecreate is the cause that ends one server-side consumer's reading.
var errRecreate = errors.New("ordered: recreate consumer")

// Messages returns a single-use iterator over the stream in order; see the
// package documentation for how it ends. Errors are terminal:
// jsapi.ErrStreamNotFound, ErrNoMessages (idle timeout), conn.ErrClosed,
// ErrBusy, ctx's error, or jsapi.ErrBadAckSubject for a message whose
// delivery metadata cannot be read (order could not be checked).
func (c *Consumer) Messages(ctx context.Context, opts ...ReadOpt) iter.Seq2[*jsapi.Msg, error] {
	return func(yield func(*jsapi.Msg, error) bool) {
		if ctx == nil {
			yield(nil, conn.ErrNilContext)
			return
		}
		var ro ReadOpt
		for _, o := range opts {
			ro.drained = ro.drained || o.drained
			if o.idle > 0 {
				ro.idle = o.idle
			}
		}
		c.mu.Lock()
		if c.running {
			c.mu.Unlock()
			yield(nil, ErrBusy)
			return
		}
		c.running = true
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			c.running = false
			c.mu.Unlock()
		}()
		r := &reader{c: c, ro: ro}
		defer r.cleanup()
		r.run(ctx, yield)
	}
}

// reader is one Messages call.
type reader struct {
	c        *Consumer
	ro       ReadOpt
	cons     *pull.Consumer
	expected uint64        // next consumer sequence expected
	activity atomic.Uint64 // messages read, counted only with an idle timeout
	backoff  time.Duration
}

func (r *reader) run(ctx context.Context, yield func(*jsapi.Msg, error) bool) {
	var idleStop func()
	if r.ro.idle > 0 {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		idleStop = r.watchIdle(ctx, cancel)
		defer idleStop()
	}
	for {
		info, err := r.create(ctx)
		if err != nil {
			yield(nil, r.endErr(ctx, err))
			return
		}
		if r.ro.drained && info.NumPending == 0 {
			return // caught up: nothing (more) to read
		}
		again, err := r.read(ctx, yield)
		if err != nil {
			yield(nil, r.endErr(ctx, err))
			return
		}
		if !again {
			return
		}
		r.c.resets.Add(1)
	}
}

// endErr turns the reason reading stopped into the error to yield.
func (r *reader) endErr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && errors.Is(cause, ErrNoMessages) {
		return ErrNoMessages
	}
	return err
}

// watchIdle cancels ctx with ErrNoMessages when no message arrives for the
// idle timeout. It returns a function that stops it.
func (r *reader) watchIdle(ctx context.Context, cancel context.CancelCauseFunc) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		step := max(r.ro.idle/8, time.Millisecond)
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
			} else if time.Since(since) >= r.ro.idle {
				cancel(ErrNoMessages)
				return
			}
		}
	}()
	return func() { close(done); wg.Wait(); cancel(nil) }
}

// consumerConfig is the configuration of the next server-side consumer.
func (r *reader) consumerConfig(name string) jsapi.ConsumerConfig {
	o := &r.c.opts
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
	r.c.mu.Lock()
	if r.c.started {
		// Resume after the last message yielded.
		cfg.DeliverPolicy = jsapi.DeliverByStartSequence
		cfg.OptStartSeq = r.c.lastSeq.Load() + 1
		cfg.OptStartTime = time.Time{}
	}
	r.c.mu.Unlock()
	return cfg
}

// create makes a new server-side consumer, retrying with backoff while the
// failure may pass; a missing stream is terminal.
func (r *reader) create(ctx context.Context) (*jsapi.ConsumerInfo, error) {
	r.cleanup()
	for {
		name := r.c.opts.NamePrefix + nuid.Next()
		cfg := r.consumerConfig(name)
		// Each attempt gets the API timeout even when ctx has a far
		// deadline: a request nobody answers (no meta leader) must not
		// hold up the retries until the caller's deadline.
		actx, acancel := context.WithTimeout(ctx, r.c.js.Timeout())
		cons, err := pull.Create(actx, r.c.js, r.c.stream, cfg)
		acancel()
		if err == nil {
			r.cons = cons
			r.expected = 1
			r.backoff = 0
			r.c.mu.Lock()
			r.c.consumer = name
			r.c.started = true
			if cfg.DeliverPolicy == jsapi.DeliverByStartSequence && r.c.lastSeq.Load() == 0 && cfg.OptStartSeq > 1 {
				r.c.lastSeq.Store(cfg.OptStartSeq - 1)
			}
			r.c.mu.Unlock()
			return cons.CachedInfo(), nil
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
		r.backoff = min(max(2*r.backoff, 100*time.Millisecond), 5*time.Second)
		if err := pause.For(ctx, r.backoff); err != nil {
			return nil, err
		}
	}
}

// cleanup deletes the current server-side consumer, best effort.
func (r *reader) cleanup() {
	if r.cons == nil {
		return
	}
	cons := r.cons
	r.cons = nil
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = r.c.js.DeleteConsumer(ctx, r.c.stream, cons.Name())
}

// read yields from the current consumer. It returns again=true when the
// consumer must be recreated, or a terminal error.
func (r *reader) read(ctx context.Context, yield func(*jsapi.Msg, error) bool) (again bool, err error) {
	inner, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	onErr := func(err error) {
		if errors.Is(err, pull.ErrNoHeartbeat) {
			cancel(fmt.Errorf("%w: %w", errRecreate, err))
		}
	}
	opts := []pull.Opt{pull.MaxMessages(r.c.opts.MaxMessages),
		pull.Expires(max(2*r.c.opts.Heartbeat, time.Second)), pull.Heartbeat(r.c.opts.Heartbeat), pull.OnError(onErr),
		pull.ReadAhead(r.c.opts.ReadAhead)}
	if r.c.opts.Borrowed {
		opts = append(opts, pull.Borrowed())
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
		if r.ro.idle > 0 { // watchIdle's only input: no locked add otherwise
			r.activity.Add(1)
		}
		md, merr := m.Metadata()
		if merr != nil {
			// Order cannot be judged without the delivery metadata:
			// say so rather than skip messages silently.
			return false, fmt.Errorf("ordered: message on %q: %w", m.Subject, merr)
		}
		if md.ConsumerSeq != r.expected {
			r.reset(errors.New("ordered: consumer sequence gap"))
			return true, nil
		}
		r.expected++
		r.c.lastSeq.Store(md.StreamSeq) // one writer: the running reader
		if !yield(m, nil) {
			return false, nil
		}
		if r.ro.drained && md.NumPending == 0 {
			return false, nil
		}
	}
	return false, nil
}

func (r *reader) reset(reason error) {
	if f := r.c.opts.OnReset; f != nil {
		f(reason)
	}
}
