package conn

import (
	"time"
)

// The reader role: who reads a link's socket (see the package doc, "Who
// reads the socket", for the state table and why).
//
// A request answered by the reader goroutine costs a goroutine hand-off:
// the reader wakes the requester, and on a machine with an idle core the
// runtime wakes a second thread for it. So the socket is read by whoever
// holds the link's reader role:
//
//   - The reader goroutine holds it, except right after it handed a
//     response to a requester or woke a consumer waiting for messages:
//     then, with nothing else buffered, it releases the role and parks.
//   - A requester that finds the role free takes it after writing its
//     request and reads the socket itself until its own response arrives
//     (readFor); a consumer (a SubscribeFunc handler goroutine, a Messages
//     loop, a batch consumer reading inline) that finds its queue empty
//     reads until its subscription has messages (readForSub). Each
//     dispatches everything else it reads exactly as the reader goroutine
//     would.
//   - The parked reader goroutine looks again parkDelay later. If an
//     inline read ended less than parkDelay ago, a loop of requests is
//     under way: it stays parked and waits twice as long, up to parkMax
//     (parkQuietMax on a connection with no subscription but the request
//     inbox). Otherwise it takes the role back. When it finds the role
//     held by an inline reader, possibly for long, it waits with no timer
//     until that reader hands the role back. It also takes it back at
//     once when an inline reader leaves other waiters behind (handback),
//     and exits when the link is shut.
//
// Inline reads are used on TCP and TLS links; WebSocket links keep the
// reader goroutine.

// roleState is who holds a link's reader role.
type roleState = int32

const (
	// roleFree: nobody reads. The reader goroutine is parked on its
	// timer (or gone with the link); a requester or consumer may take
	// the role.
	roleFree roleState = iota
	// roleGoroutine: the reader goroutine reads (the handshake too,
	// before the goroutine starts).
	roleGoroutine
	// roleYielding: the reader goroutine reads and parks once the parser
	// has used up what was read: it handed a response to a requester or
	// woke a waiting consumer, who will read next.
	roleYielding
	// roleInline: a requester or consumer reads; the reader goroutine is
	// parked on its timer.
	roleInline
	// roleInlineWaited: a requester or consumer reads, and the reader
	// goroutine waits with no timer for it to hand the role back.
	roleInlineWaited
)

// roleStep moves l's role from one state to the next: the only place the
// role changes. It reports whether the move happened (a compare-and-swap
// that lost a race did not). The moves:
//
//	free → inline                  a requester or consumer takes the role (acquire)
//	inline → free                  it is done (release; endInline hands back if it was waited)
//	inline-waited → free           ditto, and the goroutine is handed the role back
//	goroutine → yielding           a response or a waiting consumer's wake-up was dispatched
//	yielding → goroutine           others wait for answers: the goroutine keeps reading
//	goroutine, yielding → free     the goroutine parks or exits (release)
//	free → goroutine               the goroutine takes the role back (resume)
//	inline → inline-waited         the goroutine found the role held and waits for it
//
// Only the holder moves the role out of goroutine, yielding and inline; the
// reader goroutine alone moves it to goroutine and inline-waited; anyone
// may move it from free to inline. In race builds a move not in the table
// panics.
func (l *link) roleStep(from, to roleState) bool {
	if raceEnabled && !roleMoveAllowed(from, to) {
		panic("conn: reader role moved from " + roleName(from) + " to " + roleName(to))
	}
	return l.role.CompareAndSwap(from, to)
}

func roleMoveAllowed(from, to roleState) bool {
	switch from {
	case roleFree:
		return to == roleInline || to == roleGoroutine
	case roleInline:
		return to == roleFree || to == roleInlineWaited
	case roleInlineWaited:
		return to == roleFree
	case roleGoroutine:
		return to == roleYielding || to == roleFree
	case roleYielding:
		return to == roleGoroutine || to == roleFree
	}
	return false
}

func roleName(s roleState) string {
	switch s {
	case roleFree:
		return "free"
	case roleGoroutine:
		return "goroutine"
	case roleYielding:
		return "yielding"
	case roleInline:
		return "inline"
	case roleInlineWaited:
		return "inline-waited"
	}
	return "unknown"
}

// acquire takes the reader role for an inline read if it is free, and
// returns the link's reader: the only way to reach it besides being the
// reader goroutine. The caller must end with endInline.
func (l *link) acquire() (*reader, bool) {
	if !l.roleStep(roleFree, roleInline) {
		return nil, false
	}
	return &l.rd, true
}

// release publishes the holder's counters, frees the reader role and wakes
// the consumers the holder queued messages for — in that order, so that a
// woken consumer that reads inline finds the role free. It reports whether
// the reader goroutine was waiting for the role (inline-waited).
func (l *link) release() (waited bool) {
	r := &l.rd
	r.flushStage()
	var buf [4]*Subscription
	wakes := append(buf[:0], r.wakes...)
	clear(r.wakes)
	r.wakes = r.wakes[:0]
	r.held = 0
	r.flushStats()
	for {
		// The reader goroutine may move inline to inline-waited meanwhile.
		s := l.role.Load()
		if l.roleStep(s, roleFree) {
			waited = s == roleInlineWaited
			break
		}
	}
	for _, s := range wakes {
		s.signal()
	}
	return waited
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
			if l.rd.stats != nil {
				l.rd.stats.parkTimeouts.Add(1)
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
		if l.roleStep(roleFree, roleGoroutine) {
			return l.resume()
		}
		// An inline reader holds the role, perhaps for long (a consumer
		// waiting for rare messages): wait, with no timer, until it hands
		// the role back (endInline). If it released the role meanwhile,
		// the move fails: look again.
		if !l.roleStep(roleInline, roleInlineWaited) {
			if l.roleStep(roleFree, roleGoroutine) {
				return l.resume()
			}
			delay = parkDelay
			continue
		}
		select {
		case <-l.handback:
		case <-l.lost:
			return false
		}
		if l.roleStep(roleFree, roleGoroutine) {
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
		l.roleStep(roleGoroutine, roleFree)
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
// the reader goroutine at once when that one waits for it, or when others
// wait for answers that nobody may be reading for.
func (nc *Conn) endInline(l *link) {
	l.lastInline.Store(time.Now().UnixNano())
	if l.release() || nc.othersWaiting() {
		select {
		case l.handback <- struct{}{}:
		default:
		}
	}
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

// inlineLink returns the current link and its reader when a requester or
// consumer may read inline: connected over TCP or TLS, with the reader
// role free (then taken: the caller must end with endInline).
func (nc *Conn) inlineLink() (*link, *reader, uint64, bool) {
	nc.mu.Lock()
	l, gen := nc.link, nc.gen
	ok := nc.state == stateConnected && l != nil && l.inlineOK
	nc.mu.Unlock()
	if !ok {
		return nil, nil, 0, false
	}
	r, ok := l.acquire()
	if !ok {
		return nil, nil, 0, false
	}
	return l, r, gen, true
}

// mustHold panics in race builds when nobody holds r's link's reader
// role: the dispatch methods are for the role holder only.
func (r *reader) mustHold() {
	if raceEnabled && r.l.role.Load() == roleFree {
		panic("conn: reader used without the reader role")
	}
}
