package clients

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/objstore"
	"github.com/natsio/natsio/ordered"
	"github.com/natsio/natsio/pubwin"
	"github.com/natsio/natsio/pull"
)

// The JetStream, KV and object store scenarios with natsio. Every call
// passes context.Background() where the library takes a context, as a
// plain caller does: the library then applies its own default timeout.

// natsioJS is a connection with its JetStream view.
type natsioJS struct {
	nc *conn.Conn
	js *jsapi.JS
}

func natsioJSConnect(ctx context.Context, cfg Config, name string) (natsioJS, error) {
	nc, err := natsioConnect(ctx, cfg.URL, name)
	if err != nil {
		return natsioJS{}, err
	}
	js, err := jsapi.New(nc)
	if err != nil {
		nc.Close()
		return natsioJS{}, err
	}
	return natsioJS{nc: nc, js: js}, nil
}

func (c natsioJS) Close() error { return c.nc.Close() }

// runIndex returns the fixture element of the i-th Run.
func runIndex[T any](list []T, i int) (T, error) {
	var zero T
	if i >= len(list) {
		return zero, fmt.Errorf("run %d: the fixture prepared %d runs", i+1, len(list))
	}
	return list[i], nil
}

// --- jspub.sync ---

type natsioJSPubSync struct {
	natsioJS
	subject string
	data    []byte
	ack     jsapi.PubAck
	seq     uint64 // last sequence acknowledged
}

// NewJSPublishSync implements JSSyncPublisher: jsapi.JS.Publish.
func (Natsio) NewJSPublishSync(ctx context.Context, cfg Config) (LatencyRunner, error) {
	c, err := natsioJSConnect(ctx, cfg, "bench-jspub")
	if err != nil {
		return nil, err
	}
	return &natsioJSPubSync{natsioJS: c, subject: cfg.Subject, data: Payload(cfg.Size)}, nil
}

func (p *natsioJSPubSync) Run(lat []time.Duration) error {
	if len(lat) == 0 {
		return errShortLatency
	}
	ctx := context.Background()
	for i := range lat {
		t0 := time.Now()
		var err error
		if p.ack, err = p.js.Publish(ctx, p.subject, p.data); err != nil {
			return fmt.Errorf("publish %d: %w", i, err)
		}
		lat[i] = time.Since(t0)
		if !nextSeq(i, p.seq, p.ack.Sequence) || p.ack.Duplicate {
			return fmt.Errorf("ack of sequence %d (duplicate %v) after %d", p.ack.Sequence, p.ack.Duplicate, p.seq)
		}
		p.seq = p.ack.Sequence
	}
	return nil
}

// --- jspub.async ---

type natsioJSPubAsync struct {
	natsioJS
	w       *pubwin.Window
	subject string
	data    []byte
	stalls  int64
}

// NewJSPublishAsync implements JSAsyncPublisher: a pubwin.Window with
// MaxPending cfg.Window, Publish ×n, then Complete. A Publish that found
// the window full for the window's StallWait (pubwin.ErrTooManyStalled:
// nothing was sent) is backpressure, not a failure: it is counted as a
// stall and tried again.
func (Natsio) NewJSPublishAsync(ctx context.Context, cfg Config) (Runner, error) {
	c, err := natsioJSConnect(ctx, cfg, "bench-jspub-async")
	if err != nil {
		return nil, err
	}
	opts := []pubwin.Option{pubwin.MaxPending(cfg.Window)}
	if cfg.StallWait > 0 {
		opts = append(opts, pubwin.StallWait(cfg.StallWait))
	}
	w, err := pubwin.New(c.js, opts...)
	if err != nil {
		c.Close()
		return nil, err
	}
	return &natsioJSPubAsync{natsioJS: c, w: w, subject: cfg.Subject, data: Payload(cfg.Size)}, nil
}

func (p *natsioJSPubAsync) Run(n int) error {
	ctx := context.Background()
	for i := 0; i < n; {
		_, err := p.w.Publish(ctx, p.subject, p.data)
		switch {
		case err == nil:
			i++
		case errors.Is(err, pubwin.ErrTooManyStalled):
			p.stalls++
		default:
			return fmt.Errorf("publish %d: %w", i, err)
		}
	}
	cctx, cancel := deadline()
	defer cancel()
	if err := p.w.Complete(cctx); err != nil {
		// Only acks that did not come in time make a timeout; a failed or
		// lost one is a failure even next to timed-out ones.
		if st := p.w.Stats(); st.Failed > 0 || st.Lost > 0 {
			return fmt.Errorf("%d publishes failed, %d acks lost: %v", st.Failed, st.Lost, err)
		}
		return err
	}
	return nil
}

