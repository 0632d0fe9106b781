// Package scenarios is the registry of benchmark scenarios. Each entry names
// a scenario, its kind (which clients interface runs it) and its parameters.
//
// To add a scenario of an existing kind, add an entry to Registry. To add a
// kind, add its interface to package clients, implement it for the clients
// that support it, add a Kind here with a case in Prepare (and, if it needs
// streams, in Setup, Verify and Teardown: fixture.go), and add entries.
// Clients without the interface show as not applicable.
package scenarios

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/natsio/natsio/bench/internal/clients"
)

// Kind selects the clients interface that runs a scenario.
type Kind string

// Kinds.
const (
	// Publish: core publish of Count messages, then a flush round trip.
	Publish Kind = "pub"
	// PubSub: publish Count messages to a subscriber in the same process
	// and wait until all have been received.
	PubSub Kind = "pubsub"
	// Request: Count sequential request/reply round trips, with latency
	// percentiles.
	Request Kind = "req"
	// AfterLoop: the latency of a subscription message published shortly
	// after a loop of requests on the subscriber's connection ends
	// (clients.AfterLooper).
	AfterLoop Kind = "afterloop"

	// JetStream, KV and object store kinds. Their streams are created (and
	// filled) by Setup before every run and checked by Verify after it;
	// see fixture.go.

	// JSPubSync: JetStream publishes, each waiting for its PubAck.
	JSPubSync Kind = "jspub.sync"
	// JSPubAsync: JetStream publishes with Window acks outstanding.
	JSPubAsync Kind = "jspub.async"
	// JSFetch: fetches of Batch from a durable pull consumer, explicit
	// ack per message.
	JSFetch Kind = "jsfetch"
	// JSConsume: continuous consumption (Batch kept requested), explicit
	// ack per message.
	JSConsume Kind = "jsconsume"
	// JSOrdered: an ordered consumer's read-through of the stream.
	JSOrdered Kind = "jsordered"
	// KVPut and KVGet: sequential KV operations over Keys keys.
	KVPut Kind = "kvput"
	KVGet Kind = "kvget"
	// FastPub: one fast-ingest batch per run (natsio extra).
	FastPub Kind = "fastpub"
	// AtomicBatch: atomic batches of Batch messages (natsio extra).
	AtomicBatch Kind = "atomicbatch"
	// GetBatch: batch direct gets of Batch messages (natsio extra).
	GetBatch Kind = "getbatch"
	// DirectGet: one direct get per message, the comparison for GetBatch.
	DirectGet Kind = "directget"
	// ObjPut and ObjGet: objects of Size bytes.
	ObjPut Kind = "objput"
	ObjGet Kind = "objget"

	// Scale kinds (natsio and nats.go): how cost grows with the state a
	// client holds.

	// IdleConns: Count connections opened and kept idle; an op is one
	// connection, and the live heap per op is what an idle connection
	// keeps.
	IdleConns Kind = "idleconns"
	// ManySubs: Subs callback subscriptions on one connection, Count
	// messages published round-robin over their subjects.
	ManySubs Kind = "manysubs"
	// ManyConns: Conns connections in one process, each publishing to its
	// own callback subscription, Count messages in total.
	ManyConns Kind = "manyconns"
	// InFlight: Count requests with InFlight of them in flight at once on
	// one connection; the responder is on another.
	InFlight Kind = "inflight"
)

