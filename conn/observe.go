package conn

import (
	"context"
	"strings"
	"time"

	"github.com/natsio/natsio/proto"
)

// Observer watches the messages a connection publishes and hands to the
// application, for tracing and metrics; the module
// github.com/natsio/natsio/otel is one. Install it with Observe.
//
// It sees the calls of this package's API: Publish, PublishMsg, Request,
// RequestMsg, Respond and RespondMsg, and the messages Subscription.Messages,
// NextMsg and SubscribeFunc handlers receive. The JetStream layers report
// their own operations (a stream publish and its acknowledgement, a
// consumer's messages and their acknowledgements) to the same value when it
// also implements jsapi.Observer, and send their protocol traffic (API
// requests, pull requests, acknowledgements) past Observer.
//
// Its methods are called on the goroutine of the call they observe, from
// many goroutines at once, and inside that call: they must be safe for
// concurrent use and must not block. A connection without an Observer pays
// one comparison per message; with one, each publish also allocates its
// Pub and copies of its subject and header.
type Observer interface {
	// Publish is called before a message is checked and queued. p is
	// the observer's to keep; it may add fields to p.Header, or set one
	// when p.Header is nil (trace context), and the message goes out with
	// p.Header. ctx is the request's context, or context.Background()
	// for a call without one. done, unless nil, is called once with the
	// outcome: for a request, its response (nil on failure) and error
	// when RequestMsg returns; for a publish or response, nil and the
	// error of queuing it (nil when queued).
	Publish(ctx context.Context, p *Pub) (done func(resp *Msg, err error))

	// Receive is called as Messages yields m or NextMsg returns it. m
	// belongs to the application from then on: do not modify it, and do
	// not keep a borrowed (lent) message's fields past the call.
	Receive(m *Msg)

	// Process is called as a SubscribeFunc handler is given m; end,
	// unless nil, is called when the handler returns. The same rules
	// apply to m as for Receive.
	Process(m *Msg) (end func())
}

// PubKind says which call published a message.
type PubKind uint8

const (
	// PubPublish: Publish or PublishMsg (and a JetStream publish, for
	// jsapi.Observer).
	PubPublish PubKind = iota
	// PubRequest: Request or RequestMsg.
	PubRequest
	// PubRespond: Msg.Respond or Msg.RespondMsg.
	PubRespond
)

// Pub describes a message about to be published, for an Observer.
type Pub struct {
	Kind    PubKind
	Subject string
	// Reply is the reply subject given to PublishMsg ("" for none, and
	// for a request, whose reply subject is chosen later).
	Reply string
	// Header is a copy of the caller's header, nil when it has none. The
	// observer may add to it or replace it; it is what is sent.
	Header *proto.Header
	// Size is the length of the message's data (without the header).
	Size int
	// Request is the message being answered (PubRespond), else nil.
	Request *Msg
}

// Observe installs o as the connection's Observer (nil: none, the
// default).
func Observe(o Observer) Option {
	return Option{func(opts *options) error { opts.observer = o; return nil }}
}

// observed starts the observation of a publish by o: it returns the header
// to send and the function to call with the outcome. The caller's subject,
// reply and header are copied first: the caller may reuse their memory
// once the publish returns, and they do not escape the publish call.
func observed(o Observer, ctx context.Context, kind PubKind, subject, reply string, h *proto.Header, size int, req *Msg) (*proto.Header, func(*Msg, error)) {
	p := &Pub{Kind: kind, Subject: strings.Clone(subject), Reply: strings.Clone(reply), Header: h.Clone(), Size: size, Request: req}
	done := o.Publish(ctx, p)
	return p.Header, done
}

// publishObserved is publish for a connection with an Observer.
func (nc *Conn) publishObserved(kind PubKind, subject, reply string, h *proto.Header, data []byte, mode pubMode, req *Msg) error {
	h, done := observed(nc.opts.observer, context.Background(), kind, subject, reply, h, len(data), req)
	err := nc.publishAt(subject, reply, h, data, mode, time.Time{})
	if done != nil {
		done(nil, err)
	}
	return err
}

// requestObserved is RequestMsg for a connection with an Observer.
func (nc *Conn) requestObserved(ctx context.Context, subject string, h *proto.Header, data []byte) (*Msg, error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	h, done := observed(nc.opts.observer, ctx, PubRequest, subject, "", h, len(data), nil)
	m, err := nc.requestMsg(ctx, subject, h, data)
	if done != nil {
		done(m, err)
	}
	return m, err
}

// observeReceive reports m to the connection's Observer, if any, as
// yielded by Messages or returned by NextMsg.
func (s *Subscription) observeReceive(m *Msg) {
	if o := s.nc.opts.observer; o != nil {
		o.Receive(m)
	}
}

// handle gives m to a SubscribeFunc handler f, reporting it to the
// connection's Observer, if any.
func (s *Subscription) handle(f func(*Msg), m *Msg) {
	if o := s.nc.opts.observer; o != nil {
		process(o, f, m)
		return
	}
	f(m)
}

// process runs f(m) between o's Process and its end.
func process(o Observer, f func(*Msg), m *Msg) {
	end := o.Process(m)
	if end != nil {
		defer end()
	}
	f(m)
}
