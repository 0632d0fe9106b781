package jsapi

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/pause"
	"github.com/natsio/natsio/proto"
)

var headerPool = sync.Pool{New: func() any { return new(proto.Header) }}

// Publish stores data on subject in the stream that captures it and returns
// the stream's acknowledgement. opts add a message ID, expectations, a TTL
// or other JetStream headers (user headers go with PublishMsg); they are
// validated before anything is sent (conn.ErrInvalidOption). It fails with
// the stream's *APIError (for example
// ErrWrongLastSequence), with ErrNoStreamResponse when no stream answered
// after the retries (see RetryOnNoResponders), or with the context's error
// (also matching conn.ErrTimeout) — in which case the message may or may
// not be stored: retry with the same MsgID to be safe.
func (js *JS) Publish(ctx context.Context, subject string, data []byte, opts ...PubOpt) (PubAck, error) {
	var ack PubAck
	err := js.publishTo(ctx, &ack, subject, nil, data, opts...)
	return ack, err
}

// PublishMsg is Publish with user headers h (not modified; may be nil). h
// may be a received message's header: without opts it is sent as the block
// it was received as; with opts its fields are copied and the options'
// headers added after them. An invalid h fails with conn.ErrInvalidOption
// when opts are given, with proto.ErrBadHeader otherwise.
func (js *JS) PublishMsg(ctx context.Context, subject string, h *proto.Header, data []byte, opts ...PubOpt) (PubAck, error) {
	var ack PubAck
	err := js.publishTo(ctx, &ack, subject, h, data, opts...)
	return ack, err
}

// publishTo is PublishMsg writing the acknowledgement into ack.
func (js *JS) publishTo(ctx context.Context, ack *PubAck, subject string, h *proto.Header, data []byte, opts ...PubOpt) error {
	if ctx == nil {
		return conn.ErrNilContext
	}
	if err := proto.ValidatePublishSubject(subject); err != nil {
		return err
	}
	hdr := h
	var ps pubSettings
	if len(opts) > 0 {
		ph := headerPool.Get().(*proto.Header)
		defer func() { ph.Reset(); headerPool.Put(ph) }()
		if h != nil {
			for k, v := range h.All() {
				ph.Add(k, v)
			}
		}
		var err error
		if ps, err = applyPubOpts(ph, opts); err != nil {
			return err
		}
		if ps.feature != 0 {
			if err := js.check(ctx, ps.feature); err != nil {
				return err
			}
		}
		hdr = ph
	}
	if hdr != nil && hdr.Len() == 0 {
		hdr = nil
	}
	if js.obs != nil {
		var done func(*PubAck, error)
		hdr, done = ObservePublish(js.obs, ctx, subject, hdr, len(data))
		err := js.publishLoop(ctx, ack, subject, hdr, data)
		a := *ack // a copy: ack itself would escape through done
		done(&a, err)
		return err
	}
	return js.publishLoop(ctx, ack, subject, hdr, data)
}

// publishLoop sends a publish and retries it as RetryOnNoResponders says.
func (js *JS) publishLoop(ctx context.Context, ack *PubAck, subject string, hdr *proto.Header, data []byte) error {
	for attempt := 0; ; attempt++ {
		// Without a deadline on ctx each attempt is bounded by the JS
		// timeout (no context is derived: that would allocate).
		m, err := js.send(ctx, subject, hdr, data)
		retry := false
		if err == nil {
			if len(m.Data) == 0 && m.Status() == 503 {
				retry, err = true, ErrNoStreamResponse
			} else if err = parsePubAck(m.Data, ack); err != nil && errors.Is(err, ErrTooManyRequests) {
				retry = true
			}
			reuseAckReply(js.nc, m, err)
		} else if errors.Is(err, conn.ErrNoResponders) {
			retry, err = true, fmt.Errorf("%w: %w", ErrNoStreamResponse, err)
		}
		if !retry || attempt >= js.retries {
			return err
		}
		if werr := pause.For(ctx, js.retryWait<<attempt); werr != nil {
			return errors.Join(err, werr)
		}
	}
}

// reuseAckReply lets the connection reuse the reply subject of a publish
// answered by a PubAck or a JetStream error: the stream sends one reply per
// message, so none can follow. Anything else (a status, a body that is not
// JetStream's) leaves the subject retired.
//
// parseErr is what parsePubAck returned for m. Layers that publish through
// the connection themselves (kv) call it too.
func reuseAckReply(nc *conn.Conn, m *conn.Msg, parseErr error) {
	if parseErr == nil {
		nc.ReuseReply(m)
	} else if _, ok := errors.AsType[*APIError](parseErr); ok {
		nc.ReuseReply(m)
	}
}
