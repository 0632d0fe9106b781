package clients

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The JetStream, KV and object store scenarios with nats.go's ADR-37
// jetstream package, default options. Calls pass context.Background() where
// the API takes a context, as natsio's do: nats.go then applies its default
// API timeout. nats.go has no fast-ingest, atomic batch or batch get API:
// those scenarios show n/a.

type natsgoJS struct {
	nc *nats.Conn
	js jetstream.JetStream
}

func natsgoJSConnect(cfg Config, name string, opts ...jetstream.JetStreamOpt) (natsgoJS, error) {
	nc, err := natsgoConnect(cfg.URL, name)
	if err != nil {
		return natsgoJS{}, err
	}
	js, err := jetstream.New(nc, opts...)
	if err != nil {
		nc.Close()
		return natsgoJS{}, err
	}
	return natsgoJS{nc: nc, js: js}, nil
}

func (c natsgoJS) Close() error { c.nc.Close(); return nil }

// --- jspub.sync ---

type natsgoJSPubSync struct {
	natsgoJS
	subject string
	data    []byte
	seq     uint64
}

// NewJSPublishSync implements JSSyncPublisher: jetstream.Publish.
func (NatsGo) NewJSPublishSync(_ context.Context, cfg Config) (LatencyRunner, error) {
	c, err := natsgoJSConnect(cfg, "bench-jspub")
	if err != nil {
		return nil, err
	}
	return &natsgoJSPubSync{natsgoJS: c, subject: cfg.Subject, data: Payload(cfg.Size)}, nil
}

func (p *natsgoJSPubSync) Run(lat []time.Duration) error {
	if len(lat) == 0 {
		return errShortLatency
	}
	ctx := context.Background()
	for i := range lat {
		t0 := time.Now()
		ack, err := p.js.Publish(ctx, p.subject, p.data)
		if err != nil {
			return fmt.Errorf("publish %d: %w", i, err)
		}
		lat[i] = time.Since(t0)
		if !nextSeq(i, p.seq, ack.Sequence) || ack.Duplicate {
			return fmt.Errorf("ack of sequence %d (duplicate %v) after %d", ack.Sequence, ack.Duplicate, p.seq)
		}
		p.seq = ack.Sequence
	}
	return nil
}

// --- jspub.async ---

type natsgoJSPubAsync struct {
	natsgoJS
	subject string
	data    []byte
	failed  atomic.Int64 // acks that failed, timeouts excepted
	expired atomic.Int64 // acks that timed out
	async   errAsync
	opts    []jetstream.PublishOpt
	stalls  int64
}

// NewJSPublishAsync implements JSAsyncPublisher: PublishAsync with
// WithPublishAsyncMaxPending(cfg.Window), then PublishAsyncComplete. Failed
// acks are counted by the async error handler. A PublishAsync that found
// the window full for its stall wait (jetstream.ErrTooManyStalledMsgs:
// nothing was sent) is backpressure, not a failure: it is counted as a
// stall and tried again.
func (NatsGo) NewJSPublishAsync(_ context.Context, cfg Config) (Runner, error) {
	p := &natsgoJSPubAsync{subject: cfg.Subject, data: Payload(cfg.Size)}
	if cfg.StallWait > 0 {
		p.opts = []jetstream.PublishOpt{jetstream.WithStallWait(cfg.StallWait)}
	}
	c, err := natsgoJSConnect(cfg, "bench-jspub-async",
		jetstream.WithPublishAsyncMaxPending(cfg.Window),
		jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, _ *nats.Msg, err error) {
			if errors.Is(err, jetstream.ErrAsyncPublishTimeout) {
				p.expired.Add(1)
				return
			}
			p.failed.Add(1)
			p.async.set(err)
		}))
	if err != nil {
		return nil, err
	}
	p.natsgoJS = c
	return p, nil
}

