package conn

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/natsio/natsio/proto"
)

// Message tracing (ADR-41, nats-server 2.11 and later).
//
// A message published with the header Nats-Trace-Dest: <subject> is traced:
// every server it passes through publishes one JSON report (a TraceEvent)
// to that subject, listing what happened to the message there (ingress,
// subject mapping, stream export, service import, JetStream, egress). With
// Nats-Trace-Only: true the message is traced to its destinations but not
// delivered to them.

// Trace headers (ADR-41).
const (
	HeaderTraceDest = "Nats-Trace-Dest"
	HeaderTraceOnly = "Nats-Trace-Only"
	HeaderTraceHop  = "Nats-Trace-Hop"
)

// Errors of Trace.
var (
	// ErrTraceUnsupported: the connected server is older than 2.11. It
	// would ignore the trace headers and deliver the message, trace-only
	// or not, so nothing is sent.
	ErrTraceUnsupported = errors.New("nats: server does not support message tracing (needs 2.11)")
	// ErrBadTrace wraps a trace report that could not be decoded.
	ErrBadTrace = errors.New("nats: malformed trace event")
)

// DefaultTraceStall is how long Trace waits for one more report after the
// last one, unless TraceStall says otherwise.
const DefaultTraceStall = 500 * time.Millisecond

// TraceOpt configures one Trace call. Invalid values make Trace fail with
// an error matching ErrInvalidOption before anything is sent.
type TraceOpt struct{ f func(*traceConfig) error }

// apply applies o to c; the zero TraceOpt is invalid.
func (o TraceOpt) apply(c *traceConfig) error {
	if o.f == nil {
		return invalid("zero TraceOpt")
	}
	return o.f(c)
}

type traceConfig struct {
	only  bool
	stall time.Duration
	total time.Duration
}

// TraceOnly asks the servers to trace the message without delivering it
// (Nats-Trace-Only: true): the egress entries name the subscriptions and
// connections it would have reached. It is not stored in a stream either.
func TraceOnly() TraceOpt {
	return TraceOpt{func(c *traceConfig) error { c.only = true; return nil }}
}

// TraceStall sets how long Trace waits for another report after the last
// one (DefaultTraceStall). The number of reports depends on the topology:
// one per server the message reaches. d must be positive.
func TraceStall(d time.Duration) TraceOpt {
	return TraceOpt{func(c *traceConfig) error {
		if d <= 0 {
			return invalid("trace stall %v", d)
		}
		c.stall = d
		return nil
	}}
}

// TraceTimeout bounds the whole collection; without it ctx's deadline, or
// the connection's request timeout when ctx has none, does. d must be
// positive.
func TraceTimeout(d time.Duration) TraceOpt {
	return TraceOpt{func(c *traceConfig) error {
		if d <= 0 {
			return invalid("trace timeout %v", d)
		}
		c.total = d
		return nil
	}}
}

// Trace publishes data with headers h (nil for none; it is not modified)
// to subject as a traced message, with its trace destination set to a
// fresh inbox of this connection, and returns the reports the servers
// publish there, in arrival order. It collects until no report has arrived
// for the stall time (TraceStall) after the last one, or the total timeout
// (TraceTimeout) passes; so it returns no sooner than the stall time after
// the last report. Any Nats-Trace-Dest or Nats-Trace-Only in h is
// replaced (or removed). An Accept-Encoding of gzip or snappy in h makes the servers
// compress their reports; Trace decompresses them.
//
// Errors: ErrBadSubject, ErrBadHeader, ErrInvalidOption, ErrNilContext and
// ErrTraceUnsupported before anything is sent; ErrTimeout when no report
// arrives within the total timeout; the context's cause when ctx is
// cancelled; ErrDisconnected, ErrClosed, and publish errors. A report that
// cannot be decoded ends the collection with an error wrapping
// ErrBadTrace, returned with the reports decoded before it; so does a
// report past the bounds of one call: 1024 reports, 8 MiB of report JSON
// in all (after decompression), 65536 JSON objects in all.
func (nc *Conn) Trace(ctx context.Context, subject string, h *proto.Header, data []byte, opts ...TraceOpt) ([]*TraceEvent, error) {
	c := traceConfig{stall: DefaultTraceStall}
	for _, o := range opts {
		if err := o.apply(&c); err != nil {
			return nil, err
		}
	}
	if err := checkPublish(subject, h); err != nil {
		return nil, err
	}
	if !versionAtLeast(nc.ServerInfo().Version, 2, 11) {
		return nil, ErrTraceUnsupported
	}
	hdr := h.Clone()
	if hdr == nil {
		hdr = new(proto.Header)
	}
	if c.only {
		hdr.Set(HeaderTraceOnly, "true")
	} else {
		hdr.Del(HeaderTraceOnly)
	}
	mc := manyConfig{stall: c.stall, total: c.total}
	var (
		events []*TraceEvent
		err    error
		budget traceBudget
	)
	nc.gather(ctx, &mc, func(inbox string) error {
		hdr.Set(HeaderTraceDest, inbox)
		return nc.publish(subject, "", hdr, data, pubUrgent)
	}, func(m *Msg, e error) bool {
		if e != nil {
			err = e
			return false
		}
		ev, e := budget.decode(m)
		if e != nil {
			err = e
			return false
		}
		events = append(events, ev)
		return true
	})
	return events, err
}

