package micro

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/proto"
)

// Handler handles the requests of an endpoint.
type Handler interface {
	Handle(Request)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(Request)

// Handle calls f(r).
func (f HandlerFunc) Handle(r Request) { f(r) }

// EndpointOpt configures one endpoint (AddEndpoint). An invalid option
// makes AddEndpoint fail with a *ConfigError before anything is sent.
type EndpointOpt struct{ f func(*endpointOpts) error }

// apply applies o to c; the zero EndpointOpt is invalid.
func (o EndpointOpt) apply(c *endpointOpts) error {
	if o.f == nil {
		return fmt.Errorf("%w: zero EndpointOpt", conn.ErrInvalidOption)
	}
	return o.f(c)
}

type endpointOpts struct {
	subject  string
	queue    queueChoice
	metadata map[string]string
}

// queueChoice is a queue group setting: inherited (zero value), a group,
// or none (set with an empty name).
type queueChoice struct {
	set  bool
	name string
}

func (q queueChoice) over(inherited string) string {
	if q.set {
		return q.name
	}
	return inherited
}

// EndpointSubject sets the endpoint's subject (wildcards allowed), which
// is prefixed by its group's. Default: the endpoint's name.
func EndpointSubject(subject string) EndpointOpt {
	return EndpointOpt{func(o *endpointOpts) error {
		if subject == "" {
			return configErr(ErrInvalidSubject, "endpoint subject", subject)
		}
		o.subject = subject
		return nil
	}}
}

// EndpointQueueGroup puts the endpoint in queue group q, overriding its
// group's and service's.
func EndpointQueueGroup(q string) EndpointOpt {
	return EndpointOpt{func(o *endpointOpts) error {
		if proto.ValidateQueue(q) != nil {
			return configErr(ErrInvalidQueueGroup, "endpoint queue group", q)
		}
		o.queue = queueChoice{set: true, name: q}
		return nil
	}}
}

// EndpointNoQueueGroup makes the endpoint a plain subscription: every
// instance of the service receives every request.
func EndpointNoQueueGroup() EndpointOpt {
	return EndpointOpt{func(o *endpointOpts) error {
		o.queue = queueChoice{set: true}
		return nil
	}}
}

// EndpointMetadata sets the metadata INFO reports for the endpoint. The
// map is copied.
func EndpointMetadata(md map[string]string) EndpointOpt {
	return EndpointOpt{func(o *endpointOpts) error {
		o.metadata = md
		return nil
	}}
}

// endpointSpec is a validated endpoint, ready to subscribe.
type endpointSpec struct {
	name, subject, queue string
	metadata             map[string]string
	handler              Handler
}

// newEndpointSpec validates an endpoint named name under group prefix
// (may be empty) whose inherited queue group is queue ("" for none).
func newEndpointSpec(prefix, queue, name string, h Handler, opts []EndpointOpt) (endpointSpec, error) {
	if !validName(name) {
		return endpointSpec{}, configErr(ErrInvalidName, "endpoint name", name)
	}
	if h == nil {
		return endpointSpec{}, configErr(ErrInvalidConfig, "endpoint handler", "<nil>")
	}
	o := endpointOpts{subject: name}
	for _, opt := range opts {
		if err := opt.apply(&o); err != nil {
			return endpointSpec{}, err
		}
	}
	subject := joinSubject(prefix, o.subject)
	if proto.ValidateSubscribeSubject(subject) != nil {
		return endpointSpec{}, configErr(ErrInvalidSubject, "endpoint subject", subject)
	}
	q := o.queue.over(queue)
	if q != "" && proto.ValidateQueue(q) != nil {
		return endpointSpec{}, configErr(ErrInvalidQueueGroup, "queue group", q)
	}
	return endpointSpec{name: name, subject: subject, queue: q, metadata: cloneMeta(o.metadata), handler: h}, nil
}

func joinSubject(prefix, s string) string {
	switch {
	case prefix == "":
		return s
	case s == "":
		return prefix
	}
	return prefix + "." + s
}

// AddEndpoint adds an endpoint named name (A-Z, a-z, 0-9, '-', '_') whose
// requests h handles, on the subject given by EndpointSubject or else on
// name, in the service's queue group unless an option says otherwise. The
// endpoint takes requests as soon as AddEndpoint returns, and INFO and
// STATS report it. Several endpoints may share a name.
//
// It fails with a *ConfigError before anything is sent, with ErrStopped
// after Stop, or with the connection's error.
func (s *Service) AddEndpoint(name string, h Handler, opts ...EndpointOpt) error {
	return s.addEndpoint("", s.queue, name, h, opts)
}

func (s *Service) addEndpoint(prefix, queue, name string, h Handler, opts []EndpointOpt) error {
	sp, err := newEndpointSpec(prefix, queue, name, h, opts)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return ErrStopped
	}
	return s.addEndpointLocked(sp)
}

