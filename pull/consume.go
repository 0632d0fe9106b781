package pull

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/jsx"
	"github.com/natsio/natsio/jsapi"
)

// errStopped is the cause that ends a Consume on Stop.
var errStopped = errors.New("pull: consume stopped")

// Consume runs handler on each of the consumer's messages, one at a time
// and in order, on a goroutine of its own, until Stop, Drain, ctx's end or
// a terminal error. It is the loop of Messages with a handler in place of
// the loop body: the same options (Borrowed messages are valid until the
// handler returns), the same healing, reported to OnError, and the same
// terminal errors, which end it and are then reported by Err.
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
	cc := &ConsumeContext{cancel: cancel, drain: e.drain, closed: make(chan struct{})}
	go func() {
		defer close(cc.closed)
		var final error
		e.run(rctx, func(m *jsapi.Msg, err error) bool {
			if err != nil {
				final = err
				return false
			}
			if cc.stopped.Load() {
				return false
			}
			jsx.Process(c.obs, handler, m)
			return true
		})
		e.stop()
		cancel(nil)
		if cc.stopped.Load() || ctx.Err() != nil {
			final = nil // stopped, or ctx ended: not a failure
		}
		cc.err = final
	}()
	return cc, nil
}

// ConsumeContext controls a Consume. Its methods may be called from any
// goroutine, the handler's included, and more than once.
type ConsumeContext struct {
	cancel  context.CancelCauseFunc
	drain   func()
	stopped atomic.Bool
	closed  chan struct{}
	err     error // set before closed is closed
}

// Stop ends the Consume at once: the handler is not called again once the
// call under way, if any, has returned. Messages already requested and not
// yet handled are left to the server, which redelivers them after AckWait.
// Stop does not wait: Closed tells when everything has ended. After Stop,
// Err reports nil.
func (cc *ConsumeContext) Stop() {
	cc.stopped.Store(true)
	cc.cancel(errStopped)
}

// Drain ends the Consume in order: no more pulls are sent, the handler is
// given every message received until the server has confirmed the end of
// the subscription (see DrainOn), and then the Consume ends. Messages the
// server had not sent by then are redelivered after AckWait. Drain does not
// wait: Closed tells when the handler has returned for the last time.
// After Drain, Err reports nil, unless a terminal error ended the Consume
// before the drain was complete. A Stop after Drain ends it at once.
func (cc *ConsumeContext) Drain() { cc.drain() }

// Closed returns a channel that is closed once the handler has returned
// for the last time and every goroutine of the Consume has ended.
func (cc *ConsumeContext) Closed() <-chan struct{} { return cc.closed }

// Err reports why the Consume ended, once Closed is closed (nil before):
// nil after Stop, Drain or the end of its context, otherwise the terminal
// error — ErrConsumerDeleted (also what the server tells waiting pulls
// when the stream is deleted), jsapi.ErrStreamNotFound, a terminal
// *StatusError, ErrMessageTooLarge, conn.ErrClosed.
func (cc *ConsumeContext) Err() error {
	select {
	case <-cc.closed:
		return cc.err
	default:
		return nil
	}
}
