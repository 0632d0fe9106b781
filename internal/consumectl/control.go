// Package consumectl is the state behind pull.ConsumeContext, the one
// handle of a running Consume of both package pull and package ordered.
//
// pull.ConsumeContext is a type defined on Control (not an alias), so it
// has pull's documented methods, and either package turns the *Control it
// makes with New into a *pull.ConsumeContext by a plain conversion: no
// package reaches into another's unexported names.
package consumectl

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/natsio/natsio/jsapi"
)

// ErrStopped is the cause that ends a Consume's context on Stop.
var ErrStopped = errors.New("consume stopped")

// Control is a running Consume's handle: how to end it, and why it ended.
// Its methods may be called from any goroutine, more than once.
type Control struct {
	cancel   context.CancelCauseFunc
	drain    func()
	withdraw func() // ends the pulls at the server (Stop); nil: none to end
	stopped  atomic.Bool
	closed   chan struct{}
	err      error // set before closed is closed
}

// New returns the handle of a Consume whose run ends by cancel (with cause
// ErrStopped on Stop); drain asks it to end in order, and withdraw, if not
// nil, ends its pulls at the server. The run asks Stopped whether Stop was
// called, and calls Finish, once, with why it ended.
func New(cancel context.CancelCauseFunc, drain, withdraw func()) *Control {
	return &Control{cancel: cancel, drain: drain, withdraw: withdraw, closed: make(chan struct{})}
}

// Stopped reports whether Stop was called.
func (c *Control) Stopped() bool { return c.stopped.Load() }

// Finish records why the Consume ended (nil after Stop, Drain or the end of
// its context) and closes Closed. The run calls it once, last.
func (c *Control) Finish(err error) {
	c.err = err
	close(c.closed)
}

// Stop cancels the run and withdraws its pulls, if any, before it returns.
func (c *Control) Stop() {
	c.stopped.Store(true)
	c.cancel(ErrStopped)
	if c.withdraw != nil {
		c.withdraw()
	}
}

// Drain asks the run to end in order.
func (c *Control) Drain() { c.drain() }

// Closed is closed once Finish was called.
func (c *Control) Closed() <-chan struct{} { return c.closed }

// Err is what Finish recorded, once Closed is closed (nil before).
func (c *Control) Err() error {
	select {
	case <-c.closed:
		return c.err
	default:
		return nil
	}
}

// Process gives m to the Consume handler f, between o's ProcessJS and its
// end when o (the connection's jsapi.Observer) is not nil.
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
