package conn

import (
	"context"
	"errors"
	"iter"
	"sync/atomic"
	"time"

	"github.com/natsio/natsio/proto"
)

// Request many (ADR-47): one request, any number of replies.
//
// Request and its kin share one wildcard inbox whose tokens are forgotten
// after the first response, so they cannot see a second reply. A
// RequestMany call instead subscribes to an inbox of its own
// ("<inbox prefix>.<nuid>"), publishes the request with that inbox as the
// reply subject, yields the replies as they arrive, and unsubscribes when
// the iteration ends, whatever ends it.

// ErrIteratorUsed is yielded by a RequestMany sequence ranged over a second
// time: the request is sent once, when the first iteration starts.
var ErrIteratorUsed = errors.New("nats: request-many iterator already used")

// RequestManyOpt configures one RequestMany call. Invalid values make the
// iteration yield an error matching ErrInvalidOption before anything is
// sent.
type RequestManyOpt struct{ f func(*manyConfig) error }

// apply applies o to c; the zero RequestManyOpt is invalid.
func (o RequestManyOpt) apply(c *manyConfig) error {
	if o.f == nil {
		return invalid("zero RequestManyOpt")
	}
	return o.f(c)
}

type manyConfig struct {
	max      int
	stall    time.Duration
	total    time.Duration
	sentinel func(*Msg) bool
}

// ManyMax ends the iteration, without error, once n replies have been
// yielded (sentinel replies are not counted). The inbox subscription is
// also set to auto-unsubscribe after n messages, so the server stops
// routing surplus replies at once. n must be at least 1.
func ManyMax(n int) RequestManyOpt {
	return RequestManyOpt{func(c *manyConfig) error {
		if n < 1 {
			return invalid("request-many max %d", n)
		}
		c.max = n
		return nil
	}}
}

// ManyStall ends the iteration, without error, when no reply arrives
// within d of the previous one. The wait for the first reply is bounded by
// the total timeout only. Time the caller spends in the loop body does not
// count against the stall timer, and the stall never extends the iteration
// past the total timeout. A d at or above the total timeout has no effect;
// d must be positive.
func ManyStall(d time.Duration) RequestManyOpt {
	return RequestManyOpt{func(c *manyConfig) error {
		if d <= 0 {
			return invalid("request-many stall %v", d)
		}
		c.stall = d
		return nil
	}}
}

// ManyTimeout sets the total timeout: how long, from the start of the
// iteration, replies are gathered. Without it the total timeout is ctx's
// deadline, or the connection's request timeout (RequestTimeout) when ctx
// has none. With it, ctx's deadline still applies when earlier. d must be
// positive.
func ManyTimeout(d time.Duration) RequestManyOpt {
	return RequestManyOpt{func(c *manyConfig) error {
		if d <= 0 {
			return invalid("request-many timeout %v", d)
		}
		c.total = d
		return nil
	}}
}

// ManySentinel ends the iteration, without error, at the first reply for
// which isEnd returns true. That reply is not yielded. isEnd runs on the
// iterating goroutine, before the reply would be yielded.
func ManySentinel(isEnd func(*Msg) bool) RequestManyOpt {
	return RequestManyOpt{func(c *manyConfig) error {
		if isEnd == nil {
			return invalid("nil request-many sentinel")
		}
		c.sentinel = isEnd
		return nil
	}}
}

// ManyEmptySentinel is ADR-47's standard sentinel: a reply with an empty
// payload (headers or not) ends the iteration and is not yielded. A
// no-responders status, which has an empty payload too, still ends it with
// ErrNoResponders.
func ManyEmptySentinel() RequestManyOpt {
	return ManySentinel(func(m *Msg) bool { return len(m.Data) == 0 })
}

// RequestMany publishes a request with headers h (nil for none) and data
// to subject, and returns a single-use iterator over the replies: the
// scatter-gather of ADR-47, for subjects that any number of subscribers
// answer. The request is sent when the iteration starts (h and data are
// read then) and not again: ranging over the sequence a second time yields
// ErrIteratorUsed.
//
// The iteration ends without error when
//   - ManyMax replies have been yielded,
//   - ManyStall passes without a reply after the first one,
//   - a ManySentinel reply arrives (it is not yielded),
//   - the total timeout passes after at least one reply was yielded,
//   - the connection is drained (Drain ends the inbox in order), or
//   - the loop body breaks.
//
// The total timeout is ManyTimeout, ctx's deadline, or the connection's
// request timeout, the earliest that applies (see ManyTimeout). As ADR-47
// has it, the gathering is complete when its time is up: reaching it is
// not a failure once something was yielded. With nothing yielded it is
// ErrTimeout (also matching context.DeadlineExceeded), as for Request.
//
// It yields one error and ends when
//   - nobody listens on subject: ErrNoResponders, at once (the server's
//     503 status is the first reply);
//   - ctx is cancelled: the context's cause (context.Canceled by default);
//     a ctx already done when the iteration starts sends nothing;
//   - the connection is lost (ErrDisconnected: replies sent meanwhile are
//     lost) or closed (ErrClosed);
//   - the arguments are invalid: ErrBadSubject, ErrBadHeader,
//     ErrInvalidOption, ErrNilContext, nothing sent; or publishing fails
//     (ErrMaxPayload, ErrReconnectBuffer, ErrDraining…).
//
// Replies queued when the connection ends the iteration are yielded first;
// at its deadline, its total timeout, its stall or the cancellation of ctx
// it ends at once, queued replies or not, however fast they arrive. Every
// yielded
// message belongs to the caller. The inbox subscription (whose pending
// limits are the connection's PendingLimits) is removed, and the server
// told, before the iteration returns; it leaves no goroutine behind.
func (nc *Conn) RequestMany(ctx context.Context, subject string, h *proto.Header, data []byte, opts ...RequestManyOpt) iter.Seq2[*Msg, error] {
	var used atomic.Bool
	return func(yield func(*Msg, error) bool) {
		if used.Swap(true) {
			yield(nil, ErrIteratorUsed)
			return
		}
		var c manyConfig
		for _, o := range opts {
			if err := o.apply(&c); err != nil {
				yield(nil, err)
				return
			}
		}
		if err := checkPublish(subject, h); err != nil {
			yield(nil, err)
			return
		}
		nc.gather(ctx, &c, func(inbox string) error {
			return nc.publish(subject, inbox, h, data, pubUrgent)
		}, yield)
	}
}