// Stalls implements Staller.
func (p *natsioJSPubAsync) Stalls() int64 { return p.stalls }

func (p *natsioJSPubAsync) Close() error {
	return errors.Join(p.w.Close(), p.nc.Close())
}

// --- jsfetch / jsconsume ---

type natsioPull struct {
	natsioJS
	cons []*pull.Consumer
	size int
	runs int
	// consume: Messages instead of Fetch.
	consume bool
	batch   int
	borrow  bool
}

func natsioPullConnect(ctx context.Context, cfg Config, name string, consume bool) (*natsioPull, error) {
	c, err := natsioJSConnect(ctx, cfg, name)
	if err != nil {
		return nil, err
	}
	p := &natsioPull{natsioJS: c, size: cfg.Size, consume: consume, batch: cfg.Batch, borrow: cfg.Mode == Borrowed}
	for _, name := range cfg.Consumers {
		info, err := c.js.Consumer(ctx, cfg.Stream, name)
		if err != nil {
			c.Close()
			return nil, err
		}
		pc, err := pull.FromInfo(c.js, info)
		if err != nil {
			c.Close()
			return nil, err
		}
		p.cons = append(p.cons, pc)
	}
	return p, nil
}

// NewJSFetch implements JSFetcher: pull.Consumer.Fetch(cfg.Batch) and
// Msg.Ack per message.
func (Natsio) NewJSFetch(ctx context.Context, cfg Config) (Runner, error) {
	return natsioPullConnect(ctx, cfg, "bench-jsfetch", false)
}

// NewJSConsume implements JSConsumer: pull.Consumer.Messages (MaxMessages
// cfg.Batch, refilled at half) and Msg.Ack per message.
func (Natsio) NewJSConsume(ctx context.Context, cfg Config) (Runner, error) {
	return natsioPullConnect(ctx, cfg, "bench-jsconsume", true)
}

func (p *natsioPull) Run(n int) error {
	c, err := runIndex(p.cons, p.runs)
	if err != nil {
		return err
	}
	p.runs++
	got := 0
	if p.consume {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		opts := []pull.Opt{pull.MaxMessages(p.batch)}
		if p.borrow {
			opts = append(opts, pull.Borrowed())
		}
		for m, err := range c.Messages(ctx, opts...) {
			if err != nil {
				return fmt.Errorf("after %d of %d messages: %w", got, n, err)
			}
			if len(m.Data) != p.size {
				return fmt.Errorf("message of %d bytes, want %d", len(m.Data), p.size)
			}
			if err := m.Ack(); err != nil {
				return err
			}
			if got++; got == n {
				break
			}
		}
	} else {
		ctx := context.Background()
		for got < n {
			msgs, err := c.Fetch(ctx, min(p.batch, n-got))
			if err != nil { // nothing came: an empty batch and no error, not an error
				return fmt.Errorf("fetch after %d of %d messages: %w", got, n, err)
			}
			for _, m := range msgs {
				if len(m.Data) != p.size {
					return fmt.Errorf("message of %d bytes, want %d", len(m.Data), p.size)
				}
				if err := m.Ack(); err != nil {
					return err
				}
			}
			got += len(msgs)
		}
	}
	if got != n {
		return fmt.Errorf("received %d messages, expected %d", got, n)
	}
	return natsioFlush(p.nc) // the acks have reached the server
}

// --- jsordered ---

type natsioOrdered struct {
	natsioJS
	stream string
	starts []uint64
	size   int
	batch  int
	runs   int
	borrow bool
}

// NewJSOrdered implements JSOrderedReader: ordered.New(...).Messages(ctx,
// ordered.UntilDrained()) from the run's start sequence.
func (Natsio) NewJSOrdered(ctx context.Context, cfg Config) (Runner, error) {
	c, err := natsioJSConnect(ctx, cfg, "bench-jsordered")
	if err != nil {
		return nil, err
	}
	return &natsioOrdered{natsioJS: c, stream: cfg.Stream, starts: cfg.StartSeqs, size: cfg.Size, batch: cfg.Batch, borrow: cfg.Mode == Borrowed}, nil
}

func (o *natsioOrdered) Run(n int) error {
	start, err := runIndex(o.starts, o.runs)
	if err != nil {
		return err
	}
	o.runs++
	ctx := context.Background()
	oc, err := ordered.New(ctx, o.js, o.stream, ordered.Config{DeliverPolicy: jsapi.DeliverByStartSequence, OptStartSeq: start})
	if err != nil {
		return err
	}
	opts := []ordered.Opt{ordered.UntilDrained(), ordered.MaxMessages(o.batch)}
	if o.borrow {
		opts = append(opts, ordered.Borrowed())
	}
	got := 0
	for m, err := range oc.Messages(ctx, opts...) {
		if err != nil {
			return fmt.Errorf("after %d of %d messages: %w", got, n, err)
		}
		if len(m.Data) != o.size {
			return fmt.Errorf("message of %d bytes, want %d", len(m.Data), o.size)
		}
		got++
	}
	if got != n {
		return fmt.Errorf("read %d messages, expected %d", got, n)
	}
	return nil
}

