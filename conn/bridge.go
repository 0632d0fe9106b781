package conn

import (
	"time"

	"github.com/natsio/natsio/internal/connhook"
)

// The machinery natsio's own layers use through internal/connx.
func init() {
	connhook.PublishNow = (*Conn).publishNow
	connhook.PublishLazy = (*Conn).publishLazy
	connhook.RequestTimeout = func(nc *Conn) time.Duration { return nc.opts.requestTimeout }
	connhook.ReuseReply = (*Conn).reuseReply
	connhook.SubscribeBatches = (*Conn).subscribeBatches
	connhook.SubscribeInline = (*Conn).subscribeInline
	connhook.NextBatch = (*Subscription).nextBatch
	connhook.StdSocketIO = stdSocketIO
	connhook.LazyDelay = lazyDelay
	connhook.ServerLevel = func(nc *Conn) int32 { return nc.jsLevel.Load() }
	connhook.DecodeTrace = decodeTrace
}
