// Package clients implements every benchmark scenario once per client:
// natsio, nats.go and raw (pre-encoded protocol frames on a net.Conn with no
// client logic, the physical ceiling).
//
// Each scenario type is a small interface (Publisher, PubSuber, Requester,
// and the JetStream, KV and object store kinds below). A client implements
// the kinds it supports; the scenario registry (package scenarios) asks for
// the interface of a scenario's kind and reports a client without it as not
// applicable.
//
// JetStream scenarios never create or fill their streams themselves: the
// harness does that with one client-neutral path before the run (package
// scenarios, Setup), so the measured client only does the timed work. The
// Config names what the fixture holds.
package clients

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Mode is how a subscriber consumes messages.
type Mode string

// Modes.
const (
	// Callback: natsio SubscribeFunc, nats.go Subscribe with a handler.
	Callback Mode = "cb"
	// Iter: natsio Subscription.Messages, nats.go SubscribeSync + Msgs.
	Iter Mode = "iter"
	// Next: natsio NextMsg, nats.go SubscribeSync + NextMsg.
	Next Mode = "next"
	// Ctx (requests): the caller passes a context with a deadline, made
	// once per timed section (natsio Request(ctx), nats.go
	// RequestWithContext). Without it, requests use each client's plain
	// call: natsio Request(context.Background()), which applies the default
	// timeout itself, and nats.go Request(subject, data, timeout).
	Ctx Mode = "ctx"
	// Borrowed: natsio's opt-in lent messages (conn.Borrowed for a
	// SubscribeFunc handler, pull.Borrowed and ordered.Borrowed for the
	// JetStream consumers), valid until the handler or loop body returns:
	// no copy, no allocation. nats.go has no equivalent (n/a); the raw
	// client reads in place in every mode.
	Borrowed Mode = "borrowed"
)

// BorrowingSubscriber marks the clients that can run the Borrowed pub/sub
// mode.
type BorrowingSubscriber interface{ borrowingSubscriber() }

func (Natsio) borrowingSubscriber() {}
func (Raw) borrowingSubscriber()    {}

// BorrowingConsumer marks the clients that can run the Borrowed consumer
// mode.
type BorrowingConsumer interface{ borrowingConsumer() }

func (Natsio) borrowingConsumer() {}
func (Raw) borrowingConsumer()    {}

// Config describes one scenario instance.
type Config struct {
	URL     string
	Subject string
	Size    int  // payload bytes
	Mode    Mode // pub/sub consumption mode
	// SameConn puts publisher and subscriber on one connection.
	SameConn bool
	// MaxMsgs bounds the messages of the whole instance (warm-up and timed
	// runs); subscriber queues are sized so that none is ever dropped.
	MaxMsgs int

	// JetStream, KV and object store fixtures, created by the harness.

	// Stream is the stream the scenario uses (KV and object store: the
	// bucket's stream).
	Stream string
	// Bucket names the KV bucket or object store.
	Bucket string
	// Stored is how many messages the stream holds before the run (KV get:
	// keys; object get: objects).
	Stored int
	// Consumers are the durable pull consumers of the runs, one per Run
	// call in order (warm-up, timed). Each starts where exactly the
	// messages of its run remain.
	Consumers []string
	// StartSeqs are the first stream sequences of the ordered reads, one
	// per Run call; each read ends with the stream's last message.
	StartSeqs []uint64
	// Batch: fetch size (jsfetch), messages kept requested (jsconsume,
	// jsordered), atomic batch size, or batch direct get size.
	Batch int
	// Window is the async publish window (jspub.async).
	Window int
	// Subs is the number of subscriptions of a scale.subs scenario, Conns
	// the number of connections of a scale.conns scenario.
	Subs, Conns int
	// InFlight is the number of requests in flight at once of a
	// scale.inflight scenario.
	InFlight int
	// StallWait, when positive, replaces the library's default wait of an
	// async publish that finds the window full (jspub.async). The bench's
	// own tests set it tiny to force stalls.
	StallWait time.Duration
	// Keys is the number of distinct KV keys (key i is KVKey(i)).
	Keys int
	// Object is the name of the stored object (objget).
	Object string
}

// KVKey is the i-th key of the KV scenarios.
func KVKey(i int) string { return fmt.Sprintf("k%05d", i) }

// Runner is a prepared scenario. Run performs one section of n operations;
// it is called for the warm-up and then once for the timed section.
type Runner interface {
	Run(n int) error
	Close() error
}