func (p *natsgoJSPubAsync) Run(n int) error {
	for i := 0; i < n; {
		_, err := p.js.PublishAsync(p.subject, p.data, p.opts...)
		switch {
		case err == nil:
			i++
		case errors.Is(err, jetstream.ErrTooManyStalledMsgs):
			p.stalls++
		default:
			return fmt.Errorf("publish %d: %w", i, err)
		}
	}
	select {
	case <-p.js.PublishAsyncComplete():
	case <-time.After(30 * time.Second):
		return fmt.Errorf("%w: %d acks outstanding after 30s", ErrTimeout, p.js.PublishAsyncPending())
	}
	if f := p.failed.Load(); f > 0 {
		return fmt.Errorf("%d publishes failed: %w", f, p.async.get())
	}
	if e := p.expired.Load(); e > 0 {
		return fmt.Errorf("%w: %d acks did not come in time", ErrTimeout, e)
	}
	return nil
}

// Stalls implements Staller.
func (p *natsgoJSPubAsync) Stalls() int64 { return p.stalls }

// --- jsfetch / jsconsume ---

type natsgoPull struct {
	natsgoJS
	cons    []jetstream.Consumer
	size    int
	batch   int
	consume bool
	runs    int
}

func natsgoPullConnect(ctx context.Context, cfg Config, name string, consume bool) (*natsgoPull, error) {
	c, err := natsgoJSConnect(cfg, name)
	if err != nil {
		return nil, err
	}
	p := &natsgoPull{natsgoJS: c, size: cfg.Size, batch: cfg.Batch, consume: consume}
	for _, name := range cfg.Consumers {
		cons, err := c.js.Consumer(ctx, cfg.Stream, name)
		if err != nil {
			c.Close()
			return nil, err
		}
		p.cons = append(p.cons, cons)
	}
	return p, nil
}

// NewJSFetch implements JSFetcher: Consumer.Fetch(cfg.Batch) and Msg.Ack.
func (NatsGo) NewJSFetch(ctx context.Context, cfg Config) (Runner, error) {
	return natsgoPullConnect(ctx, cfg, "bench-jsfetch", false)
}

// NewJSConsume implements JSConsumer: Consumer.Consume(handler) with
// PullMaxMessages(cfg.Batch) (refilled at half, the default) and Msg.Ack in
// the handler. Consume is nats.go's cheapest continuous path: its
// Messages().Next() iterator arms a heartbeat timer on every call (4 more
// allocations per message).
func (NatsGo) NewJSConsume(ctx context.Context, cfg Config) (Runner, error) {
	return natsgoPullConnect(ctx, cfg, "bench-jsconsume", true)
}

func (p *natsgoPull) Run(n int) error {
	c, err := runIndex(p.cons, p.runs)
	if err != nil {
		return err
	}
	p.runs++
	got := 0
	if p.consume {
		if err := natsgoConsume(c, n, p.size, p.batch, true); err != nil {
			return err
		}
		got = n
	} else {
		for got < n {
			batch, err := c.Fetch(min(p.batch, n-got))
			if err != nil {
				return fmt.Errorf("fetch after %d of %d messages: %w", got, n, err)
			}
			k := 0
			for m := range batch.Messages() {
				if len(m.Data()) != p.size {
					return fmt.Errorf("message of %d bytes, want %d", len(m.Data()), p.size)
				}
				if err := m.Ack(); err != nil {
					return err
				}
				k++
			}
			if err := batch.Error(); err != nil {
				return fmt.Errorf("fetch after %d of %d messages: %w", got+k, n, err)
			}
			if k == 0 {
				return fmt.Errorf("empty fetch after %d of %d messages", got, n)
			}
			got += k
		}
	}
	if got != n {
		return fmt.Errorf("received %d messages, expected %d", got, n)
	}
	return p.nc.FlushTimeout(flushTimeout) // the acks have reached the server
}

// --- jsordered ---

type natsgoOrdered struct {
	natsgoJS
	stream string
	starts []uint64
	size   int
	batch  int
	runs   int
}

// NewJSOrdered implements JSOrderedReader: OrderedConsumer from the run's
// start sequence and Consume(handler); it stops after the n messages the
// stream holds from there (nats.go has no "until drained").
func (NatsGo) NewJSOrdered(_ context.Context, cfg Config) (Runner, error) {
	c, err := natsgoJSConnect(cfg, "bench-jsordered")
	if err != nil {
		return nil, err
	}
	return &natsgoOrdered{natsgoJS: c, stream: cfg.Stream, starts: cfg.StartSeqs, size: cfg.Size, batch: cfg.Batch}, nil
}

