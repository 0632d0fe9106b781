package pull

import (
	"context"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/consumectl"
	"github.com/natsio/natsio/jsapi"
)

// Consume runs handler on each of the consumer's messages, one at a time
// and in order, on a goroutine of its own, until Stop, Drain, ctx's end or
// a terminal error. It is the loop of Messages with a handler in place of
// the loop body: the same options (Borrowed messages are valid until the
// handler returns), the same healing, reported to OnError, the same
// statuses confirmed before they end it, and the same terminal errors,
// which end it and are then reported by Err. Stop withdraws its pulls at
// the server before it returns.
//
// Invalid options (conn.ErrInvalidOption), a nil handler, a ctx already done or
// a closed connection fail Consume at once, with no goroutine started and
// nothing sent. Otherwise it has sent its first pull when it returns.
//
// The handler must acknowledge the messages of an acknowledging consumer
// itself; it must not block for long, as nothing else is handled
// meanwhile. A handler that panics brings the program down.
func (c *Consumer) Consume(ctx context.Context, handler func(*jsapi.Msg), opts ...Opt) (*ConsumeContext, error) {
	if ctx == nil {
		return nil, conn.ErrNilContext
	}
	if handler == nil {
		return nil, invalid("nil handler")
	}
	s, err := resolve("messages", c.config(), opts)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	rctx, cancel := context.WithCancelCause(ctx)
	e, err := c.startEngine(rctx, s)
	if err != nil {
		cancel(nil)
		return nil, err
	}
	ctl := consumectl.New(cancel, e.drain, e.withdraw)
	cc, stopped, finish := (*ConsumeContext)(ctl), ctl.Stopped, ctl.Finish
	go func() {
		var final error
		e.run(rctx, func(m *jsapi.Msg, err error) bool {
			if err != nil {
				final = err
				return false
			}
			if stopped() {
				return false
			}
			consumectl.Process(c.obs, handler, m)
			return true
		})
		// Ended by a terminal error or a drain, the pulls are withdrawn
		// as a Messages loop's are; Stop withdrew them itself.
		e.stop(rctx.Err() == nil)
		cancel(nil)
		if stopped() || ctx.Err() != nil {
			final = nil // stopped, or ctx ended: not a failure
		}
		finish(final)
	}()
	return cc, nil
}
