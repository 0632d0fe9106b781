package conn

import (
	"errors"
	"net"
	"time"
)

// Inline reads.
//
// A request answered by the reader goroutine costs a goroutine hand-off:
// the reader wakes the requester, and on a machine with an idle core the
// runtime wakes a second thread for it. On request/reply paths that
// hand-off, not the client's own code, is most of the client's CPU and a
// good part of the round trip. So the connection's socket is read by
// whoever holds the link's reader role:
//
//   - The reader goroutine holds it, except right after it handed a
//     response to a requester: then, with nothing else buffered, it
//     releases the role and parks (link.park).
//   - A requester that finds the role free takes it after writing its
//     request and reads the socket itself until its own response arrives
//     (Conn.readFor), dispatching everything else it reads exactly as the
//     reader goroutine would. In a loop of requests each one reads its own
//     response and no goroutine is woken.
//   - The parked reader goroutine looks again parkDelay later. If an
//     inline read ended less than parkDelay ago, a loop of requests is
//     under way: it stays parked and waits twice as long, up to parkMax,
//     so that a long loop wakes it rarely. Otherwise it takes the role
//     back. It also takes it back at once when a requester leaves other
//     waiters behind (handback), and exits when the link is shut.
//
// The role is an atomic flag: whoever holds it alone touches the link's
// parser, buffers and reader-side fields. It is released only after the
// holder has woken the consumers it queued messages for. Inline reads are
// used on TCP and TLS links; WebSocket links keep the reader goroutine.

// parkDelay is how long the reader goroutine first leaves the socket to
// requesters after a response; parkMax bounds the doubled waits during a
// loop of requests. parkMax is thus the longest a subscription's message
// can wait for a reader after a loop of requests ends (messages that arrive
// during the loop are read by the requesters). A short timer kept armed
// has its own cost: on an idle core the runtime wakes up for it each time.
const (
	parkDelay = time.Millisecond
	parkMax   = 8 * time.Millisecond
)

// errInlineDeadline ends an inline read at the requester's deadline.
var errInlineDeadline = errors.New("nats: inline read deadline")

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// tryAcquire takes the reader role if it is free.
func (l *link) tryAcquire() bool { return l.role.CompareAndSwap(false, true) }

// release wakes the consumers the holder queued messages for, publishes its
// counters and frees the reader role.
func (l *link) release() {
	l.wakeAll()
	l.flushStats()
	l.replied = false
	l.role.Store(false)
}

// park releases the role and waits until the reader goroutine should read
// again, then takes the role back. It reports false when the link was shut
// (the goroutine must exit).
func (l *link) park() bool {
	l.release()
	// A hand-back asked for while this goroutine was still reading is
	// stale: whoever asked has been served.
	select {
	case <-l.handback:
	default:
	}
	delay := parkDelay
	for {
		l.parkTimer.Reset(delay)
		select {
		case <-l.parkTimer.C:
			if time.Since(time.Unix(0, l.lastInline.Load())) < parkDelay {
				delay = min(2*delay, parkMax)
				continue
			}
		case <-l.handback:
		case <-l.lost:
			return false
		}
		if l.tryAcquire() {
			// A shut link is not read again.
			select {
			case <-l.lost:
				l.role.Store(false)
				return false
			default:
			}
			return true
		}
	}
}

// readFor reads and dispatches ops on the calling goroutine, which holds
// l's reader role, until w has its response (or a sentinel), the deadline
// passes, or the link fails. It then releases the role, handing it back to
// the reader goroutine at once when other requests or flushes are waiting.
func (nc *Conn) readFor(l *link, gen uint64, w *waiter, deadline time.Time) {
	nc.stats.inlineReads.Add(1)
	defer func() { l.lastInline.Store(time.Now().UnixNano()) }()
	if err := l.c.SetReadDeadline(deadline); err == nil {
		l.deadline = true
		for len(w.ch) == 0 {
			op, err := l.next()
			if err != nil {
				if !errors.Is(err, errInlineDeadline) {
					l.deadline = false
					nc.readFailed(l, gen, err)
				}
				break
			}
			if nc.handleOp(l, gen, op) {
				break
			}
		}
		if l.deadline {
			l.deadline = false
			_ = l.c.SetReadDeadline(time.Time{})
		}
	}
	l.release()
	if nc.othersWaiting() {
		select {
		case l.handback <- struct{}{}:
		default:
		}
	}
}

// othersWaiting reports whether a request or a flush awaits an answer that
// nobody may be reading for.
func (nc *Conn) othersWaiting() bool {
	r := &nc.resp
	r.mu.Lock()
	n := len(r.waiters)
	r.mu.Unlock()
	if n > 0 {
		return true
	}
	nc.mu.Lock()
	defer nc.mu.Unlock()
	return len(nc.pongs) > 0
}

// inlineLink returns the current link when a requester may read its
// response inline: connected over TCP or TLS, with the reader role free
// (then taken: the caller must call readFor).
func (nc *Conn) inlineLink() (*link, uint64, bool) {
	nc.mu.Lock()
	l, gen := nc.link, nc.gen
	ok := nc.state == stateConnected && l != nil && l.inline
	nc.mu.Unlock()
	if !ok || !l.tryAcquire() {
		return nil, 0, false
	}
	return l, gen, true
}