func (o *natsgoOrdered) Run(n int) error {
	start, err := runIndex(o.starts, o.runs)
	if err != nil {
		return err
	}
	o.runs++
	cons, err := o.js.OrderedConsumer(context.Background(), o.stream, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: start})
	if err != nil {
		return err
	}
	return natsgoConsume(cons, n, o.size, o.batch, false)
}

// natsgoConsume consumes n messages with Consume(handler), acking each if
// ack, and stops. Consumer errors reported to the error handler fail the
// run.
func natsgoConsume(c jetstream.Consumer, n, size, batch int, ack bool) error {
	cnt := newCounter(size)
	target := cnt.expect(n)
	var async errAsync
	var ackErrs atomic.Int64
	cc, err := c.Consume(func(m jetstream.Msg) {
		if ack && m.Ack() != nil {
			ackErrs.Add(1)
		}
		cnt.add(len(m.Data()))
	}, jetstream.PullMaxMessages(batch), jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		async.set(err)
	}))
	if err != nil {
		return err
	}
	err = cnt.wait(target, func() int64 {
		if async.get() != nil {
			return -1
		}
		return 0
	})
	cc.Stop()
	if err != nil {
		return errors.Join(err, async.get())
	}
	if err := async.get(); err != nil {
		return err
	}
	if a := ackErrs.Load(); a > 0 {
		return fmt.Errorf("%d acks failed", a)
	}
	return cnt.checkExact(target)
}

// --- kvput / kvget ---

type natsgoKV struct {
	natsgoJS
	kv   jetstream.KeyValue
	keys []string
	data []byte
	size int
	next int
	rev  uint64
}

func natsgoKVConnect(ctx context.Context, cfg Config, name string) (*natsgoKV, error) {
	c, err := natsgoJSConnect(cfg, name)
	if err != nil {
		return nil, err
	}
	b, err := c.js.KeyValue(ctx, cfg.Bucket)
	if err != nil {
		c.Close()
		return nil, err
	}
	k := &natsgoKV{natsgoJS: c, kv: b, data: Payload(cfg.Size), size: cfg.Size}
	for i := range cfg.Keys {
		k.keys = append(k.keys, KVKey(i))
	}
	return k, nil
}

type natsgoKVPut struct{ *natsgoKV }

type natsgoKVGet struct{ *natsgoKV }

// NewKVPut implements KVPutter: KeyValue.Put.
func (NatsGo) NewKVPut(ctx context.Context, cfg Config) (LatencyRunner, error) {
	k, err := natsgoKVConnect(ctx, cfg, "bench-kvput")
	return natsgoKVPut{k}, err
}

// NewKVGet implements KVGetter: KeyValue.Get.
func (NatsGo) NewKVGet(ctx context.Context, cfg Config) (LatencyRunner, error) {
	k, err := natsgoKVConnect(ctx, cfg, "bench-kvget")
	return natsgoKVGet{k}, err
}

func (k natsgoKVPut) Run(lat []time.Duration) error {
	if len(lat) == 0 {
		return errShortLatency
	}
	ctx := context.Background()
	for i := range lat {
		key := k.keys[k.next]
		t0 := time.Now()
		rev, err := k.kv.Put(ctx, key, k.data)
		if err != nil {
			return fmt.Errorf("put %d: %w", i, err)
		}
		lat[i] = time.Since(t0)
		if !nextSeq(i, k.rev, rev) {
			return fmt.Errorf("put revision %d after %d", rev, k.rev)
		}
		k.rev = rev
		k.next = (k.next + 1) % len(k.keys)
	}
	return nil
}

func (k natsgoKVGet) Run(lat []time.Duration) error {
	if len(lat) == 0 {
		return errShortLatency
	}
	ctx := context.Background()
	for i := range lat {
		key := k.keys[k.next]
		t0 := time.Now()
		e, err := k.kv.Get(ctx, key)
		if err != nil {
			return fmt.Errorf("get %d (%s): %w", i, key, err)
		}
		lat[i] = time.Since(t0)
		if len(e.Value()) != k.size || e.Key() != key {
			return fmt.Errorf("get %s: key %s, value of %d bytes, want %d", key, e.Key(), len(e.Value()), k.size)
		}
		k.next = (k.next + 1) % len(k.keys)
	}
	return nil
}

