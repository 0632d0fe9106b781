package jsapi

import (
	"context"

	"github.com/natsio/natsio/proto"
)

// The low-level API: what a publisher or consumer built on jsapi needs
// beyond the calls an application makes (packages pull, pubwin, kv and
// extra use it). Batches is in batches.go.

// ParsePubAck decodes the reply to a JetStream publish into ack, for a
// publisher that sends with conn.Conn.PublishMsg and reads the replies
// itself. An error reply returns its *APIError (ack is then unchanged); a
// reply without a stream, or with sequence 0 outside a batch commit, is
// ErrBadResponse. Common replies are decoded without reflection; ack's
// strings are the only allocations, and the stream name is shared between
// successive acknowledgements of one stream.
func ParsePubAck(data []byte, ack *PubAck) error { return parsePubAck(data, ack) }

// Observer returns the Observer of js's connection: its conn.Observer when
// that also implements Observer, nil otherwise. A layer built on jsapi
// reports its own JetStream operations to it.
func (js *JS) Observer() Observer { return js.obs }

// ApplyPubOpts validates opts as Publish does, checks that the server
// answering js has the features they use (a *FeatureError otherwise), and
// adds their headers (Nats-Msg-Id, Nats-Expected-*...) to h, for a
// publisher that sends with conn.Conn.PublishMsg. Retry options are
// ignored. For a JS with a Domain or APIPrefix the feature check may ask
// the server ($JS.API.INFO, once per JS), bounded by ctx.
func (js *JS) ApplyPubOpts(ctx context.Context, h *proto.Header, opts ...PubOpt) error {
	return applyPubOptHeaders(ctx, js, h, opts)
}