// LatencyRunner is a prepared latency scenario: Run performs len(lat)
// sequential operations and records each one's duration in lat.
type LatencyRunner interface {
	Run(lat []time.Duration) error
	Close() error
}

// Client is one implementation of the scenarios.
type Client interface {
	Name() string
}

// Publisher: core publish. Run(n) publishes n messages and returns once the
// server has processed them (a flush round trip).
type Publisher interface {
	NewPublish(ctx context.Context, cfg Config) (Runner, error)
}

// PubSuber: publish to a subscriber in the same process. Run(n) publishes n
// messages and returns once the subscriber has received all n; a lost or
// malformed message is an error.
type PubSuber interface {
	NewPubSub(ctx context.Context, cfg Config) (Runner, error)
}

// Requester: request/reply with a responder on another connection in the
// same process.
type Requester interface {
	NewRequest(ctx context.Context, cfg Config) (LatencyRunner, error)
}

// JSSyncPublisher: JetStream publish, waiting for each PubAck. The stream
// is empty before the first Run; each ack must carry the next sequence.
type JSSyncPublisher interface {
	NewJSPublishSync(ctx context.Context, cfg Config) (LatencyRunner, error)
}

// JSAsyncPublisher: JetStream publish with up to cfg.Window acks
// outstanding. Run(n) returns once all n are acknowledged.
type JSAsyncPublisher interface {
	NewJSPublishAsync(ctx context.Context, cfg Config) (Runner, error)
}

// JSFetcher: fetches of cfg.Batch with an explicit ack per message, from
// the durable consumer cfg.Consumers[i] for the i-th Run. Run(n) returns
// once n messages are fetched and their acks flushed to the server.
type JSFetcher interface {
	NewJSFetch(ctx context.Context, cfg Config) (Runner, error)
}

// JSConsumer: continuous consumption (the client keeps cfg.Batch messages
// requested) with an explicit ack per message, as JSFetcher.
type JSConsumer interface {
	NewJSConsume(ctx context.Context, cfg Config) (Runner, error)
}

// JSOrderedReader: an ordered (ephemeral, unacknowledged) read of the
// stream from cfg.StartSeqs[i] to its end for the i-th Run; the consumer is
// created inside the run.
type JSOrderedReader interface {
	NewJSOrdered(ctx context.Context, cfg Config) (Runner, error)
}

// KVPutter: sequential KV puts cycling over cfg.Keys keys; each revision
// must be the next stream sequence.
type KVPutter interface {
	NewKVPut(ctx context.Context, cfg Config) (LatencyRunner, error)
}

// KVGetter: sequential KV gets cycling over cfg.Keys stored keys.
type KVGetter interface {
	NewKVGet(ctx context.Context, cfg Config) (LatencyRunner, error)
}

// DirectGetter: sequential direct gets of one stored message each, by
// sequence, cycling over the cfg.Stored messages.
type DirectGetter interface {
	NewDirectGet(ctx context.Context, cfg Config) (LatencyRunner, error)
}

// BatchGetter: batch direct gets of cfg.Batch messages from sequence 1 of
// a stream holding cfg.Stored of them; Run(n) reads n messages.
type BatchGetter interface {
	NewGetBatch(ctx context.Context, cfg Config) (Runner, error)
}

// FastPublisher: one fast-ingest batch (server flow control) of n messages
// per Run, the last one committing it.
type FastPublisher interface {
	NewFastPublish(ctx context.Context, cfg Config) (Runner, error)
}

// AtomicBatcher: atomic batches of cfg.Batch messages (the last one of a
// run may be smaller); Run(n) stores n messages.
type AtomicBatcher interface {
	NewAtomicBatch(ctx context.Context, cfg Config) (Runner, error)
}

// ObjPutter: Run(n) stores n objects of cfg.Size bytes under fresh names.
type ObjPutter interface {
	NewObjPut(ctx context.Context, cfg Config) (Runner, error)
}

// ObjGetter: Run(n) reads the stored object cfg.Object n times.
type ObjGetter interface {
	NewObjGet(ctx context.Context, cfg Config) (Runner, error)
}

// All returns the clients by name.
func All() map[string]Client {
	return map[string]Client{
		"natsio": Natsio{},
		"natsgo": NatsGo{},
		"raw":    Raw{},
	}
}