// Scenario is one registry entry.
type Scenario struct {
	Name     string
	Kind     Kind
	Size     int          // payload bytes
	Mode     clients.Mode // pubsub: how the subscriber consumes
	SameConn bool         // pubsub: publisher and subscriber share a connection
	Count    int          // operations in the timed section (default)
	Warmup   int          // untimed operations before it
	// Storage of the scenario's stream: "memory" or "file" (JetStream,
	// KV and object store kinds).
	Storage string
	// Batch, Window, Keys: see clients.Config.
	Batch  int
	Window int
	Keys   int
	// Stored is how many messages getbatch and directget read from.
	Stored int
	// Subs and Conns: see clients.Config (scale kinds).
	Subs, Conns int
	// InFlight: see clients.Config (scale kinds).
	InFlight int
	// Group names a family of scale scenarios that differ only in Scale
	// (subscriptions, connections or stored messages); the report adds a
	// growth row per family: the cost at the largest Scale over the cost
	// at the smallest.
	Group string
	Scale int
	// Default marks the scenarios run when no -scenarios pattern is given.
	Default bool
	// Note is a one-line description for -list and the README.
	Note string
}

// Latency reports whether the scenario records per-operation latencies.
func (s Scenario) Latency() bool {
	switch s.Kind {
	case Request, JSPubSync, KVPut, KVGet, DirectGet, AfterLoop:
		return true
	}
	return false
}

// InMsgsPerOp is how many messages the server receives per operation, used
// to check the server's in_msgs counter after a run. It is 0 for the
// JetStream kinds: what a client sends besides its messages (API requests,
// pulls, acks, flow control) differs from one client to the other, so their
// runs are verified on the stream's and consumers' state instead (Verify).
func (s Scenario) InMsgsPerOp() int {
	switch s.Kind {
	case Publish, PubSub, ManySubs, ManyConns:
		return 1
	case Request, InFlight:
		return 2 // request + reply
	case AfterLoop:
		return 2*clients.AfterLoopRequests + 1 // the loop, and the message after it
	}
	return 0
}

// FixedCount reports whether the scenario's fixture depends on the counts
// of its runs (the stream is filled with what the runs read), so that the
// count cannot be calibrated after the warm-up (-duration).
func (s Scenario) FixedCount() bool {
	switch s.Kind {
	case JSFetch, JSConsume, JSOrdered:
		return true
	}
	return false
}