// --- kvput / kvget ---

type natsioKV struct {
	natsioJS
	b    *kv.Bucket
	keys []string
	data []byte
	size int
	next int    // next key
	rev  uint64 // last revision written (put)
}

func natsioKVConnect(ctx context.Context, cfg Config, name string) (*natsioKV, error) {
	c, err := natsioJSConnect(ctx, cfg, name)
	if err != nil {
		return nil, err
	}
	b, err := kv.Bind(ctx, c.js, cfg.Bucket)
	if err != nil {
		c.Close()
		return nil, err
	}
	k := &natsioKV{natsioJS: c, b: b, data: Payload(cfg.Size), size: cfg.Size}
	for i := range cfg.Keys {
		k.keys = append(k.keys, KVKey(i))
	}
	return k, nil
}

type natsioKVPut struct{ *natsioKV }

type natsioKVGet struct{ *natsioKV }

// NewKVPut implements KVPutter: kv.Bucket.Put.
func (Natsio) NewKVPut(ctx context.Context, cfg Config) (LatencyRunner, error) {
	k, err := natsioKVConnect(ctx, cfg, "bench-kvput")
	return natsioKVPut{k}, err
}

// NewKVGet implements KVGetter: kv.Bucket.Get.
func (Natsio) NewKVGet(ctx context.Context, cfg Config) (LatencyRunner, error) {
	k, err := natsioKVConnect(ctx, cfg, "bench-kvget")
	return natsioKVGet{k}, err
}

