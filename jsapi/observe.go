package jsapi

import (
	"context"
	"strings"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/connx"
	"github.com/natsio/natsio/internal/jshook"
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
	if o := connx.Observer(nc); o != nil {
		jo, _ := o.(Observer)
		return jo
	}
	return nil
}

// observePublish starts the observation of a JetStream publish by o: it
// returns the header to send and the function to call with the outcome. h
// is copied: it does not escape.
func observePublish(o Observer, ctx context.Context, subject string, h *proto.Header, size int) (*proto.Header, func(*PubAck, error)) {
	return observeOwned(o, ctx, subject, h.Clone(), size)
}

// observeOwned is observePublish for a header that is the observer's to
// keep (nil for none).
func observeOwned(o Observer, ctx context.Context, subject string, h *proto.Header, size int) (*proto.Header, func(*PubAck, error)) {
	p := &conn.Pub{Kind: conn.PubPublish, Subject: strings.Clone(subject), Header: h, Size: size}
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

func init() {
	jshook.Observer = func(js *JS) any {
		if js.obs == nil {
			return nil
		}
		return js.obs
	}
	jshook.ObservePublish = func(o any, ctx context.Context, subject string, h *proto.Header, size int) (*proto.Header, func(*PubAck, error)) {
		return observeOwned(o.(Observer), ctx, subject, h, size)
	}
}