// Registry lists every scenario, in report order. Counts aim at 1–2 s per
// run on a 2-core machine for nats.go; scale them with -scale or replace
// them with -count or -duration.
var Registry = []Scenario{
	{Name: "pub.16", Kind: Publish, Size: 16, Count: 3_000_000, Warmup: 200_000, Default: true, Note: "publish, then flush round trip"},
	{Name: "pub.128", Kind: Publish, Size: 128, Count: 2_000_000, Warmup: 200_000, Default: true, Note: "publish, then flush round trip"},
	{Name: "pub.1024", Kind: Publish, Size: 1024, Count: 1_000_000, Warmup: 100_000, Default: true, Note: "publish, then flush round trip"},

	{Name: "pubsub.sep.cb.16", Kind: PubSub, Size: 16, Mode: clients.Callback, Count: 1_000_000, Warmup: 100_000, Default: true, Note: "two connections, callback subscriber"},
	{Name: "pubsub.sep.iter.16", Kind: PubSub, Size: 16, Mode: clients.Iter, Count: 1_000_000, Warmup: 100_000, Default: true, Note: "two connections, iterator (natsio Messages, nats.go Msgs)"},
	{Name: "pubsub.sep.next.16", Kind: PubSub, Size: 16, Mode: clients.Next, Count: 1_000_000, Warmup: 100_000, Note: "two connections, NextMsg loop"},
	{Name: "pubsub.sep.borrow.16", Kind: PubSub, Size: 16, Mode: clients.Borrowed, Count: 1_000_000, Warmup: 100_000, Default: true, Note: "two connections, natsio's opt-in zero-copy SubscribeFunc handler with conn.Borrowed (lent messages; nats.go n/a)"},
	{Name: "pubsub.sep.cb.1024", Kind: PubSub, Size: 1024, Mode: clients.Callback, Count: 400_000, Warmup: 40_000, Default: true, Note: "two connections, callback subscriber"},
	{Name: "pubsub.sep.iter.1024", Kind: PubSub, Size: 1024, Mode: clients.Iter, Count: 400_000, Warmup: 40_000, Default: true, Note: "two connections, iterator"},
	{Name: "pubsub.sep.next.1024", Kind: PubSub, Size: 1024, Mode: clients.Next, Count: 400_000, Warmup: 40_000, Note: "two connections, NextMsg loop"},
	{Name: "pubsub.same.cb.16", Kind: PubSub, Size: 16, Mode: clients.Callback, SameConn: true, Count: 1_000_000, Warmup: 100_000, Default: true, Note: "one connection, callback subscriber"},
	{Name: "pubsub.same.iter.16", Kind: PubSub, Size: 16, Mode: clients.Iter, SameConn: true, Count: 1_000_000, Warmup: 100_000, Default: true, Note: "one connection, iterator"},

	{Name: "req.16", Kind: Request, Size: 16, Count: 15_000, Warmup: 1_000, Default: true, Note: "request/reply, responder on another connection in-process; plain calls (natsio Request(context.Background()), nats.go Request(timeout))"},
	{Name: "afterloop.next.16", Kind: AfterLoop, Size: 16, Mode: clients.Next, Count: 300, Warmup: 10, Note: "a message published 0.5–3 ms after a loop of 200 requests ends, to a NextMsg subscriber on the requesting connection; latency from publish to arrival"},
	{Name: "afterloop.cb.16", Kind: AfterLoop, Size: 16, Mode: clients.Callback, Count: 300, Warmup: 10, Note: "as afterloop.next.16, read by a callback subscription made before the loop, before its first message"},
	{Name: "req.ctx.16", Kind: Request, Size: 16, Mode: clients.Ctx, Count: 15_000, Warmup: 1_000, Default: true, Note: "as req.16 with a caller context that has a deadline (natsio Request(ctx), nats.go RequestWithContext)"},

	{Name: "jspub.sync.mem.128", Kind: JSPubSync, Size: 128, Storage: memory, Count: 20_000, Warmup: 1_000, Default: true, Note: "JetStream publish, wait for each PubAck (memory stream)"},
	{Name: "jspub.sync.file.128", Kind: JSPubSync, Size: 128, Storage: file, Count: 20_000, Warmup: 1_000, Default: true, Note: "JetStream publish, wait for each PubAck (file stream)"},
	{Name: "jspub.async.mem.128", Kind: JSPubAsync, Size: 128, Storage: memory, Window: 4000, Count: 200_000, Warmup: 20_000, Default: true, Note: "JetStream async publish, 4000 acks outstanding, then wait for all (memory stream)"},
	{Name: "jspub.async.file.128", Kind: JSPubAsync, Size: 128, Storage: file, Window: 4000, Count: 200_000, Warmup: 20_000, Default: true, Note: "JetStream async publish, 4000 acks outstanding, then wait for all (file stream)"},
	{Name: "jsfetch.128", Kind: JSFetch, Size: 128, Storage: memory, Batch: 500, Count: 200_000, Warmup: 10_000, Default: true, Note: "fetch(500) from a durable consumer (explicit acks, max ack pending 1000), ack each message"},
	{Name: "jsconsume.128", Kind: JSConsume, Size: 128, Storage: memory, Batch: 500, Count: 200_000, Warmup: 10_000, Default: true, Note: "continuous consume, 500 requested and refilled at half, ack each message"},
	{Name: "jsordered.128", Kind: JSOrdered, Size: 128, Storage: memory, Batch: 500, Count: 200_000, Warmup: 10_000, Default: true, Note: "ordered consumer read-through of the stream (consumer created in the timed section)"},
	{Name: "jsconsume.borrow.128", Kind: JSConsume, Size: 128, Storage: memory, Batch: 500, Mode: clients.Borrowed, Count: 200_000, Warmup: 10_000, Default: true, Note: "as jsconsume.128 with natsio's opt-in lent messages (pull.Borrowed; nats.go n/a)"},
	{Name: "jsordered.borrow.128", Kind: JSOrdered, Size: 128, Storage: memory, Batch: 500, Mode: clients.Borrowed, Count: 200_000, Warmup: 10_000, Default: true, Note: "as jsordered.128 with natsio's opt-in lent messages (ordered.Borrowed; nats.go n/a)"},
	{Name: "kvput.mem.128", Kind: KVPut, Size: 128, Storage: memory, Keys: 1000, Count: 10_000, Warmup: 1_000, Default: true, Note: "KV put over 1000 keys (memory bucket, history 1)"},
	{Name: "kvget.mem.128", Kind: KVGet, Size: 128, Storage: memory, Keys: 1000, Count: 10_000, Warmup: 1_000, Default: true, Note: "KV get over 1000 stored keys (direct get)"},

	{Name: "fastpub.128", Kind: FastPub, Size: 128, Storage: memory, Count: 200_000, Warmup: 20_000, Default: true, Note: "natsio extra: one fast-ingest batch per run (flow 100, 2 intervals ahead: the defaults), commit"},
	{Name: "atomicbatch.128", Kind: AtomicBatch, Size: 128, Storage: memory, Batch: 100, Count: 100_000, Warmup: 10_000, Default: true, Note: "natsio extra: atomic batches of 100 (ack on the first message and the commit)"},
	{Name: "getbatch.10k", Kind: GetBatch, Size: 128, Storage: memory, Batch: 10_000, Stored: 10_000, Count: 200_000, Warmup: 10_000, Default: true, Note: "natsio extra: batch direct gets of 10k messages (128 B) from a 10k stream; msgs/s per message"},
	{Name: "jsdirectget.128", Kind: DirectGet, Size: 128, Storage: memory, Stored: 10_000, Count: 10_000, Warmup: 1_000, Default: true, Note: "one direct get per message from the same 10k stream (the comparison for getbatch.10k)"},
	{Name: "objput.64MiB", Kind: ObjPut, Size: 64 << 20, Storage: file, Count: 3, Warmup: 1, Default: true, Note: "object store put of 64 MiB objects (file store, 128 KiB chunks)"},
	{Name: "objget.64MiB", Kind: ObjGet, Size: 64 << 20, Storage: file, Count: 3, Warmup: 1, Default: true, Note: "object store get of a 64 MiB object, read to the end"},

	// Scale scenarios: not in the default set (-scenarios '^scale\.').
	{Name: "scale.idle.100", Kind: IdleConns, Count: 100, Warmup: 10, Group: "scale.idle", Scale: 100, Note: "open 100 connections and keep them idle; per op: one connection (see live B/op)"},
	{Name: "scale.idle.1k", Kind: IdleConns, Count: 1000, Warmup: 10, Group: "scale.idle", Scale: 1000, Note: "open 1000 connections and keep them idle"},
	{Name: "scale.subs.1.16", Kind: ManySubs, Size: 16, Subs: 1, Count: 200_000, Warmup: 20_000, Group: "scale.subs", Scale: 1, Note: "1 callback subscription on one connection; publish round-robin over the subjects from another"},
	{Name: "scale.subs.1k.16", Kind: ManySubs, Size: 16, Subs: 1000, Count: 200_000, Warmup: 20_000, Group: "scale.subs", Scale: 1000, Note: "1000 callback subscriptions on one connection"},
	{Name: "scale.subs.100k.16", Kind: ManySubs, Size: 16, Subs: 100_000, Count: 500_000, Warmup: 100_000, Group: "scale.subs", Scale: 100_000, Note: "100k callback subscriptions on one connection (the warm-up gives each one message, so that a client starting a handler goroutine at the first message, as natsio does, is not timed starting them)"},
	{Name: "scale.ordered.10k", Kind: JSOrdered, Size: 128, Storage: memory, Batch: 500, Count: 10_000, Warmup: 1_000, Group: "scale.ordered", Scale: 10_000, Note: "ordered read of 10k stored messages"},
	{Name: "scale.ordered.100k", Kind: JSOrdered, Size: 128, Storage: memory, Batch: 500, Count: 100_000, Warmup: 1_000, Group: "scale.ordered", Scale: 100_000, Note: "ordered read of 100k stored messages"},
	{Name: "scale.ordered.1m", Kind: JSOrdered, Size: 128, Storage: memory, Batch: 500, Count: 1_000_000, Warmup: 1_000, Group: "scale.ordered", Scale: 1_000_000, Note: "ordered read of 1M stored messages (128 MB memory stream)"},
	{Name: "scale.inflight.1.16", Kind: InFlight, Size: 16, InFlight: 1, Count: 15_000, Warmup: 1_000, Group: "scale.inflight", Scale: 1, Note: "requests one at a time (as req.16, without latencies)"},
	{Name: "scale.inflight.10k.16", Kind: InFlight, Size: 16, InFlight: 10_000, Count: 100_000, Warmup: 10_000, Group: "scale.inflight", Scale: 10_000, Note: "10k requests in flight at once on one connection, one goroutine each"},
	{Name: "scale.conns.1.16", Kind: ManyConns, Size: 16, Conns: 1, Count: 400_000, Warmup: 40_000, Group: "scale.conns", Scale: 1, Note: "1 connection publishing to its own callback subscription"},
	{Name: "scale.conns.100.16", Kind: ManyConns, Size: 16, Conns: 100, Count: 400_000, Warmup: 40_000, Group: "scale.conns", Scale: 100, Note: "100 connections in one process, each publishing to its own callback subscription, all at once"},
}

