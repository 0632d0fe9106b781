package conn

import (
	"context"
	"errors"
	"time"
)

// until is when readUntil returns besides the link failing.
type until struct {
	// w: a request's response (or a sentinel) arrived.
	w *waiter
	// s: messages of s are queued and the parser used up what was read
	// (or, with lend unset, a read ended inside a message and fewer than
	// inlineBacklog messages wait), or s ended.
	s    *Subscription
	lend bool
	// Neither: the reader goroutine reads until the link fails, parking
	// when it steps aside (role.go).
}

// readLoop is the reader goroutine of connection generation gen: it
// holds the link's reader role from the handshake on and reads until the
// link fails, parking while others read (role.go).
func (nc *Conn) readLoop(l *link, gen uint64) {
	defer nc.wg.Done()
	defer l.parkTimer.Stop()
	if nc.readUntil(&l.rd, gen, until{}) {
		l.release()
	}
}

// readFor reads and dispatches ops on the calling goroutine, which holds
// l's reader role (inlineLink), until w has its response (or a sentinel),
// the deadline passes, or the link fails. It then releases the role,
// handing it back to the reader goroutine at once when other requests or
// flushes are waiting.
func (nc *Conn) readFor(l *link, r *reader, gen uint64, w *waiter, deadline, now time.Time) {
	nc.stats.inlineReads.Add(1)
	l.imu.Lock()
	err := l.readDeadlineLocked(deadline, now)
	l.imu.Unlock()
	if err == nil {
		r.deadline = true
		sysReads(l.base, true)
		r.self = w
		nc.readUntil(r, gen, until{w: w})
		r.self = nil
		sysReads(l.base, false)
		r.deadline = false // the socket keeps it: see readDeadlineLocked
	}
	nc.endInline(l)
}

// readForSub is readFor for a consumer of s waiting in take: it reads and
// dispatches ops until s has messages queued once the parser has used up
// what was read, s ends, ctx ends, or the link fails, then releases the
// role. When a read ends inside a message it reads on for the rest, unless
// inlineBacklog messages wait already or they are lent: the parser keeps
// the cut message for whoever reads next. With lend, messages for s are
// lent (lend.go), and a batch is what one read brought, so that the
// consumer reads into the same buffer again. ctx's deadline bounds the
// read; its cancellation and the end of s interrupt it (link.interrupt).
func (nc *Conn) readForSub(ctx context.Context, l *link, r *reader, gen uint64, s *Subscription, lend bool) {
	nc.stats.inlineBatches.Add(1)
	dl, _ := ctx.Deadline()
	l.imu.Lock()
	err := l.readDeadlineLocked(dl, time.Time{})
	if err == nil {
		l.inlineSub = s
	}
	l.imu.Unlock()
	if err == nil {
		r.deadline = true
		s.readingOn.Store(l)
		if lend {
			r.lendSub = s
		}
		// ctx's end interrupts the read: through the subscription's
		// registration if it ends from now on, here if it already has.
		s.watchCtx(ctx)
		if ctx.Err() != nil {
			l.interrupt(s)
		}
		nc.readUntil(r, gen, until{s: s, lend: lend})
		r.lendSub = nil
		s.readingOn.Store(nil)
		l.imu.Lock()
		l.inlineSub = nil
		l.imu.Unlock()
		r.deadline = false // the socket keeps it: see readDeadlineLocked
	}
	nc.endInline(l)
}

// readUntil is the read loop of every role holder: it reads and
// dispatches ops until u is met, an inline reader's deadline passes, or
// the link fails. It reports whether the caller still holds the role
// (false only for the reader goroutine, when the link was shut while it
// was parked).
func (nc *Conn) readUntil(r *reader, gen uint64, u until) (held bool) {
	l := r.l
	for {
		if u.w != nil && (len(u.w.ch) > 0 || u.w.direct != nil) {
			return true
		}
		op, err := r.p.Next()
		if err != nil {
			nc.readFailed(r, gen, &ProtocolError{Err: err})
			return true
		}
		if op != nil {
			if nc.handleOp(r, gen, op) {
				return true
			}
			continue
		}
		// The parser has used up what was read, but for part of a message
		// perhaps.
		r.flushStage()
		switch {
		case u.s != nil:
			if n, ended := u.s.backlog(); ended || n > 0 && (u.lend || !r.p.Buffered() || n >= inlineBacklog) {
				return true
			}
		case u.w == nil && r.p.Unread() == 0 && !r.p.Buffered() && l.role.Load() == roleYielding:
			// A requester just got its response, or a waiting consumer
			// was woken: let it read what comes next itself. Not in the
			// middle of a message (its rest is read first, as nobody may
			// read for it soon), and not while others wait on their
			// channels: nobody would read for them.
			if nc.othersWaiting() {
				l.roleStep(roleYielding, roleGoroutine)
				break
			}
			if !l.park() {
				return false
			}
			nc.stats.readerResumes.Add(1)
			continue
		}
		if err := r.fill(); err != nil {
			if !errors.Is(err, errInlineDeadline) {
				nc.readFailed(r, gen, err)
			}
			return true
		}
	}
}

// readFailed handles a read error of the role holder: the link is lost.
func (nc *Conn) readFailed(r *reader, gen uint64, err error) {
	r.wakeAll()
	if IsProtocolError(err) {
		nc.stats.protocolErrors.Add(1)
		nc.ev.push(Event{Kind: EventProtocolError, Err: err})
	}
	nc.connLost(gen, err)
}
