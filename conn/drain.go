package conn

import (
	"context"
	"errors"
	"fmt"
)

// Drain ends the connection gracefully: every subscription is drained
// (UNSUB, then the messages already in flight are delivered), new
// subscriptions and publishes are refused with ErrDraining, buffered
// publishes are flushed, and the connection is closed. ctx bounds the whole
// (without a deadline, the drain timeout applies); when it ends first, the
// connection is closed anyway and ctx's error is returned.
func (nc *Conn) Drain(ctx context.Context) error {
	if ctx == nil {
		return ErrNilContext
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, nc.opts.drainTimeout)
		defer cancel()
	}
	nc.mu.Lock()
	if nc.state == stateClosed {
		nc.mu.Unlock()
		return ErrClosed
	}
	if nc.draining {
		nc.mu.Unlock()
		return ErrDraining
	}
	nc.mu.Unlock()

	var errs []error
	mux := nc.muxSub()
	subs := nc.sortedSubs()
	for _, s := range subs {
		if s == mux {
			continue
		}
		if err := nc.unsubscribeDrain(ctx, s); err != nil && !errors.Is(err, ErrBadSubscription) {
			errs = append(errs, err)
		}
	}
	// Wait for handlers to finish what they were given.
	for _, s := range subs {
		if s.handlerDone == nil {
			continue
		}
		select {
		case <-s.handlerDone:
		case <-ctx.Done():
			errs = append(errs, timeoutErr(ctx))
		}
	}
	nc.mu.Lock()
	nc.draining = true
	nc.mu.Unlock()
	if err := nc.Flush(ctx); err != nil && !errors.Is(err, ErrDisconnected) {
		errs = append(errs, err)
	}
	nc.closeWith(nil)
	nc.mu.Lock()
	lost := nc.lostOnClose
	nc.mu.Unlock()
	if lost > 0 {
		errs = append(errs, fmt.Errorf("%w: %d bytes of buffered publishes not sent", ErrDisconnected, lost))
	}
	return errors.Join(errs...)
}

func (nc *Conn) muxSub() *Subscription {
	nc.resp.mu.Lock()
	defer nc.resp.mu.Unlock()
	return nc.resp.sub
}