// Stream storage types.
const (
	memory = "memory"
	file   = "file"
)

// Select returns the scenarios whose name matches pattern, or the default
// ones when pattern is empty.
func Select(pattern string) ([]Scenario, error) {
	var re *regexp.Regexp
	if pattern != "" {
		var err error
		if re, err = regexp.Compile(pattern); err != nil {
			return nil, err
		}
	}
	var out []Scenario
	for _, s := range Registry {
		if (re == nil && s.Default) || (re != nil && re.MatchString(s.Name)) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no scenario matches %q", pattern)
	}
	return out, nil
}

// Lookup finds a scenario by exact name.
func Lookup(name string) (Scenario, bool) {
	for _, s := range Registry {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// ErrNotApplicable reports a client that does not implement a scenario's
// kind.
var ErrNotApplicable = errors.New("not applicable")

// Prepared is a scenario set up for one client. For latency scenarios Run
// records each operation's duration in lat (len(lat) == n).
type Prepared struct {
	Run   func(n int, lat []time.Duration) error
	Close func() error
	// Stalls counts the backpressure stalls of the runs so far (see
	// clients.Staller); 0 for a kind that has none.
	Stalls func() int64
}

// Faults that the bench's own tests inject (Plan.Fault), to check that the
// harness tells a broken client from a loaded machine.
const (
	// FaultDrop makes the timed run do one operation fewer than it
	// reports, as a client that loses a message would: the harness's
	// checks (the server's in_msgs, the stream's state) must fail the run.
	FaultDrop = "drop"
	// FaultStall shrinks an async publish window to 1 with a stall wait
	// of 1 µs, so that publishes meet a full window all the time: the run
	// must wait, count the stalls and succeed.
	FaultStall = "stall"
)

// Plan is what one instance of a scenario runs: Run(Warmup), then Run(N).
type Plan struct {
	Warmup int
	N      int
	// MaxMsgs bounds the messages of the whole instance (pub/sub queue
	// sizing); 0: Warmup + N.
	MaxMsgs int
	// Private, when set, is appended as a last token to the subject of a
	// request/reply or pub/sub scenario, so that two processes running it
	// at once (bench -pair) neither answer each other's requests nor
	// receive each other's messages.
	Private string
	// Fault injects a fault for the bench's own tests: FaultDrop or
	// FaultStall; empty in every measurement.
	Fault string
	// Writers is how many clients shared the fixture, each doing an equal
	// part of Warmup + N (bench -pair: 2); 0 means one.
	Writers int
}

// Subject is the subject every scenario publishes to (one per scenario, so
// that a straggler of a previous run cannot be counted).
func (s Scenario) Subject() string { return "bench." + s.Name }

// Supports reports whether client c implements the scenario's kind.
func (s Scenario) Supports(c clients.Client) bool {
	var ok bool
	switch s.Kind {
	case Publish:
		_, ok = c.(clients.Publisher)
	case PubSub:
		_, ok = c.(clients.PubSuber)
		if ok && s.Mode == clients.Borrowed {
			_, ok = c.(clients.BorrowingSubscriber)
		}
	case Request:
		_, ok = c.(clients.Requester)
	case AfterLoop:
		_, ok = c.(clients.AfterLooper)
	case JSConsume, JSOrdered:
		if s.Mode == clients.Borrowed {
			if _, ok := c.(clients.BorrowingConsumer); !ok {
				return false
			}
		}
		if s.Kind == JSConsume {
			_, ok = c.(clients.JSConsumer)
		} else {
			_, ok = c.(clients.JSOrderedReader)
		}
	case JSPubSync:
		_, ok = c.(clients.JSSyncPublisher)
	case JSPubAsync:
		_, ok = c.(clients.JSAsyncPublisher)
	case JSFetch:
		_, ok = c.(clients.JSFetcher)
	case KVPut:
		_, ok = c.(clients.KVPutter)
	case KVGet:
		_, ok = c.(clients.KVGetter)
	case FastPub:
		_, ok = c.(clients.FastPublisher)
	case AtomicBatch:
		_, ok = c.(clients.AtomicBatcher)
	case GetBatch:
		_, ok = c.(clients.BatchGetter)
	case DirectGet:
		_, ok = c.(clients.DirectGetter)
	case ObjPut:
		_, ok = c.(clients.ObjPutter)
	case ObjGet:
		_, ok = c.(clients.ObjGetter)
	case IdleConns:
		_, ok = c.(clients.IdleConnector)
	case ManySubs:
		_, ok = c.(clients.ManySubscriber)
	case ManyConns:
		_, ok = c.(clients.ManyConnector)
	case InFlight:
		_, ok = c.(clients.InFlighter)
	}
	return ok
}

// Config is the client configuration of the scenario under plan: its
// subject and payload, and the names and counts of the fixture that Setup
// creates for the same plan.
func (s Scenario) Config(url string, plan Plan) clients.Config {
	maxMsgs := plan.MaxMsgs
	if maxMsgs == 0 {
		maxMsgs = plan.Warmup + plan.N
	}
	cfg := clients.Config{
		URL:      url,
		Subject:  s.Subject(),
		Size:     s.Size,
		Mode:     s.Mode,
		SameConn: s.SameConn,
		MaxMsgs:  maxMsgs,
		Stream:   s.streamName(),
		Bucket:   s.bucketName(),
		Batch:    s.Batch,
		Window:   s.Window,
		Keys:     s.Keys,
		Subs:     s.Subs,
		Conns:    s.Conns,
		InFlight: s.InFlight,
	}
	if (s.Kind == Request || s.Kind == PubSub) && plan.Private != "" {
		cfg.Subject += "." + plan.Private
	}
	if plan.Fault == FaultStall && s.Kind == JSPubAsync {
		cfg.Window, cfg.StallWait = 1, time.Microsecond
	}
	switch s.Kind {
	case JSFetch, JSConsume, JSOrdered:
		cfg.Stored = s.stored(plan)
		if s.Kind == JSOrdered {
			cfg.StartSeqs = []uint64{s.startSeq(plan, plan.Warmup), s.startSeq(plan, plan.N)}
		} else {
			cfg.Consumers = []string{consumerWarmup, consumerTimed}
		}
	case GetBatch, DirectGet:
		cfg.Stored = s.Stored
	case KVGet:
		cfg.Stored = s.Keys
	case ObjGet:
		cfg.Stored, cfg.Object = 1, storedObject
	}
	return cfg
}

// Prepare connects client c for the scenario, whose fixture Setup has
// created for the same plan.
func (s Scenario) Prepare(ctx context.Context, c clients.Client, url string, plan Plan) (*Prepared, error) {
	if !s.Supports(c) {
		return nil, ErrNotApplicable
	}
	cfg := s.Config(url, plan)
	var r clients.Runner
	var lr clients.LatencyRunner
	var err error
	switch s.Kind {
	case Publish:
		r, err = c.(clients.Publisher).NewPublish(ctx, cfg)
	case PubSub:
		r, err = c.(clients.PubSuber).NewPubSub(ctx, cfg)
	case Request:
		lr, err = c.(clients.Requester).NewRequest(ctx, cfg)
	case AfterLoop:
		lr, err = c.(clients.AfterLooper).NewAfterLoop(ctx, cfg)
	case JSPubSync:
		lr, err = c.(clients.JSSyncPublisher).NewJSPublishSync(ctx, cfg)
	case JSPubAsync:
		r, err = c.(clients.JSAsyncPublisher).NewJSPublishAsync(ctx, cfg)
	case JSFetch:
		r, err = c.(clients.JSFetcher).NewJSFetch(ctx, cfg)
	case JSConsume:
		r, err = c.(clients.JSConsumer).NewJSConsume(ctx, cfg)
	case JSOrdered:
		r, err = c.(clients.JSOrderedReader).NewJSOrdered(ctx, cfg)
	case KVPut:
		lr, err = c.(clients.KVPutter).NewKVPut(ctx, cfg)
	case KVGet:
		lr, err = c.(clients.KVGetter).NewKVGet(ctx, cfg)
	case FastPub:
		r, err = c.(clients.FastPublisher).NewFastPublish(ctx, cfg)
	case AtomicBatch:
		r, err = c.(clients.AtomicBatcher).NewAtomicBatch(ctx, cfg)
	case GetBatch:
		r, err = c.(clients.BatchGetter).NewGetBatch(ctx, cfg)
	case DirectGet:
		lr, err = c.(clients.DirectGetter).NewDirectGet(ctx, cfg)
	case ObjPut:
		r, err = c.(clients.ObjPutter).NewObjPut(ctx, cfg)
	case ObjGet:
		r, err = c.(clients.ObjGetter).NewObjGet(ctx, cfg)
	case IdleConns:
		r, err = c.(clients.IdleConnector).NewIdleConns(ctx, cfg)
	case ManySubs:
		r, err = c.(clients.ManySubscriber).NewManySubs(ctx, cfg)
	case ManyConns:
		r, err = c.(clients.ManyConnector).NewManyConns(ctx, cfg)
	case InFlight:
		r, err = c.(clients.InFlighter).NewInFlight(ctx, cfg)
	default:
		return nil, fmt.Errorf("unknown kind %q", s.Kind)
	}
	if err != nil {
		return nil, err
	}
	p := &Prepared{Stalls: func() int64 { return 0 }}
	if s.Latency() {
		p.Run, p.Close = func(_ int, lat []time.Duration) error { return lr.Run(lat) }, lr.Close
	} else {
		p.Run, p.Close = func(n int, _ []time.Duration) error { return r.Run(n) }, r.Close
		if st, ok := r.(clients.Staller); ok {
			p.Stalls = st.Stalls
		}
	}
	if plan.Fault == FaultDrop {
		// The second Run is the timed one: it does one operation fewer.
		run, runs := p.Run, 0
		p.Run = func(n int, lat []time.Duration) error {
			if runs++; runs == 2 && n > 1 {
				n--
				if lat != nil {
					lat = lat[:n]
				}
			}
			return run(n, lat)
		}
	}
	return p, nil
}
