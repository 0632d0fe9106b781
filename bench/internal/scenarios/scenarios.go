// Package scenarios is the registry of benchmark scenarios. Each entry names
// a scenario, its kind (which clients interface runs it) and its parameters.
//
// To add a scenario of an existing kind, add an entry to Registry. To add a
// kind (JetStream publish, pull consumers, KV…), add its interface to package
// clients, implement it for the clients that support it, add a Kind here
// with a case in Prepare, and add entries. Clients without the interface
// show as not applicable.
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
	// Default marks the scenarios run when no -scenarios pattern is given.
	Default bool
	// Note is a one-line description for -list and the README.
	Note string
}

// Latency reports whether the scenario records per-operation latencies.
func (s Scenario) Latency() bool { return s.Kind == Request }

// InMsgsPerOp is how many messages the server receives per operation, used
// to check the server's in_msgs counter after a run.
func (s Scenario) InMsgsPerOp() int {
	if s.Kind == Request {
		return 2 // request + reply
	}
	return 1
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
	{Name: "pubsub.sep.cb.1024", Kind: PubSub, Size: 1024, Mode: clients.Callback, Count: 400_000, Warmup: 40_000, Default: true, Note: "two connections, callback subscriber"},
	{Name: "pubsub.sep.iter.1024", Kind: PubSub, Size: 1024, Mode: clients.Iter, Count: 400_000, Warmup: 40_000, Default: true, Note: "two connections, iterator"},
	{Name: "pubsub.sep.next.1024", Kind: PubSub, Size: 1024, Mode: clients.Next, Count: 400_000, Warmup: 40_000, Note: "two connections, NextMsg loop"},
	{Name: "pubsub.same.cb.16", Kind: PubSub, Size: 16, Mode: clients.Callback, SameConn: true, Count: 1_000_000, Warmup: 100_000, Default: true, Note: "one connection, callback subscriber"},
	{Name: "pubsub.same.iter.16", Kind: PubSub, Size: 16, Mode: clients.Iter, SameConn: true, Count: 1_000_000, Warmup: 100_000, Default: true, Note: "one connection, iterator"},

	{Name: "req.16", Kind: Request, Size: 16, Count: 15_000, Warmup: 1_000, Default: true, Note: "request/reply, responder on another connection in-process; plain calls (natsio Request(context.Background()), nats.go Request(timeout))"},
	{Name: "req.ctx.16", Kind: Request, Size: 16, Mode: clients.Ctx, Count: 15_000, Warmup: 1_000, Default: true, Note: "as req.16 with a caller context that has a deadline (natsio Request(ctx), nats.go RequestWithContext)"},
}

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
}

// Subject is the subject every scenario publishes to (one per scenario, so
// that a straggler of a previous run cannot be counted).
func (s Scenario) Subject() string { return "bench." + s.Name }

// Prepare connects client c for the scenario. maxMsgs bounds the messages
// of the whole instance (warm-up included).
func (s Scenario) Prepare(ctx context.Context, c clients.Client, url string, maxMsgs int) (*Prepared, error) {
	cfg := clients.Config{
		URL:      url,
		Subject:  s.Subject(),
		Size:     s.Size,
		Mode:     s.Mode,
		SameConn: s.SameConn,
		MaxMsgs:  maxMsgs,
	}
	var r clients.Runner
	var err error
	switch s.Kind {
	case Publish:
		k, ok := c.(clients.Publisher)
		if !ok {
			return nil, ErrNotApplicable
		}
		r, err = k.NewPublish(ctx, cfg)
	case PubSub:
		k, ok := c.(clients.PubSuber)
		if !ok {
			return nil, ErrNotApplicable
		}
		r, err = k.NewPubSub(ctx, cfg)
	case Request:
		k, ok := c.(clients.Requester)
		if !ok {
			return nil, ErrNotApplicable
		}
		lr, err := k.NewRequest(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return &Prepared{Run: func(_ int, lat []time.Duration) error { return lr.Run(lat) }, Close: lr.Close}, nil
	default:
		return nil, fmt.Errorf("unknown kind %q", s.Kind)
	}
	if err != nil {
		return nil, err
	}
	return &Prepared{Run: func(n int, _ []time.Duration) error { return r.Run(n) }, Close: r.Close}, nil
}