// Names is the default client order.
var Names = []string{"natsio", "natsgo", "raw"}

// Payload returns size bytes of 'x' (no '\n', so raw readers can count
// lines if they want to).
func Payload(size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = 'x'
	}
	return b
}

// nextSeq reports whether got may follow last as the stream sequence (or
// KV revision) of operation i of a run: within a run each one is the next,
// and the first of a run only has to come later, since another client may
// write to the same stream between runs (bench -pair).
func nextSeq(i int, last, got uint64) bool {
	return got > last && (i == 0 || got == last+1)
}

// stallTimeout is how long a wait may go without progress before the run
// fails.
const stallTimeout = 10 * time.Second

// counter counts received messages against a target set per run. add runs
// on the receiving goroutine and costs two atomic operations.
type counter struct {
	size    int
	n       atomic.Int64
	target  atomic.Int64
	badSize atomic.Int64
	done    chan struct{}
}

func newCounter(size int) *counter {
	c := &counter{size: size, done: make(chan struct{}, 1)}
	c.target.Store(-1)
	return c
}

// add counts one message of size bytes.
func (c *counter) add(size int) {
	if size != c.size {
		c.badSize.Add(1)
	}
	if c.n.Add(1) == c.target.Load() {
		select {
		case c.done <- struct{}{}:
		default:
		}
	}
}

// addN counts n messages at once, bad of them with a size other than the
// expected one: a reader that counts a whole read's frames calls it once
// per read.
func (c *counter) addN(n, bad int64) {
	if bad > 0 {
		c.badSize.Add(bad)
	}
	v := c.n.Add(n)
	if t := c.target.Load(); v >= t && v-n < t {
		select {
		case c.done <- struct{}{}:
		default:
		}
	}
}

// expect sets the target to n more messages than received so far; call it
// before publishing them.
func (c *counter) expect(n int) int64 {
	t := c.n.Load() + int64(n)
	c.target.Store(t)
	return t
}

// wait waits until target messages have been received. It fails when no
// message arrives for stallTimeout, when dropped reports drops, or when a
// message had the wrong size.
func (c *counter) wait(target int64, dropped func() int64) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last, lastAt := c.n.Load(), time.Now()
	for {
		if c.n.Load() >= target {
			break
		}
		select {
		case <-c.done:
		case <-tick.C:
			if d := dropped(); d > 0 {
				return fmt.Errorf("subscriber dropped %d messages (received %d of %d)", d, c.n.Load(), target)
			}
			if n := c.n.Load(); n != last {
				last, lastAt = n, time.Now()
			} else if time.Since(lastAt) > stallTimeout {
				return fmt.Errorf("received %d of %d messages, none for %v", n, target, stallTimeout)
			}
		}
	}
	// Drain a signal left by this run so the next run waits for its own.
	select {
	case <-c.done:
	default:
	}
	if b := c.badSize.Load(); b > 0 {
		return fmt.Errorf("%d messages with a payload size other than %d", b, c.size)
	}
	if d := dropped(); d > 0 {
		return fmt.Errorf("subscriber dropped %d messages", d)
	}
	return nil
}

// checkExact fails if more messages than expected arrived.
func (c *counter) checkExact(target int64) error {
	if n := c.n.Load(); n != target {
		return fmt.Errorf("received %d messages, expected %d", n, target)
	}
	return nil
}

// errAsync keeps the first error reported by a background goroutine.
type errAsync struct{ v atomic.Pointer[error] }

func (e *errAsync) set(err error) {
	if err != nil {
		e.v.CompareAndSwap(nil, &err)
	}
}

func (e *errAsync) get() error {
	if p := e.v.Load(); p != nil {
		return *p
	}
	return nil
}

// deadline returns a context bounding a flush or setup step.
func deadline() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

var errShortLatency = errors.New("latency slice is empty")

// Staller is a Runner that meets backpressure: an async publish that finds
// the window full and waits out the library's stall limit is retried, not
// failed, and counted. Stalls is the count since the runner was made.
type Staller interface{ Stalls() int64 }

// ErrTimeout marks a run that ran out of time (a flush, an ack or a
// completion that did not come within its limit) without any sign of a
// lost or wrong message: on a busy machine it is recorded, not treated as
// a failure of the client. Runners wrap it; IsTimeout also recognises the
// libraries' own timeout errors.
var ErrTimeout = errors.New("timed out")
