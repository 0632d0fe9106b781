package pull

import (
	"context"
	"sync"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

// Consumer is a handle on a pull consumer of a stream. It is safe for
// concurrent use; several Fetch calls and Messages iterators may run on one
// handle at once.
type Consumer struct {
	js     *jsapi.JS
	nc     *conn.Conn
	stream string
	name   string
	next   string // the pull subject

	mu   sync.Mutex
	info *jsapi.ConsumerInfo
	pins map[string]string // pin id per priority group
	// idleSub is the subscription a finished Fetch left for the next one,
	// unsubscribed by idleTimer (fetchsub.go).
	idleSub   *jsapi.Batches
	idleTimer *time.Timer

	count counters

	obs jsapi.Observer // the connection's, if any (JS.Observer)
}

// Create creates a consumer on stream (an error if a different one with
// the same name exists) and returns its handle. A configuration with a
// DeliverSubject describes a push consumer, which this package cannot
// read: it is refused with ErrPushConsumer before any request.
func Create(ctx context.Context, js *jsapi.JS, stream string, cfg jsapi.ConsumerConfig) (*Consumer, error) {
	if cfg.DeliverSubject != "" {
		return nil, ErrPushConsumer
	}
	info, err := js.CreateConsumer(ctx, stream, cfg)
	if err != nil {
		return nil, err
	}
	return newConsumer(js, info), nil
}

// CreateOrUpdate creates the consumer or updates it to cfg (a push
// configuration is refused as by Create).
func CreateOrUpdate(ctx context.Context, js *jsapi.JS, stream string, cfg jsapi.ConsumerConfig) (*Consumer, error) {
	if cfg.DeliverSubject != "" {
		return nil, ErrPushConsumer
	}
	info, err := js.CreateOrUpdateConsumer(ctx, stream, cfg)
	if err != nil {
		return nil, err
	}
	return newConsumer(js, info), nil
}

// Bind returns a handle on an existing consumer (jsapi.ErrConsumerNotFound
// if there is none).
func Bind(ctx context.Context, js *jsapi.JS, stream, name string) (*Consumer, error) {
	info, err := js.Consumer(ctx, stream, name)
	if err != nil {
		return nil, err
	}
	if info.Config.DeliverSubject != "" {
		return nil, ErrPushConsumer
	}
	return newConsumer(js, info), nil
}

// FromInfo returns a handle on the consumer info describes, without a
// request: for the info a create call or a listing already returned
// (jsapi.JS.CreateConsumer, jsapi.Stream.CreateConsumer, jsapi.JS.Consumers).
// It checks the info names a stream and a consumer (jsapi.ErrInvalidName)
// and describes a pull consumer (ErrPushConsumer); whether the consumer
// still exists shows on the first read. The handle keeps a copy of info
// as its CachedInfo.
func FromInfo(js *jsapi.JS, info *jsapi.ConsumerInfo) (*Consumer, error) {
	if js == nil || info == nil {
		return nil, invalid("FromInfo needs a JS and a ConsumerInfo")
	}
	if err := jsapi.ValidateName(info.Stream); err != nil {
		return nil, err
	}
	if err := jsapi.ValidateName(info.Name); err != nil {
		return nil, err
	}
	if info.Config.DeliverSubject != "" {
		return nil, ErrPushConsumer
	}
	cp := *info
	return newConsumer(js, &cp), nil
}

func newConsumer(js *jsapi.JS, info *jsapi.ConsumerInfo) *Consumer {
	return &Consumer{
		js:     js,
		nc:     js.Conn(),
		stream: info.Stream,
		name:   info.Name,
		next:   js.Prefix() + "CONSUMER.MSG.NEXT." + info.Stream + "." + info.Name,
		info:   info,
		obs:    js.Observer(),
	}
}

// Name returns the consumer's name.
func (c *Consumer) Name() string { return c.name }

// Stream returns the stream's name.
func (c *Consumer) Stream() string { return c.stream }

// CachedInfo returns the consumer information last fetched.
func (c *Consumer) CachedInfo() *jsapi.ConsumerInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info
}

func (c *Consumer) config() *jsapi.ConsumerConfig {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &c.info.Config
}

// Info fetches the consumer's current information.
func (c *Consumer) Info(ctx context.Context) (*jsapi.ConsumerInfo, error) {
	info, err := c.js.Consumer(ctx, c.stream, c.name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.info = info
	c.mu.Unlock()
	return info, nil
}

// Delete deletes the consumer at the server. Reads under way on any handle
// of it end with ErrConsumerDeleted, and later ones fail with it. Delete
// fails with jsapi.ErrConsumerNotFound when the consumer is already gone
// and jsapi.ErrStreamNotFound when its stream is.
func (c *Consumer) Delete(ctx context.Context) error {
	return c.js.DeleteConsumer(ctx, c.stream, c.name)
}

// Unpin releases the pin of group, so the server pins the next client that
// pulls (pinned_client policy).
func (c *Consumer) Unpin(ctx context.Context, group string) error {
	return c.js.UnpinConsumer(ctx, c.stream, c.name, group)
}

// receive reports m to o (nil: none) as handed to the application, and
// returns m.
func receive(o jsapi.Observer, m *jsapi.Msg) *jsapi.Msg {
	if o != nil {
		o.ReceiveJS(m)
	}
	return m
}