// Bounds on what one Trace call accepts from the servers. A report is JSON
// of a few KiB per hop; the bounds leave room for thousands of hops and
// egress entries, and keep a hostile or broken server (or anyone able to
// publish to the trace inbox) from making Trace hold unbounded memory, for
// example with small compressed reports that inflate to megabytes each.
const (
	traceMaxReports = 1024     // reports per call
	traceMaxBytes   = 8 << 20  // report JSON per call, after decompression
	traceMaxObjects = 64 << 10 // JSON objects per call ('{' bytes: entries, servers…)
)

// traceBudget is what a Trace call has decoded so far, against the bounds.
type traceBudget struct{ reports, bytes, objects int }

// decode decodes one report, decompressing it as its Content-Encoding
// header says, within what is left of the budget.
func (b *traceBudget) decode(m *Msg) (*TraceEvent, error) {
	if b.reports >= traceMaxReports {
		return nil, fmt.Errorf("%w: more than %d reports", ErrBadTrace, traceMaxReports)
	}
	b.reports++
	left := traceMaxBytes - b.bytes
	body := m.Data
	enc := m.Header.Get("Content-Encoding")
	var r io.Reader
	switch strings.ToLower(enc) {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadTrace, err)
		}
		r = zr
	case "snappy", "s2":
		r = s2.NewReader(bytes.NewReader(body))
	default:
		return nil, fmt.Errorf("%w: content encoding %q", ErrBadTrace, enc)
	}
	if r != nil {
		d, err := io.ReadAll(io.LimitReader(r, int64(left)+1))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadTrace, err)
		}
		body = d
	}
	if len(body) > left {
		return nil, fmt.Errorf("%w: reports of more than %d bytes in all", ErrBadTrace, traceMaxBytes)
	}
	b.bytes += len(body)
	// Each decoded object costs far more than its bytes ("{}," becomes a
	// TraceEntry of some 300 bytes): bound their number before decoding.
	b.objects += bytes.Count(body, []byte{'{'})
	if b.objects > traceMaxObjects {
		return nil, fmt.Errorf("%w: reports of more than %d JSON objects in all", ErrBadTrace, traceMaxObjects)
	}
	ev := new(TraceEvent)
	if err := json.Unmarshal(body, ev); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadTrace, err)
	}
	return ev, nil
}

// decodeTrace decodes one report on its own (a fresh budget).
func decodeTrace(m *Msg) (*TraceEvent, error) {
	var b traceBudget
	return b.decode(m)
}

// versionAtLeast reports whether a server version "X.Y.Z[-…]" is at least
// major.minor; an unparsable version is taken as new enough.
func versionAtLeast(v string, major, minor int) bool {
	x, y, ok := parseVersion(v)
	return !ok || x > major || x == major && y >= minor
}

// TraceEvent is the report one server publishes about a traced message
// (the server's MsgTraceEvent). A message that crosses routes, gateways or
// leaf nodes yields one report per server; Hops and the Nats-Trace-Hop
// header in Request.Header link them.
type TraceEvent struct {
	Server  TraceServer  `json:"server"`
	Request TraceRequest `json:"request"`
	// Hops is how many remote servers (routes, gateways, leaf nodes) this
	// server forwarded the message to.
	Hops   int          `json:"hops,omitempty"`
	Events []TraceEntry `json:"events"`
}

// TraceServer identifies the server that sent a report.
type TraceServer struct {
	Name         string            `json:"name"`
	Host         string            `json:"host"`
	ID           string            `json:"id"`
	Cluster      string            `json:"cluster,omitempty"`
	Domain       string            `json:"domain,omitempty"`
	Version      string            `json:"ver"`
	Tags         []string          `json:"tags,omitempty"`
	Metadata     map[string]string `json:"metadata,omitempty"`
	FeatureFlags map[string]bool   `json:"feature_flags,omitempty"`
	JetStream    bool              `json:"jetstream"`
	Flags        uint64            `json:"flags"`
	Seq          uint64            `json:"seq"`
	Time         time.Time         `json:"time"`
}

