// Package jsx is the machinery of package jsapi that natsio's own layers
// (pull, pubwin, kv, extra) and its tests use, and that is not part of
// jsapi's public API: message memory carved from slabs, wrapping a
// delivered message as a JetStream message, reply-subject reuse after a
// publish acknowledgement, and publish options applied and
// acknowledgements parsed by publishers built on jsapi.
//
// Each function here is jsapi's own unexported function, reached through
// internal/jshook; its doc comment in jsapi states its contract.
package jsx

import (
	"context"
	"sync"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/jshook"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

var (
	// NewSlab returns the message allocator and the lent-batch shell
	// supplier of a slab of jsapi.Msgs for consumer subscriptions on nc
	// (connx.SubscribeBatches); hint sizes the first
	// array. With lazy, acknowledgements go out with the connection's
	// next write.
	NewSlab = jshook.NewSlab.(func(nc *conn.Conn, hint int, lazy bool) (alloc func() *conn.Msg, shell func(reuse *conn.Msg) *conn.Msg))

	// FromSlab returns the jsapi.Msg whose embedded conn.Msg is m, which
	// must come from a NewSlab allocator.
	FromSlab = jshook.FromSlab.(func(m *conn.Msg) *jsapi.Msg)

	// NewMsg wraps a message delivered on nc for a consumer (a copy of m's
	// fields in a new jsapi.Msg).
	NewMsg = jshook.NewMsg.(func(nc *conn.Conn, m *conn.Msg) *jsapi.Msg)

	// ReuseAckReply lets nc reuse the reply subject of a publish answered
	// by m with a PubAck or a JetStream error; parseErr is ParsePubAck's
	// result for m.
	ReuseAckReply = jshook.ReuseAckReply.(func(nc *conn.Conn, m *conn.Msg, parseErr error))

	applyPubOpts = jshook.ApplyPubOpts.(func(ctx context.Context, js *jsapi.JS, h *proto.Header, opts []jsapi.PubOpt) error)

	// ParsePubAck decodes a publish reply into ack: an error reply returns
	// its *jsapi.APIError. ack escapes (the call is indirect): pass one
	// that lives on the heap already.
	ParsePubAck = jshook.ParsePubAck.(func(data []byte, ack *jsapi.PubAck) error)
)

// optBufs hold copies of publish options for ApplyPubOpts.
var optBufs = sync.Pool{New: func() any { return new([]jsapi.PubOpt) }}

// ApplyPubOpts validates opts, checks that the server answering js has
// the features they use (a *jsapi.FeatureError otherwise), and adds their
// headers to h. Retry options
// are ignored. opts does not escape: the options are copied into a pooled
// slice first, so that a caller's variadic options stay on its stack.
func ApplyPubOpts(ctx context.Context, js *jsapi.JS, h *proto.Header, opts []jsapi.PubOpt) error {
	if len(opts) == 0 {
		return applyPubOpts(ctx, js, h, nil)
	}
	b := optBufs.Get().(*[]jsapi.PubOpt)
	*b = append((*b)[:0], opts...)
	err := applyPubOpts(ctx, js, h, *b)
	clear(*b)
	optBufs.Put(b)
	return err
}

// The jsapi.Observer of a JS (observe.go in jsapi).
var (
	observerOf     = jshook.Observer.(func(js *jsapi.JS) any)
	observePublish = jshook.ObservePublish.(func(o any, ctx context.Context, subject string, h *proto.Header, size int) (*proto.Header, func(*jsapi.PubAck, error)))
)

// Observer returns the jsapi.Observer of js's connection, nil for none.
func Observer(js *jsapi.JS) jsapi.Observer {
	o, _ := observerOf(js).(jsapi.Observer)
	return o
}

// ObservePublish starts the observation of a JetStream publish by o (not
// nil): it returns the header to send (a copy of h with what o added) and
// the function to call once with the outcome. h does not escape.
func ObservePublish(o jsapi.Observer, ctx context.Context, subject string, h *proto.Header, size int) (*proto.Header, func(*jsapi.PubAck, error)) {
	return observePublish(o, ctx, subject, h.Clone(), size)
}

// Receive reports m to o (nil: none) as handed to the application, and
// returns m.
func Receive(o jsapi.Observer, m *jsapi.Msg) *jsapi.Msg {
	if o != nil {
		o.ReceiveJS(m)
	}
	return m
}

// Process gives m to the Consume handler f, between o's ProcessJS and its
// end when o is not nil.
func Process(o jsapi.Observer, f func(*jsapi.Msg), m *jsapi.Msg) {
	if o == nil {
		f(m)
		return
	}
	if end := o.ProcessJS(m); end != nil {
		defer end()
	}
	f(m)
}