func (s *Service) addEndpointLocked(sp endpointSpec) error {
	e := &Endpoint{
		svc:      s,
		name:     sp.name,
		subject:  sp.subject,
		queue:    sp.queue,
		metadata: sp.metadata,
		handler:  sp.handler,
	}
	var err error
	if e.queue == "" {
		e.sub, err = s.nc.SubscribeFunc(e.subject, e.serve)
	} else {
		e.sub, err = s.nc.QueueSubscribeFunc(e.subject, e.queue, e.serve)
	}
	if err != nil {
		return fmt.Errorf("micro: endpoint %q: %w", e.name, err)
	}
	s.endpoints = append(s.endpoints, e)
	return s.updateInfoLocked()
}

// GroupOpt configures a group (AddGroup).
type GroupOpt struct{ f func(*Group) }

// apply applies o to c; the zero GroupOpt is invalid, reported by the
// group's AddEndpoint.
func (o GroupOpt) apply(c *Group) {
	if o.f == nil {
		c.err = fmt.Errorf("%w: zero GroupOpt", conn.ErrInvalidOption)
		return
	}
	o.f(c)
}

// GroupQueueGroup sets the queue group of the group's endpoints (and of
// its subgroups'), overriding the service's. An invalid name makes the
// group's AddEndpoint fail with ErrInvalidQueueGroup.
func GroupQueueGroup(q string) GroupOpt {
	return GroupOpt{func(g *Group) {
		if proto.ValidateQueue(q) != nil {
			g.err = configErr(ErrInvalidQueueGroup, "group queue group", q)
			return
		}
		g.queue = q
	}}
}

// GroupNoQueueGroup makes the group's endpoints plain subscriptions.
func GroupNoQueueGroup() GroupOpt {
	return GroupOpt{func(g *Group) { g.queue = "" }}
}

// Group is a subject prefix for endpoints: an endpoint added to group
// "orders" on subject "create" listens on "orders.create". A group may
// carry its own queue group. Groups cost nothing until an endpoint is
// added; they stay usable as long as their service runs.
type Group struct {
	svc    *Service
	prefix string
	queue  string
	err    error // an invalid GroupOpt, reported by AddEndpoint
}

// AddGroup returns a group whose endpoints' subjects start with name (a
// subject prefix such as "orders" or "v1.orders"; "" adds no prefix). A
// prefix that makes invalid subjects (it holds '>', an empty token…) is
// reported by AddEndpoint with ErrInvalidSubject.
func (s *Service) AddGroup(name string, opts ...GroupOpt) *Group {
	return newGroup(s, name, s.queue, opts)
}

// AddGroup returns a subgroup whose prefix is g's followed by name.
func (g *Group) AddGroup(name string, opts ...GroupOpt) *Group {
	sub := newGroup(g.svc, joinSubject(g.prefix, name), g.queue, opts)
	if sub.err == nil {
		sub.err = g.err
	}
	return sub
}

func newGroup(s *Service, prefix, queue string, opts []GroupOpt) *Group {
	g := &Group{svc: s, prefix: prefix, queue: queue}
	for _, opt := range opts {
		opt.apply(g)
	}
	return g
}

