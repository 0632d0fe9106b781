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

// FromInfo returns a handle on the consumer info describes, without a
// request. It is the one way to get a handle: jsapi creates, updates and
// looks up consumers (jsapi.JS.CreateOrUpdateConsumer, jsapi.JS.CreateConsumer,
// jsapi.JS.Consumer, jsapi.JS.Consumers), and FromInfo reads the info any of
// them returned. It checks the info names a stream and a consumer (jsapi.ErrInvalidName)
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

// receive reports m to o (nil: none) as handed to the application, and
// returns m.
func receive(o jsapi.Observer, m *jsapi.Msg) *jsapi.Msg {
	if o != nil {
		o.ReceiveJS(m)
	}
	return m
}
