package conn

import (
	"context"
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
// Consumers read inline too: a SubscribeFunc handler goroutine or a
// Messages iterator that finds its queue empty and the role free reads the
// socket until its subscription has messages (Conn.readForSub), so a
// responder answers with no hand-off either. The reader goroutine leaves
// the socket to such a consumer after waking it (link.wokeWaiter). When it
// finds the role held by an inline reader, possibly for long (a consumer
// waiting for rare messages), it waits with no timer until that reader hands
// the role back (link.idle, Conn.endInline). The end of the subscription
// and the consumer's ctx interrupt an inline read (link.interrupt).
// Measured on 2 cores: −12 to −28 % client CPU on a request/reply round
// trip whose responder is a SubscribeFunc. nextBatch stays on the reader
// goroutine unless the subscription asks otherwise (setInlineReads): pull
// consumers that publish each acknowledgement at once used 7–12 % more CPU
// reading inline in interleaved runs (the reader no longer reads ahead of
// them, and each batch of acks woke the flusher), while the ordered
// consumer, which publishes nothing per message, used 9 % less and ran 8 %
// faster (with its pulls written by the consuming goroutine,
// publishNow), and consumers whose acks wait for their next pull
// (publishLazy) ran 7–10 % faster. Each hand-off between goroutines on a
// machine with an idle core wakes a second thread (the runtime's wakep):
// the futex calls of an ordered read-through fell from about 2500 to 900.
//
// The role is an atomic flag: whoever holds it alone touches the link's
// parser, buffers and reader-side fields. The holder wakes the consumers it
// queued messages for as it releases the role. Inline reads are
// used on TCP and TLS links; WebSocket links keep the reader goroutine.

// parkDelay is how long the reader goroutine first leaves the socket to
// requesters after a response; parkMax bounds the doubled waits during a
// loop of requests. parkMax is thus the longest a subscription's message
// can wait for a reader after a loop of requests ends (messages that arrive
// during the loop are read by the requesters). A short timer kept armed
// has its own cost: on an idle core the runtime wakes up for it each time.
//
// parkQuietMax replaces parkMax while the connection has no subscription
// but the request inbox (Conn.quiet): then nothing but the server's PINGs,
// INFO and errors, and late responses to abandoned requests, can arrive
// unasked, and none of those needs reading within milliseconds. A new
// subscription wakes the parked reader at once (Conn.register). The
// usual quiet connection is a loop of JetStream publishes or KV operations:
// with the reader waking every second instead of every 8 ms, sync publishes
// ran 9 % faster at 20 % less client CPU and KV puts 9 % faster at 13 % less
// (interleaved medians of 20 runs each on 2 vCPUs).
const (
	parkDelay    = time.Millisecond
	parkMax      = 8 * time.Millisecond
	parkQuietMax = time.Second
)

// errInlineDeadline ends an inline read at the requester's deadline.
var errInlineDeadline = errors.New("nats: inline read deadline")

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// tryAcquire takes the reader role if it is free.
func (l *link) tryAcquire() bool { return l.role.CompareAndSwap(false, true) }

// release publishes the holder's counters, frees the reader role and wakes
// the consumers the holder queued messages for — in that order, so that a
// woken consumer that reads inline finds the role free. (The wake list
// belongs to the role holder: it is taken before the role is freed.)
func (l *link) release() {
	l.flushStage()
	var buf [4]*Subscription
	wakes := append(buf[:0], l.wakes...)
	clear(l.wakes)
	l.wakes = l.wakes[:0]
	l.held = 0
	l.flushStats()
	l.replied, l.wokeWaiter = false, false
	l.role.Store(false)
	for _, s := range wakes {
		s.signal()
	}
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
			if l.stats != nil {
				l.stats.parkTimeouts.Add(1)
			}
			if time.Since(time.Unix(0, l.lastInline.Load())) < parkDelay {
				limit := parkMax
				if l.quiet != nil && l.quiet() {
					limit = parkQuietMax
				}
				delay = min(2*delay, limit)
				continue
			}
		case <-l.handback:
		case <-l.lost:
			return false
		}
		if l.tryAcquire() {
			return l.resume()
		}
		// An inline reader holds the role, perhaps for long (a consumer
		// waiting for rare messages): wait, with no timer, until it hands
		// the role back (endInline). Flag first, then look again, so that
		// a release in between is not missed.
		l.idle.Store(true)
		if l.tryAcquire() {
			l.idle.Store(false)
			return l.resume()
		}
		select {
		case <-l.handback:
		case <-l.lost:
			l.idle.Store(false)
			return false
		}
		l.idle.Store(false)
		if l.tryAcquire() {
			return l.resume()
		}
		delay = parkDelay
	}
}

// resume completes park once the role is taken back: a shut link is not
// read again.
func (l *link) resume() bool {
	select {
	case <-l.lost:
		l.role.Store(false)
		return false
	default:
	}
	// The reader goroutine reads without a deadline: clear what an inline
	// reader left on the socket.
	l.imu.Lock()
	if !l.rdl.IsZero() {
		l.rdl = time.Time{}
		_ = l.c.SetReadDeadline(l.rdl)
	}
	l.imu.Unlock()
	return true
}