func (k natsioKVPut) Run(lat []time.Duration) error {
	if len(lat) == 0 {
		return errShortLatency
	}
	ctx := context.Background()
	for i := range lat {
		key := k.keys[k.next]
		t0 := time.Now()
		rev, err := k.b.Put(ctx, key, k.data)
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

func (k natsioKVGet) Run(lat []time.Duration) error {
	if len(lat) == 0 {
		return errShortLatency
	}
	ctx := context.Background()
	for i := range lat {
		key := k.keys[k.next]
		t0 := time.Now()
		e, err := k.b.Get(ctx, key)
		if err != nil {
			return fmt.Errorf("get %d (%s): %w", i, key, err)
		}
		lat[i] = time.Since(t0)
		if len(e.Value) != k.size || e.Key != key {
			return fmt.Errorf("get %s: key %s, value of %d bytes, want %d", key, e.Key, len(e.Value), k.size)
		}
		k.next = (k.next + 1) % len(k.keys)
	}
	return nil
}

// --- directget ---

type natsioDirectGet struct {
	natsioJS
	st     *jsapi.Stream
	stored uint64
	size   int
	seq    uint64
}

// NewDirectGet implements DirectGetter: jsapi.Stream.GetMsg (a direct get
// on a stream that allows it).
func (Natsio) NewDirectGet(ctx context.Context, cfg Config) (LatencyRunner, error) {
	c, err := natsioJSConnect(ctx, cfg, "bench-directget")
	if err != nil {
		return nil, err
	}
	st, err := c.js.Stream(ctx, cfg.Stream)
	if err != nil {
		c.Close()
		return nil, err
	}
	return &natsioDirectGet{natsioJS: c, st: st, stored: uint64(cfg.Stored), size: cfg.Size}, nil
}

func (g *natsioDirectGet) Run(lat []time.Duration) error {
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

// --- getbatch ---

type natsioGetBatch struct {
	natsioJS
	stream string
	batch  int
	size   int
}

// NewGetBatch implements BatchGetter: extra.GetBatch.
func (Natsio) NewGetBatch(ctx context.Context, cfg Config) (Runner, error) {
	c, err := natsioJSConnect(ctx, cfg, "bench-getbatch")
	if err != nil {
		return nil, err
	}
	return &natsioGetBatch{natsioJS: c, stream: cfg.Stream, batch: cfg.Batch, size: cfg.Size}, nil
}

func (g *natsioGetBatch) Run(n int) error {
	ctx := context.Background()
	for got := 0; got < n; {
		want := min(g.batch, n-got)
		k := 0
		for m, err := range extra.GetBatch(ctx, g.js, g.stream, want) {
			if err != nil {
				return fmt.Errorf("batch get after %d of %d: %w", k, want, err)
			}
			k++
			if m.Sequence != uint64(k) || len(m.Data) != g.size {
				return fmt.Errorf("batch get: sequence %d with %d bytes, want %d with %d", m.Sequence, len(m.Data), k, g.size)
			}
		}
		if k != want {
			return fmt.Errorf("batch get returned %d messages, asked %d", k, want)
		}
		got += k
	}
	return nil
}

// --- fastpub ---

type natsioFastPub struct {
	natsioJS
	subject string
	data    []byte
}

// NewFastPublish implements FastPublisher: extra.NewFastPublisher with its
// defaults, Add ×(n-1), Commit.
func (Natsio) NewFastPublish(ctx context.Context, cfg Config) (Runner, error) {
	c, err := natsioJSConnect(ctx, cfg, "bench-fastpub")
	if err != nil {
		return nil, err
	}
	return &natsioFastPub{natsioJS: c, subject: cfg.Subject, data: Payload(cfg.Size)}, nil
}

func (p *natsioFastPub) Run(n int) error {
	ctx := context.Background()
	fp, err := extra.NewFastPublisher(p.js)
	if err != nil {
		return err
	}
	for i := range n - 1 {
		if _, err := fp.Add(ctx, p.subject, p.data); err != nil {
			return fmt.Errorf("add %d: %w", i, err)
		}
	}
	ack, err := fp.Commit(ctx, p.subject, p.data)
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if ack.BatchSize != n {
		return fmt.Errorf("batch of %d acknowledged with %d messages", n, ack.BatchSize)
	}
	return nil
}

// --- atomicbatch ---

type natsioAtomic struct {
	natsioJS
	subject string
	data    []byte
	batch   int
}

// NewAtomicBatch implements AtomicBatcher: extra.NewBatchPublisher with its
// defaults (the first message and the commit wait for acks), Add, Commit.
func (Natsio) NewAtomicBatch(ctx context.Context, cfg Config) (Runner, error) {
	c, err := natsioJSConnect(ctx, cfg, "bench-atomicbatch")
	if err != nil {
		return nil, err
	}
	return &natsioAtomic{natsioJS: c, subject: cfg.Subject, data: Payload(cfg.Size), batch: cfg.Batch}, nil
}

func (p *natsioAtomic) Run(n int) error {
	ctx := context.Background()
	for done := 0; done < n; {
		size := min(p.batch, n-done)
		b, err := extra.NewBatchPublisher(p.js)
		if err != nil {
			return err
		}
		for range size - 1 {
			if err := b.Add(ctx, p.subject, p.data); err != nil {
				return fmt.Errorf("batch at %d: %w", done, err)
			}
		}
		ack, err := b.Commit(ctx, p.subject, p.data)
		if err != nil {
			return fmt.Errorf("commit at %d: %w", done, err)
		}
		if ack.BatchSize != size {
			return fmt.Errorf("batch of %d acknowledged with %d messages", size, ack.BatchSize)
		}
		done += size
	}
	return nil
}

// --- objput / objget ---

type natsioObj struct {
	natsioJS
	store  *objstore.Store
	data   []byte
	size   int
	object string
	next   int
}

func natsioObjConnect(ctx context.Context, cfg Config, name string, put bool) (*natsioObj, error) {
	c, err := natsioJSConnect(ctx, cfg, name)
	if err != nil {
		return nil, err
	}
	st, err := objstore.Bind(ctx, c.js, cfg.Bucket)
	if err != nil {
		c.Close()
		return nil, err
	}
	o := &natsioObj{natsioJS: c, store: st, size: cfg.Size, object: cfg.Object}
	if put {
		o.data = Payload(cfg.Size)
	}
	return o, nil
}

type natsioObjPut struct{ *natsioObj }

type natsioObjGet struct{ *natsioObj }

// NewObjPut implements ObjPutter: objstore.Store.PutBytes.
func (Natsio) NewObjPut(ctx context.Context, cfg Config) (Runner, error) {
	o, err := natsioObjConnect(ctx, cfg, "bench-objput", true)
	return natsioObjPut{o}, err
}

// NewObjGet implements ObjGetter: objstore.Store.Get, io.Copy to
// io.Discard (the reader checks size and digest at the end).
func (Natsio) NewObjGet(ctx context.Context, cfg Config) (Runner, error) {
	o, err := natsioObjConnect(ctx, cfg, "bench-objget", false)
	return natsioObjGet{o}, err
}

// ObjName is the name of the i-th object put by objput.
func ObjName(i int) string { return "obj-" + strconv.Itoa(i) }

func (o natsioObjPut) Run(n int) error {
	ctx := context.Background()
	for range n {
		info, err := o.store.PutBytes(ctx, ObjName(o.next), o.data)
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

func (o natsioObjGet) Run(n int) error {
	ctx := context.Background()
	for i := range n {
		r, err := o.store.Get(ctx, o.object)
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
