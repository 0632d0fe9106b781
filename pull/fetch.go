package pull

import (
	"context"
	"errors"
	"github.com/natsio/natsio/internal/connx"
	"github.com/natsio/natsio/internal/jsx"
	"sync/atomic"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

// fetchMargin is how much earlier than the caller's deadline a pull expires
// at the server, so that its 408 arrives before the caller gives up.
const fetchMargin = 50 * time.Millisecond

// Fetch makes one pull of up to n messages and returns those that arrive
// before the pull ends: when n arrived, when MaxBytes is reached, when the
// server has none left for this pull (with NoWait at once), or at ctx's
// deadline (DefaultFetchWait without one). Messages that arrived are
// returned with a nil error however the wait ended, except by
// cancellation. A message on the pull's reply subject that the server did
// not deliver (ErrStrayMessage) is skipped and counted in Stats.Skipped.
//
// A Fetch that got no message fails: with ErrFetchTimeout when the wait
// ended (ctx's deadline, DefaultFetchWait, the pull expiring at the
// server), which matches ErrNoMessages, conn.ErrTimeout and
// context.DeadlineExceeded; with ErrNoMessages when a NoWait pull found
// nothing. Other failures are ErrConsumerDeleted (a "409 Consumer Deleted"
// counts once consumer info confirms it), jsapi.ErrStreamNotFound,
// ErrNoHeartbeat (Heartbeat set and two missed), a *StatusError — terminal
// (Terminal reports true) or one that ended this pull only: ErrPinMismatch
// (the pin id is dropped for the next pull), ErrLeadershipChange,
// ErrMaxWaiting, ErrMessageTooLarge when nothing arrived, ErrUnknownStatus,
// conn.ErrNoResponders — and ctx's cancellation (an error matching
// context.Canceled), returned with the messages that did arrive. A ctx
// that is already done fails at once (ErrFetchTimeout past its deadline,
// its cause when canceled), and no pull is sent. A Fetch whose pull is over
// leaves its subscription to the next Fetch of c for up to 5 s
// (fetchsub.go).
func (c *Consumer) Fetch(ctx context.Context, n int, opts ...Opt) ([]*jsapi.Msg, error) {
	if ctx == nil {
		return nil, conn.ErrNilContext
	}
	if n <= 0 {
		return nil, invalid("batch %d", n)
	}
	// A dead ctx pulls nothing: a pull sent now would leave n messages
	// delivered to nobody until their ack wait ran out.
	if err := ctx.Err(); err != nil {
		if err == context.DeadlineExceeded {
			return nil, ErrFetchTimeout
		}
		return nil, context.Cause(ctx)
	}
	s, err := resolve("fetch", c.config(), opts)
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultFetchWait)
		defer cancel()
	}
	deadline, _ := ctx.Deadline()
	expires := time.Until(deadline) - fetchMargin
	if !s.noWait && expires < time.Millisecond {
		return nil, ErrFetchTimeout // too close to the deadline for a pull
	}
	if s.noWait {
		expires = 0
	}
	if s.hb > 0 && (s.noWait || s.hb*2 > expires) {
		return nil, invalid("Heartbeat %v needs a deadline of at least twice as long", s.hb)
	}

	sub, err := c.takeFetchSub(n)
	if err != nil {
		return nil, err
	}
	over := false // the pull can send nothing more: sub may serve the next Fetch
	defer func() { c.putFetchSub(sub, over) }()
	body := appendPullRequest(nil, n, s.maxBytes, expires, s.hb, s.noWait, &s, c.pin(s.group))
	if err := connx.PublishNow(c.nc, c.next, sub.Subject, body); err != nil {
		return nil, err
	}
	c.count.pulls.Add(1)

	wctx := ctx
	var activity atomic.Uint64 // batches received, for the heartbeat watch
	if s.hb > 0 {
		var stop func()
		wctx, stop = watchHeartbeats(ctx, s.hb, &activity)
		defer stop()
	}
	var batch []*conn.Msg
	confirmed := false // consumer info said the consumer exists
	out := make([]*jsapi.Msg, 0, min(n, 1024))
	defer func() { c.count.messages.Add(uint64(len(out))) }()
	for len(out) < n {
		batch, err = connx.NextBatch(sub, wctx, batch)
		if err != nil {
			if errors.Is(context.Cause(wctx), ErrNoHeartbeat) && ctx.Err() == nil {
				c.count.missedHeartbeats.Add(1)
				return out, ErrNoHeartbeat
			}
			if ctx.Err() == context.DeadlineExceeded {
				return waitEnded(out) // the pull's time is up: what arrived is the result
			}
			return out, err
		}
		activity.Add(1)
		for i, m := range batch {
			if len(out) == n {
				break // all n arrived: what follows (a status) is moot
			}
			if st, ok := parseStatus(m); ok {
				c.count.noteStatus(st)
				serr := st.err()
				switch {
				case serr == nil: // heartbeat
					continue
				case errors.Is(serr, ErrNoMessages):
					over = i == len(batch)-1
					if len(out) == 0 {
						return out, ErrNoMessages
					}
					return out, nil
				case errors.Is(serr, ErrRequestExpired):
					over = i == len(batch)-1
					return waitEnded(out)
				case errors.Is(serr, ErrMessageTooLarge) && len(out) > 0:
					return out, nil // the next Fetch reports it
				case errors.Is(serr, conn.ErrNoResponders):
					if why := c.whyNoResponders(ctx); why != nil {
						return out, why
					}
					return out, serr
				case errors.Is(serr, ErrConsumerDeleted):
					// Anyone who learns the pull's reply subject can send
					// this status: it ends the Fetch only once consumer
					// info confirms it. Asked once per Fetch; while the
					// consumer exists, such statuses are ignored.
					if confirmed {
						continue
					}
					if why := c.whyNoResponders(ctx); why != nil {
						if errors.Is(why, ErrConsumerDeleted) {
							return out, serr
						}
						return out, why
					}
					confirmed = true
					continue
				case errors.Is(serr, ErrPinMismatch):
					c.setPin(s.group, "")
					return out, serr
				}
				return out, serr
			}
			if !delivered(m) {
				c.count.skipped.Add(1) // ErrStrayMessage: not the server's
				continue
			}
			c.notePin(s.group, m)
			out = append(out, jsx.Receive(c.obs, jsx.FromSlab(m)))
			if len(out) == n {
				// The whole batch: without MaxBytes the server ends the
				// pull silently.
				over = s.maxBytes == 0 && i == len(batch)-1
			}
		}
	}
	return out, nil
}

