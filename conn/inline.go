package conn

import (
	"context"
	"errors"
	"net"
	"time"
)

// Deadlines and interrupts of inline reads (role.go: who reads).

// errInlineDeadline ends an inline read at its reader's deadline.
var errInlineDeadline = errors.New("nats: inline read deadline")

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// readDeadlineLocked gives the socket a read deadline for an inline read
// that must end by dl (zero: none). A deadline already set is kept when it
// comes no later than dl and leaves at least half the time until dl: the
// read may then end early, and its caller waits as if it had not read
// inline. So a loop of requests with the default timeout sets the
// deadline once every few seconds rather than twice per request, sparing
// the runtime's timer work. Holders leave the deadline on the socket
// (l.rdl); the reader goroutine clears it when it takes the role back
// (resume). now is the caller's reading of the clock,
// or zero to read it here. l.imu is held.
func (l *link) readDeadlineLocked(dl, now time.Time) error {
	cur := l.rdl
	if dl.Equal(cur) {
		return nil
	}
	if !dl.IsZero() && !cur.IsZero() && !cur.After(dl) {
		if now.IsZero() {
			now = time.Now()
		}
		if cur.Sub(now) >= dl.Sub(now)/2 {
			return nil
		}
	}
	if err := l.c.SetReadDeadline(dl); err != nil {
		return err
	}
	l.rdl = dl
	return nil
}

// watchCtx makes the end of ctx interrupt whatever inline read s's
// consumer is making then (interruptRead). The registration is kept while
// the consumer passes the same ctx (one per Messages loop, not one per
// read: a context.AfterFunc costs several allocations) and dropped when
// the subscription ends or the consumer passes another.
func (s *Subscription) watchCtx(ctx context.Context) {
	done := ctx.Done()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.watchDone == done {
		return
	}
	if s.watchStop != nil {
		s.watchStop()
		s.watchStop, s.watchDone = nil, nil
	}
	if done == nil {
		return // a ctx that never ends: nothing to watch
	}
	s.watchDone = done
	s.watchStop = context.AfterFunc(ctx, s.interruptRead)
}

// interruptRead interrupts the inline read s's consumer is making, if any.
func (s *Subscription) interruptRead() {
	if l := s.readingOn.Load(); l != nil {
		l.interrupt(s)
	}
}

// interrupt ends an inline read made for s, if one is under way, by
// moving the read deadline to the past: the holder's read returns at once
// with errInlineDeadline.
func (l *link) interrupt(s *Subscription) {
	l.imu.Lock()
	if l.inlineSub == s {
		l.rdl = time.Unix(1, 0)
		_ = l.c.SetReadDeadline(l.rdl)
	}
	l.imu.Unlock()
}