// TraceRequest describes the traced message as the server received it:
// its trace-related headers (Nats-Trace-Dest, Nats-Trace-Only,
// Nats-Trace-Hop, traceparent…, names in the case sent) and its size.
type TraceRequest struct {
	Header  map[string][]string `json:"header,omitempty"`
	MsgSize int                 `json:"msgsize,omitempty"`
}

// TraceType is the type of a TraceEntry.
type TraceType string

// Trace entry types.
const (
	TraceIngress        TraceType = "in" // the message entered the server
	TraceSubjectMapping TraceType = "sm" // a mapping changed its subject
	TraceStreamExport   TraceType = "se" // it crossed a stream export into another account
	TraceServiceImport  TraceType = "si" // it crossed a service import into another account
	TraceJetStream      TraceType = "js" // it reached a JetStream stream
	TraceEgress         TraceType = "eg" // it left the server (to a client, route, gateway, leaf)
)

// TraceKind is the kind of connection of an ingress or egress entry.
type TraceKind int

// Connection kinds, as the server numbers them.
const (
	TraceKindClient    TraceKind = 0
	TraceKindRouter    TraceKind = 1
	TraceKindGateway   TraceKind = 2
	TraceKindSystem    TraceKind = 3
	TraceKindLeaf      TraceKind = 4
	TraceKindJetStream TraceKind = 5
	TraceKindAccount   TraceKind = 6
)

func (k TraceKind) String() string {
	switch k {
	case TraceKindClient:
		return "client"
	case TraceKindRouter:
		return "router"
	case TraceKindGateway:
		return "gateway"
	case TraceKindSystem:
		return "system"
	case TraceKindLeaf:
		return "leafnode"
	case TraceKindJetStream:
		return "jetstream"
	case TraceKindAccount:
		return "account"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// TraceEntry is one step of a message through a server. Type says which
// fields are set; the comments name the types that carry each field. Raw
// holds the entry as received, for types and fields this client does not
// model.
type TraceEntry struct {
	Type TraceType `json:"type"`
	Time time.Time `json:"ts"`

	Kind TraceKind `json:"kind"`           // in, eg (0, TraceKindClient, for the other types)
	CID  uint64    `json:"cid"`            // in, eg: the connection's id
	Name string    `json:"name,omitempty"` // in, eg: the connection's name (client name, remote server)
	// Account: in: the publisher's account; eg: the receiving account when
	// it differs from the ingress one; se, si: the other account.
	Account string `json:"acc,omitempty"`
	Subject string `json:"subj,omitempty"` // in: the subject published to
	// Error: in: why the message was refused (permissions…); eg: why it
	// was not delivered; js: why the stream did not store it.
	Error string `json:"error,omitempty"`

	To   string `json:"to,omitempty"`   // sm, se, si: the new subject
	From string `json:"from,omitempty"` // si: the subject before the import

	Stream        string `json:"stream,omitempty"`     // js: the stream's name
	StreamSubject string `json:"subject,omitempty"`    // js: the subject stored
	NoInterest    bool   `json:"nointerest,omitempty"` // js: an interest stream dropped it

	Hop          string `json:"hop,omitempty"`   // eg to a route, gateway or leaf: the hop id it carries
	Subscription string `json:"sub,omitempty"`   // eg to a client: the matching subscription's subject
	Queue        string `json:"queue,omitempty"` // eg to a client: its queue group

	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes an entry and keeps a copy in Raw.
func (e *TraceEntry) UnmarshalJSON(b []byte) error {
	type plain TraceEntry
	if err := json.Unmarshal(b, (*plain)(e)); err != nil {
		return err
	}
	e.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// Ingress returns the report's ingress entry (the first), or nil.
func (ev *TraceEvent) Ingress() *TraceEntry {
	if len(ev.Events) > 0 && ev.Events[0].Type == TraceIngress {
		return &ev.Events[0]
	}
	return nil
}

// Egresses returns the report's egress entries.
func (ev *TraceEvent) Egresses() []*TraceEntry { return ev.entries(TraceEgress) }

// JetStream returns the report's JetStream entry, or nil.
func (ev *TraceEvent) JetStream() *TraceEntry {
	if es := ev.entries(TraceJetStream); len(es) > 0 {
		return es[0]
	}
	return nil
}

// entries returns the entries of type t, in order.
func (ev *TraceEvent) entries(t TraceType) []*TraceEntry {
	var out []*TraceEntry
	for i := range ev.Events {
		if ev.Events[i].Type == t {
			out = append(out, &ev.Events[i])
		}
	}
	return out
}