// endInline releases the role after an inline read. It hands the role to
// the reader goroutine at once when that one waits for it (idle), or when
// others wait for answers that nobody may be reading for.
func (nc *Conn) endInline(l *link) {
	l.lastInline.Store(time.Now().UnixNano())
	l.release()
	if l.idle.Load() || nc.othersWaiting() {
		select {
		case l.handback <- struct{}{}:
		default:
		}
	}
}

// readFor reads and dispatches ops on the calling goroutine, which holds
// l's reader role, until w has its response (or a sentinel), the deadline
// passes, or the link fails. It then releases the role, handing it back to
// the reader goroutine at once when other requests or flushes are waiting.
func (nc *Conn) readFor(l *link, gen uint64, w *waiter, deadline, now time.Time) {
	nc.stats.inlineReads.Add(1)
	l.imu.Lock()
	err := l.readDeadlineLocked(deadline, now)
	l.imu.Unlock()
	if err == nil {
		l.deadline = true
		sysReads(l.base, true)
		l.self = w
		for len(w.ch) == 0 && w.direct == nil {
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
		l.self = nil
		sysReads(l.base, false)
		l.deadline = false // the socket keeps it: see readDeadlineLocked
	}
	nc.endInline(l)
}

// readDeadlineLocked gives the socket a read deadline for an inline read
// that must end by dl (zero: none). A deadline already set is kept when it
// comes no later than dl and leaves at least half the time until dl: the
// read may then end early, and its caller waits as if it had not read
// inline. So a loop of requests with the default timeout sets the
// deadline once every few seconds rather than twice per request: the pair
// of calls costs about 0.3 µs of runtime timer work (a micro-benchmark),
// too little to show in a round trip's rate on 2 cores. Holders leave the
// deadline on the socket (l.rdl); the reader goroutine clears it when it
// takes the role back (resume). now is the caller's reading of the clock,
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

// othersWaiting reports whether a request or a flush awaits an answer that
// nobody may be reading for.
//
// It reads counts kept beside the waiters and the PONG queue rather than
// taking their locks: a request registers its waiter (and counts it)
// before it tries the reader role, and the holder frees the role before it
// looks, so either the request takes the role itself or the holder sees
// it counted (Go's atomics are sequentially consistent).
func (nc *Conn) othersWaiting() bool {
	return nc.resp.pending.Load() > 0 || nc.npongs.Load() > 0
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

// inlineBacklog is how many messages a consumer reading inline lets queue
// up before it stops reading in the middle of a message to take them.
// Never stopping could keep a consumer reading a subject busier than it
// can parse while its queue fills up to the pending limit; stopping at
// every read that ends inside a message cost a loop of 1 KiB messages 15 %
// more client CPU, and a bound of 1024 7 % (interleaved pairs on 2 cores).
const inlineBacklog = 8192

// readForSub is readFor for a consumer of s waiting in take: it reads and
// dispatches ops until s has messages queued once the parser has used up
// what was read, s ends, ctx ends, or the link fails, then releases the
// role. When a read ends inside a message it reads on for the rest, unless
// inlineBacklog messages wait already or they are lent: the parser keeps
// the cut message for whoever reads next. With lend, messages for s are
// lent (lend.go), and a batch is what one read brought, so that the
// consumer reads into the same buffer again. ctx's deadline bounds the
// read; its cancellation and the end of s interrupt it (link.interrupt).
func (nc *Conn) readForSub(ctx context.Context, l *link, gen uint64, s *Subscription, lend bool) {
	nc.stats.inlineBatches.Add(1)
	dl, _ := ctx.Deadline()
	l.imu.Lock()
	err := l.readDeadlineLocked(dl, time.Time{})
	if err == nil {
		l.deadline = true
		l.inlineSub = s
	}
	l.imu.Unlock()
	if err == nil {
		s.readingOn.Store(l)
		if lend {
			l.lendSub = s
		}
		// ctx's end interrupts the read: through the subscription's
		// registration if it ends from now on, here if it already has.
		s.watchCtx(ctx)
		if ctx.Err() != nil {
			l.interrupt(s)
		}
		for {
			op, err := l.p.Next()
			if err == nil && op == nil {
				l.flushStage()
				if n, ended := s.backlog(); ended || n > 0 && (lend || !l.p.Buffered() || n >= inlineBacklog) {
					break
				}
				err = l.fill()
				if err == nil {
					continue
				}
			} else if err != nil {
				err = &ProtocolError{Err: err}
			}
			if err != nil {
				if !errors.Is(err, errInlineDeadline) {
					l.imu.Lock()
					l.deadline, l.inlineSub = false, nil
					l.imu.Unlock()
					l.lendSub = nil
					nc.readFailed(l, gen, err)
				}
				break
			}
			if nc.handleOp(l, gen, op) {
				break
			}
		}
		l.lendSub = nil
		s.readingOn.Store(nil)
		l.imu.Lock()
		l.inlineSub = nil
		l.deadline = false // the socket keeps it: see readDeadlineLocked
		l.imu.Unlock()
	}
	nc.endInline(l)
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
	if l.inlineSub == s && l.deadline {
		l.rdl = time.Unix(1, 0)
		_ = l.c.SetReadDeadline(l.rdl)
	}
	l.imu.Unlock()
}
