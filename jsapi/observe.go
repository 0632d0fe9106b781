package jsapi

import (
	"context"
	"strings"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/proto"
)

// Observer watches JetStream operations, for tracing and metrics. It is
// not installed on its own: a conn.Observer installed on the connection
// (conn.Observe) that also implements Observer receives these calls from
// every JetStream layer on that connection (jsapi, pubwin, pull, ordered,
// and kv and objstore through them). The Observer is an option of
// Connect, so every JS of the connection has it.
//
// Its methods are called on the goroutine of the operation, from many
// goroutines at once; they must be safe for concurrent use and must not
// block. Without an Observer a JetStream operation pays one comparison.
type Observer interface {
	// PublishJS is called before a JetStream publish (JS.Publish and
	// PublishMsg, pubwin.Window.Publish and PublishMsg, kv puts) is sent.
	// p.Header is a copy of the message's header, publish options'
	// headers (Nats-Msg-Id...) included, that the observer may add to or
	// set (trace context); the message goes out with it. ctx is the
	// call's context. done, unless nil, is called once with the stream's
	// acknowledgement (nil on failure) and the publish's error when the
	// outcome is known: when Publish returns, or when a window's Future
	// is resolved. ack is valid only during the call.
	PublishJS(ctx context.Context, p *conn.Pub) (done func(ack *PubAck, err error))

	// ReceiveJS is called as a consumer hands m to the application:
	// yielded by Messages, returned by Fetch or Next, or about to be given
	// to a Consume handler. Do not modify m, and do not keep a borrowed
	// message's fields past the call.
	ReceiveJS(m *Msg)

	// ProcessJS is called as a Consume handler is given m, after
	// ReceiveJS; end, unless nil, is called when the handler returns.
	ProcessJS(m *Msg) (end func())

	// SettleJS is called after an acknowledgement of m was sent (or
	// failed): op is "ack", "nak", "term" or "in_progress"; err is the
	// acknowledgement's error, nil when it was queued (or, for AckSync,
	// confirmed).
	SettleJS(m *Msg, op string, err error)
}

// observerOf returns nc's Observer when it implements Observer.
func observerOf(nc *conn.Conn) Observer {
	if o := nc.Observer(); o != nil {
		jo, _ := o.(Observer)
		return jo
	}
	return nil
}

// ObservePublish starts the observation of a JetStream publish by o (not
// nil), for a publisher built on jsapi that sends its messages with
// conn.Conn.PublishUnobserved (the publish is reported here, not as a
// core publish): it calls o.PublishJS and returns the header to send (a
// copy of h, nil for none, with what o added) and the function to call
// once with the outcome (the stream's acknowledgement, nil on failure, and
// the error), never nil. It copies subject and h: neither escapes.
func ObservePublish(o Observer, ctx context.Context, subject string, h *proto.Header, size int) (*proto.Header, func(*PubAck, error)) {
	p := &conn.Pub{Kind: conn.PubPublish, Subject: strings.Clone(subject), Header: h.Clone(), Size: size}
	done := o.PublishJS(ctx, p)
	if done == nil {
		done = func(*PubAck, error) {}
	}
	return p.Header, done
}

// settled reports an acknowledgement of jm to the connection's Observer.
func (jm *Msg) settled(op string, err error) {
	if o := observerOf(jm.nc); o != nil {
		o.SettleJS(jm, op, err)
	}
}

// ackOp names an acknowledgement body for SettleJS.
func ackOp(body []byte) string {
	switch {
	case len(body) == 0:
		return "ack"
	case body[0] == '-':
		return "nak"
	case string(body) == "+WPI":
		return "in_progress"
	case len(body) >= 5 && string(body[:5]) == "+TERM":
		return "term"
	}
	return "ack"
}