// Prefix returns the group's subject prefix.
func (g *Group) Prefix() string { return g.prefix }

// AddEndpoint is Service.AddEndpoint with the endpoint's subject
// prefixed by the group's and the group's queue group inherited.
func (g *Group) AddEndpoint(name string, h Handler, opts ...EndpointOpt) error {
	if g.err != nil {
		return g.err
	}
	return g.svc.addEndpoint(g.prefix, g.queue, name, h, opts)
}

// Endpoint is one endpoint of a service.
type Endpoint struct {
	svc      *Service
	name     string
	subject  string
	queue    string
	metadata map[string]string
	handler  Handler
	sub      *conn.Subscription // set under svc.mu
	counters counters
	dropped  uint64 // the subscription's drops already reported; serve's goroutine only
}

// Name returns the endpoint's name.
func (e *Endpoint) Name() string { return e.name }

// Subject returns the subject the endpoint listens on, group prefix
// included.
func (e *Endpoint) Subject() string { return e.subject }

// QueueGroup returns the endpoint's queue group, "" when it has none.
func (e *Endpoint) QueueGroup() string { return e.queue }

// Metadata returns a copy of the endpoint's metadata.
func (e *Endpoint) Metadata() map[string]string { return cloneMeta(e.metadata) }

// Service returns the endpoint's service.
func (e *Endpoint) Service() *Service { return e.svc }

// Info returns the endpoint's entry of the INFO response.
func (e *Endpoint) Info() EndpointInfo {
	return EndpointInfo{Name: e.name, Subject: e.subject, QueueGroup: e.queue, Metadata: e.Metadata()}
}

// serve runs on the endpoint subscription's goroutine, one request at a
// time.
func (e *Endpoint) serve(m *conn.Msg) {
	e.svc.inflight.Add(1)
	defer e.svc.inflight.Add(-1)
	if d := m.Sub().Dropped(); d > e.dropped {
		e.svc.reportErr(fmt.Errorf("micro: endpoint %q: %w: %d requests dropped", e.name, conn.ErrSlowConsumer, d-e.dropped))
		e.dropped = d
	}
	e.counters.request()
	start := time.Now()
	e.handler.Handle(Request{msg: m, ep: e})
	e.counters.handled(time.Since(start))
}

// Request is one request to an endpoint, handed to its Handler. It is a
// small value: copy it freely, keep it, and respond later or from another
// goroutine if that suits; the message it wraps belongs to the handler
// (the client never reuses it). Respond, RespondJSON and Error may be
// called more than once (each sends a reply) or not at all.
type Request struct {
	msg *conn.Msg
	ep  *Endpoint
}

// RespondOpt configures one response.
type RespondOpt struct{ f func(*respondOpts) }

// apply applies o to c; the zero RespondOpt is invalid.
func (o RespondOpt) apply(c *respondOpts) error {
	if o.f == nil {
		return fmt.Errorf("%w: zero RespondOpt", conn.ErrInvalidOption)
	}
	o.f(c)
	return nil
}

type respondOpts struct{ header *proto.Header }

// RespondHeader sends h with the response. h is read during the call and
// not modified (Error adds its headers to a copy).
func RespondHeader(h *proto.Header) RespondOpt {
	return RespondOpt{func(o *respondOpts) { o.header = h }}
}

// Data returns the request's payload.
func (r Request) Data() []byte {
	if r.msg == nil {
		return nil
	}
	return r.msg.Data
}

// Headers returns the request's header, read in place (zero without
// headers): its strings are views of the request message, with its
// lifetime. Clone it to keep it beyond that.
func (r Request) Headers() *proto.Header {
	if r.msg == nil {
		return &proto.Header{}
	}
	return &r.msg.Header
}

// Subject returns the subject the request was published to (with a
// wildcard endpoint, the concrete subject).
func (r Request) Subject() string {
	if r.msg == nil {
		return ""
	}
	return r.msg.Subject
}

