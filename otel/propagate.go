package natsotel

import (
	"context"
	"slices"
	"strconv"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/proto"
)

// headerCarrier reads and writes trace context in a message header.
type headerCarrier struct{ h *proto.Header }

func (c headerCarrier) Get(key string) string {
	if c.h == nil {
		return ""
	}
	return c.h.Get(key)
}

func (c headerCarrier) Set(key, value string) { c.h.Set(key, value) }

func (c headerCarrier) Keys() []string {
	if c.h == nil {
		return nil
	}
	var keys []string
	for k := range c.h.All() {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// Inject writes the trace context and baggage of ctx into h and returns
// h; a nil h gets a new header. Use it to give a core Publish or
// PublishMsg, which take no context, a parent for its span.
func (i *Instrumentation) Inject(ctx context.Context, h *proto.Header) *proto.Header {
	if h == nil {
		h = new(proto.Header)
	}
	i.prop.Inject(ctx, headerCarrier{h})
	return h
}

// Extract returns ctx with the trace context and baggage carried in m's
// header: the producer's span context as a remote parent. A message
// without them leaves ctx as it is.
func (i *Instrumentation) Extract(ctx context.Context, m *conn.Msg) context.Context {
	return i.extractHeader(ctx, &m.Header)
}

func (i *Instrumentation) extractHeader(ctx context.Context, h *proto.Header) context.Context {
	if h == nil || h.IsZero() {
		return ctx
	}
	return i.prop.Extract(ctx, headerCarrier{h})
}

// validSubject checks a subject to publish to.
func validSubject(s string) error {
	return proto.ValidatePublishSubject(s)
}

func uintString(n uint64) string { return strconv.FormatUint(n, 10) }