// --- directget ---

type natsgoDirectGet struct {
	natsgoJS
	st     jetstream.Stream
	stored uint64
	size   int
	seq    uint64
}

// NewDirectGet implements DirectGetter: Stream.GetMsg, which uses direct
// get on a stream that allows it.
func (NatsGo) NewDirectGet(ctx context.Context, cfg Config) (LatencyRunner, error) {
	c, err := natsgoJSConnect(cfg, "bench-directget")
	if err != nil {
		return nil, err
	}
	st, err := c.js.Stream(ctx, cfg.Stream)
	if err != nil {
		c.Close()
		return nil, err
	}
	if !st.CachedInfo().Config.AllowDirect {
		c.Close()
		return nil, errors.New("stream does not allow direct get")
	}
	return &natsgoDirectGet{natsgoJS: c, st: st, stored: uint64(cfg.Stored), size: cfg.Size}, nil
}

func (g *natsgoDirectGet) Run(lat []time.Duration) error {
	if len(lat) == 0 {
		return errShortLatency
	}
	ctx := context.Background()
	for i := range lat {
		seq := g.seq%g.stored + 1
		t0 := time.Now()
		m, err := g.st.GetMsg(ctx, seq)
		if err != nil {
			return fmt.Errorf("get %d: %w", seq, err)
		}
		lat[i] = time.Since(t0)
		if m.Sequence != seq || len(m.Data) != g.size {
			return fmt.Errorf("get %d: sequence %d with %d bytes, want %d", seq, m.Sequence, len(m.Data), g.size)
		}
		g.seq++
	}
	return nil
}

// --- objput / objget ---

type natsgoObj struct {
	natsgoJS
	obs    jetstream.ObjectStore
	data   []byte
	size   int
	object string
	next   int
}

func natsgoObjConnect(ctx context.Context, cfg Config, name string, put bool) (*natsgoObj, error) {
	c, err := natsgoJSConnect(cfg, name)
	if err != nil {
		return nil, err
	}
	obs, err := c.js.ObjectStore(ctx, cfg.Bucket)
	if err != nil {
		c.Close()
		return nil, err
	}
	o := &natsgoObj{natsgoJS: c, obs: obs, size: cfg.Size, object: cfg.Object}
	if put {
		o.data = Payload(cfg.Size)
	}
	return o, nil
}

type natsgoObjPut struct{ *natsgoObj }

type natsgoObjGet struct{ *natsgoObj }

// NewObjPut implements ObjPutter: ObjectStore.PutBytes.
func (NatsGo) NewObjPut(ctx context.Context, cfg Config) (Runner, error) {
	o, err := natsgoObjConnect(ctx, cfg, "bench-objput", true)
	return natsgoObjPut{o}, err
}

// NewObjGet implements ObjGetter: ObjectStore.Get, io.Copy to io.Discard
// (the result checks size and digest at the end).
func (NatsGo) NewObjGet(ctx context.Context, cfg Config) (Runner, error) {
	o, err := natsgoObjConnect(ctx, cfg, "bench-objget", false)
	return natsgoObjGet{o}, err
}

func (o natsgoObjPut) Run(n int) error {
	ctx := context.Background()
	for range n {
		info, err := o.obs.PutBytes(ctx, ObjName(o.next), o.data)
		if err != nil {
			return fmt.Errorf("put %s: %w", ObjName(o.next), err)
		}
		if info.Size != uint64(o.size) {
			return fmt.Errorf("put %s: size %d, want %d", ObjName(o.next), info.Size, o.size)
		}
		o.next++
	}
	return nil
}

func (o natsgoObjGet) Run(n int) error {
	ctx := context.Background()
	for i := range n {
		r, err := o.obs.Get(ctx, o.object)
		if err != nil {
			return fmt.Errorf("get %d: %w", i, err)
		}
		got, err := io.Copy(io.Discard, r)
		r.Close()
		if err != nil {
			return fmt.Errorf("get %d: %w", i, err)
		}
		if got != int64(o.size) {
			return fmt.Errorf("get %d: %d bytes, want %d", i, got, o.size)
		}
	}
	return nil
}