// checkPublish validates a subject and headers before anything is sent.
func checkPublish(subject string, h *proto.Header) error {
	if err := proto.ValidatePublishSubject(subject); err != nil {
		return err
	}
	return h.Validate()
}

// Causes of the end of one wait in gather.
var (
	errManyStalled = errors.New("nats: request-many stalled")
	errManyTotal   = errors.New("nats: request-many total timeout")
)

// gather subscribes to a fresh inbox, calls send with it, and yields what
// arrives there until c says the gathering is over (see RequestMany).
func (nc *Conn) gather(ctx context.Context, c *manyConfig, send func(inbox string) error, yield func(*Msg, error) bool) {
	if ctx == nil {
		yield(nil, ErrNilContext)
		return
	}
	if ctx.Err() != nil {
		yield(nil, timeoutErr(ctx))
		return
	}
	start := time.Now()
	deadline, hasDeadline := ctx.Deadline()
	switch {
	case c.total > 0:
		if d := start.Add(c.total); !hasDeadline || d.Before(deadline) {
			deadline = d
		}
	case !hasDeadline:
		deadline = start.Add(nc.opts.requestTimeout)
	}
	stall := c.stall
	if stall >= deadline.Sub(start) {
		stall = 0
	}

	s, err := nc.Subscribe(nc.NewInbox())
	if err != nil {
		yield(nil, err)
		return
	}
	// A lost connection loses the replies sent meanwhile: end as Request
	// does. Queued replies are still yielded first.
	removeHook := nc.OnDisconnect(func(reason error) {
		if reason == ErrClosed {
			s.close(ErrClosed)
		} else {
			s.close(ErrDisconnected)
		}
	})
	defer func() {
		removeHook()
		nc.endGather(s)
	}()
	if c.max > 0 && c.max <= MaxAutoUnsubscribe { // a larger max is counted here only
		if err := s.AutoUnsubscribe(c.max); err != nil {
			yield(nil, err)
			return
		}
	}
	if err := send(s.Subject); err != nil {
		yield(nil, err)
		return
	}

	n := 0
	var batch []*Msg
	for {
		// The total time and ctx end the gathering, replies queued or
		// not; the stall is about arrivals: queued replies are taken
		// first.
		var end bool
		cause := errManyTotal
		if err = ctxEnded(ctx); err == nil && !time.Now().Before(deadline) {
			err = cause
		}
		if err != nil {
			end, batch = true, batch[:0]
		} else if batch, end, err = s.grab(batch); len(batch) == 0 && !end {
			wait := deadline
			if n > 0 && stall > 0 {
				if t := time.Now().Add(stall); t.Before(wait) {
					wait, cause = t, errManyStalled
				}
			}
			wctx, cancel := context.WithDeadlineCause(ctx, wait, cause)
			batch, end, err = s.take(wctx, batch)
			cancel()
		}
		for i, m := range batch {
			batch[i] = nil
			if len(m.Data) == 0 && m.Status() == 503 {
				yield(nil, ErrNoResponders)
				return
			}
			if c.sentinel != nil && c.sentinel(m) {
				return
			}
			n++
			if !yield(m, nil) || n == c.max {
				return
			}
			// Its time may be up in the middle of a long batch.
			if ctx.Err() != nil {
				end, err = true, timeoutErr(ctx)
				break
			}
			if !time.Now().Before(deadline) {
				end, err = true, errManyTotal
				break
			}
		}
		if !end {
			continue
		}
		switch {
		case err == nil: // the subscription ended in order
			return
		case ctx.Err() == context.DeadlineExceeded, errors.Is(err, errManyTotal):
			if n == 0 {
				yield(nil, &timeoutError{context.DeadlineExceeded})
			}
			return
		case ctx.Err() != nil:
			yield(nil, context.Cause(ctx))
			return
		case errors.Is(err, errManyStalled):
			return
		default: // ErrClosed, ErrDisconnected
			yield(nil, err)
			return
		}
	}
}

// endGather removes a gathering's inbox subscription, here and at the
// server. It may have ended already (auto-unsubscribe reached, connection
// lost or closed); an UNSUB for a sid the server has dropped is harmless.
func (nc *Conn) endGather(s *Subscription) {
	nc.mu.Lock()
	nc.removeSub(s)
	if nc.state == stateConnected {
		nc.wbuf = proto.AppendUnsub(nc.wbuf, s.sid, 0)
		nc.kickLocked()
	}
	nc.mu.Unlock()
	s.close(nil)
}