// Reply returns the request's reply subject, "" when the requester expects
// no reply.
func (r Request) Reply() string {
	if r.msg == nil {
		return ""
	}
	return r.msg.Reply
}

// Msg returns the underlying message.
func (r Request) Msg() *conn.Msg { return r.msg }

// Endpoint returns the endpoint that received the request.
func (r Request) Endpoint() *Endpoint { return r.ep }

// Respond sends data to the requester. A response carrying the
// service-error headers (through RespondHeader) counts as an error of the
// endpoint, as does a response that cannot be sent: conn.ErrNoReply for
// a request without a reply subject, conn.ErrBadHeader,
// conn.ErrMaxPayload, conn.ErrClosed… The response is queued, not
// awaited: nil means the client accepted it for sending.
func (r Request) Respond(data []byte, opts ...RespondOpt) error {
	var o respondOpts
	for _, opt := range opts {
		if err := opt.apply(&o); err != nil {
			return err
		}
	}
	return r.respond(o.header, data)
}

// RespondJSON sends v encoded as JSON; an encoding error is returned (and
// counted) with nothing sent.
func (r Request) RespondJSON(v any, opts ...RespondOpt) error {
	if r.ep == nil {
		return errZeroRequest
	}
	data, err := json.Marshal(v)
	if err != nil {
		err = fmt.Errorf("micro: respond: %w", err)
		r.ep.counters.error(err.Error())
		return err
	}
	return r.Respond(data, opts...)
}

// Error sends a service error: data (may be nil) with the headers
// Nats-Service-Error-Code: code and Nats-Service-Error: description, added
// to a copy of any RespondHeader header. description must not be empty,
// else Error returns ErrInvalidServiceError and sends nothing. Control
// bytes in description and code (CR, LF, NUL, the other C0 bytes but tab,
// and DEL), which a header value cannot carry or a terminal showing the
// error would act on, are sent as spaces, and spaces around code are
// dropped: an error made from untrusted input still reaches the
// requester. code must then parse as an integer (ADR-32: "always safe to
// parse as a number"); when it does not, the error is sent with code 500
// and Error returns ErrInvalidServiceError. Each call counts as an error
// of the endpoint, with last_error "<code>:<description>" (as sent).
// Requesters read the error with ResponseError.
func (r Request) Error(code, description string, data []byte, opts ...RespondOpt) error {
	if r.ep == nil {
		return errZeroRequest
	}
	if description == "" {
		r.ep.counters.error(code + ":" + description)
		return fmt.Errorf("%w (code %q, description %q)", ErrInvalidServiceError, code, description)
	}
	sent := strings.TrimSpace(sanitizeDescription(code))
	var codeErr error
	if !validErrorCode(sent) {
		codeErr = fmt.Errorf("%w: code %q sent as 500", ErrInvalidServiceError, code)
		sent = "500"
	}
	var o respondOpts
	for _, opt := range opts {
		if err := opt.apply(&o); err != nil {
			return err
		}
	}
	h := o.header.Clone()
	if h == nil {
		h = &proto.Header{}
	}
	h.Set(ErrorCodeHeader, sent)
	h.Set(ErrorHeader, sanitizeDescription(description))
	if err := r.respond(h, data); err != nil {
		return err
	}
	return codeErr
}

var errZeroRequest = fmt.Errorf("%w: zero Request", ErrInvalidConfig)

func (r Request) respond(h *proto.Header, data []byte) error {
	if r.ep == nil || r.msg == nil {
		return errZeroRequest
	}
	code, isErrCode := h.Lookup(ErrorCodeHeader)
	desc, isErrDesc := h.Lookup(ErrorHeader)
	counted := isErrCode || isErrDesc
	if counted {
		r.ep.counters.error(code + ":" + desc)
	}
	var err error
	if h == nil {
		err = r.msg.Respond(data)
	} else {
		err = r.msg.RespondMsg(h, data)
	}
	if err != nil && !counted {
		r.ep.counters.error(err.Error())
	}
	return err
}