// waitEnded is the result of a Fetch whose wait ended: what arrived, or
// ErrFetchTimeout when nothing did.
func waitEnded(out []*jsapi.Msg) ([]*jsapi.Msg, error) {
	if len(out) == 0 {
		return out, ErrFetchTimeout
	}
	return out, nil
}

// watchHeartbeats returns a context that ends with cause ErrNoHeartbeat
// when activity stays unchanged for two heartbeat intervals. It samples
// activity eight times per interval (no timer is touched per message), so
// silence is noticed between 2 and 2¼ intervals after the last message.
// stop ends the watch.
func watchHeartbeats(ctx context.Context, hb time.Duration, activity *atomic.Uint64) (context.Context, func()) {
	wctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(max(hb/8, time.Millisecond))
		defer t.Stop()
		last, lastSeen := activity.Load(), time.Now()
		for {
			select {
			case <-t.C:
			case <-done:
				return
			case <-wctx.Done():
				return
			}
			if now := activity.Load(); now != last {
				last, lastSeen = now, time.Now()
				continue
			}
			if time.Since(lastSeen) >= 2*hb {
				cancel(ErrNoHeartbeat)
				return
			}
		}
	}()
	return wctx, func() {
		close(done)
		<-finished
		cancel(nil)
	}
}

// Next returns one message. It fails as Fetch does: with ErrFetchTimeout
// (matching ErrNoMessages, conn.ErrTimeout and context.DeadlineExceeded)
// when none arrived before ctx's deadline (DefaultFetchWait without one),
// with ErrNoMessages when a NoWait pull found none, with an error matching
// context.Canceled when ctx was canceled.
func (c *Consumer) Next(ctx context.Context, opts ...Opt) (*jsapi.Msg, error) {
	msgs, err := c.Fetch(ctx, 1, opts...)
	if len(msgs) == 1 {
		return msgs[0], nil
	}
	if err == nil {
		err = ErrNoMessages
	}
	return nil, err
}
