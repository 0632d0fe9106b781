package pull

import (
	"context"
	"errors"
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
// server has none left for this pull (with NoWait at once; a no-wait pull
// the server keeps open ends 0.9 s after its last message), or at ctx's
// deadline (DefaultFetchWait without one). What arrived is returned with a
// nil error however the wait ended, except by cancellation or an error —
// an empty batch too: a wait that ended with nothing is a normal end, as
// in nats.go (Next, with nothing to return, fails instead). A message on
// the pull's reply subject that the server did not deliver
// (ErrStrayMessage) is skipped and counted in Stats.Skipped.
//
// No status alone makes Fetch fail for good: one that claims a terminal
// condition (409 Consumer Deleted, 409 Consumer is push based, 400, 412,
// 409 Exceeded MaxRequest…, 503) counts only once consumer info confirms
// the condition — asked once per Fetch; otherwise it is ignored and
// counted (Stats.Unconfirmed) and the Fetch waits on. Failures are then
// ErrConsumerDeleted, jsapi.ErrStreamNotFound, ErrPushConsumer, ErrBadPull
// (each confirmed), ErrNoHeartbeat (Heartbeat set and two missed), a
// *StatusError that ended this pull only — ErrPinMismatch (the pin id is
// dropped for the next pull), ErrLeadershipChange, ErrMaxWaiting,
// ErrMessageTooLarge when nothing arrived, ErrUnknownStatus — or
// conn.ErrNoResponders when JetStream answers neither the pull nor
// consumer info, and ctx's cancellation (an error matching
// context.Canceled), returned with the messages that did arrive. A Fetch
// that ends while its pull may still be live at the server (an error, a
// status for this pull only) withdraws it there first (an UNSUB and a
// round trip), so it takes no later message. A ctx that is already done
// fails at once (ErrFetchTimeout past its deadline, its cause when
// canceled), and no pull is sent. A Fetch whose pull is over leaves its
// subscription to the next Fetch of c for up to 5 s (fetchsub.go).
func (c *Consumer) Fetch(ctx context.Context, n int, opts ...FetchOpt) ([]*jsapi.Msg, error) {
	var empty error
	return c.fetch(ctx, n, opts, &empty)
}

// fetch is Fetch. When the pull ended with no error, *empty says why it
// ended with what arrived: ErrFetchTimeout (the wait reached its deadline) or
// ErrNoMessages (the server had none for the pull), for Next.
func (c *Consumer) fetch(ctx context.Context, n int, opts []FetchOpt, empty *error) (out []*jsapi.Msg, err error) {
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
	s, err := resolveFetch(c.config(), opts)
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
	defer func() { c.putFetchSub(ctx, sub, over) }()
	body := appendPullRequest(nil, n, s.maxBytes, expires, s.hb, s.noWait, &s, c.pin(s.group))
	sent := time.Now()
	if err := c.nc.PublishUnobserved(c.next, sub.Subscription().Subject, nil, body, conn.WriteNow); err != nil {
		return nil, err
	}
	c.count.pulls.Add(1)

	wctx := ctx
	var activity atomic.Uint64 // batches received, for the heartbeat watch
	switch {
	case s.hb > 0:
		var stop func()
		wctx, stop = watchSilence(ctx, 2*s.hb, ErrNoHeartbeat, &activity)
		defer stop()
	case s.noWait:
		// The server may keep a no-wait pull open (messages pending that
		// MaxAckPending holds back): give up after noWaitIdle without a
		// message, as nats.go does.
		var stop func()
		wctx, stop = watchSilence(ctx, noWaitIdle, errNoWaitIdle, &activity)
		defer stop()
	}
	var batch []*jsapi.Msg
	confirmed := false // consumer info did not confirm a status claiming the end
	out = make([]*jsapi.Msg, 0, min(n, 1024))
	defer func() { c.count.messages.Add(uint64(len(out))) }()
	for len(out) < n {
		// The context is looked at first: while messages keep arriving,
		// some are always queued.
		if err = wctx.Err(); err == nil {
			batch, err = sub.Next(wctx)
		}
		if err != nil {
			switch cause := context.Cause(wctx); {
			case ctx.Err() == nil && errors.Is(cause, ErrNoHeartbeat):
				c.count.missedHeartbeats.Add(1)
				return out, ErrNoHeartbeat
			case ctx.Err() == nil && errors.Is(cause, errNoWaitIdle):
				*empty = ErrNoMessages
				return out, nil // the no-wait pull went quiet: what arrived is the result
			case ctx.Err() == context.DeadlineExceeded:
				*empty = ErrFetchTimeout
				return out, nil // the pull's time is up: what arrived is the result
			}
			return out, err
		}
		activity.Add(1)
		for i, jm := range batch {
			m := &jm.Msg
			if len(out) == n {
				break // all n arrived: what follows (a status) is moot
			}
			if st, ok := parseStatus(m); ok {
				c.count.noteStatus(st)
				serr := st.err()
				switch {
				case serr == nil: // heartbeat
					continue
				case !s.noWait && (st.code == 404 || st.code == 408 && time.Since(sent) < expires):
					// The server sends a 404 only to a no-wait pull, and a
					// 408 to this one only once it expired: another
					// client's, ignored.
					c.count.unconfirmed.Add(1)
					continue
				case errors.Is(serr, ErrNoMessages):
					over = i == len(batch)-1
					*empty = ErrNoMessages
					return out, nil // the server had no more for the pull
				case errors.Is(serr, ErrRequestExpired):
					// The pull expired at the server, ahead of ctx's
					// deadline (fetchMargin), or the server ended it.
					over = i == len(batch)-1
					*empty = ErrFetchTimeout
					return out, nil
				case errors.Is(serr, ErrMessageTooLarge) && len(out) > 0:
					return out, nil // the next Fetch reports it
				case errors.Is(serr, conn.ErrNoResponders) || claimsEnd(errors.Unwrap(serr)):
					// Anyone who learns the pull's reply subject can send
					// such a status: it ends the Fetch only once consumer
					// info confirms the condition. Asked once per Fetch;
					// while the consumer exists and accepts the pull, such
					// statuses are ignored and counted.
					if confirmed {
						c.count.unconfirmed.Add(1)
						continue
					}
					end, answered := c.confirm(ctx, serr, &s, n, expires)
					if end != nil {
						return out, end
					}
					if !answered && errors.Is(serr, conn.ErrNoResponders) {
						return out, serr // JetStream did not answer either
					}
					confirmed = true
					c.count.unconfirmed.Add(1)
					continue
				case errors.Is(serr, ErrPinMismatch):
					c.setPin(s.group, "")
				case errors.Is(serr, ErrUnknownStatus):
					c.count.unknown.Add(1)
				}
				// A status that ends this pull only (leadership change, too
				// many waiting pulls, message too large, pin mismatch,
				// unknown): its error, not a terminal one. The pull is
				// withdrawn at the server when the Fetch returns
				// (putFetchSub), in case the status was not the server's.
				return out, serr
			}
			if !delivered(m) {
				c.count.skipped.Add(1) // ErrStrayMessage: not the server's
				continue
			}
			c.notePin(s.group, m)
			out = append(out, receive(c.obs, jm))
			if len(out) == n {
				// The whole batch: without MaxBytes the server ends the
				// pull silently.
				over = s.maxBytes == 0 && i == len(batch)-1
			}
		}
	}
	return out, nil
}

// noWaitIdle is how long a NoWait Fetch waits for the next message when
// the server keeps its pull open; errNoWaitIdle is the cause that ends it.
const noWaitIdle = 900 * time.Millisecond

var errNoWaitIdle = errors.New("pull: no-wait pull idle")

// watchSilence returns a context that ends with cause when activity stays
// unchanged for d. It samples activity sixteen times per d (no timer is
// touched per message), so silence is noticed between d and 1 1/16 d
// after the last message. stop ends the watch.
func watchSilence(ctx context.Context, d time.Duration, cause error, activity *atomic.Uint64) (context.Context, func()) {
	wctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(max(d/16, time.Millisecond))
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
			if time.Since(lastSeen) >= d {
				cancel(cause)
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

// Next returns one message. It fails as Fetch does, and also when none
// arrived: with ErrFetchTimeout (matching ErrNoMessages, conn.ErrTimeout
// and context.DeadlineExceeded) at ctx's deadline (DefaultFetchWait
// without one), with ErrNoMessages when a NoWait pull found none, with an
// error matching context.Canceled when ctx was canceled.
func (c *Consumer) Next(ctx context.Context, opts ...FetchOpt) (*jsapi.Msg, error) {
	var empty error
	msgs, err := c.fetch(ctx, 1, opts, &empty)
	if len(msgs) == 1 {
		return msgs[0], nil
	}
	if err == nil {
		err = empty
	}
	if err == nil {
		err = ErrNoMessages
	}
	return nil, err
}
