package conn

import (
	"context"
	"runtime"
	"time"

	"github.com/natsio/natsio/internal/wire"
	"github.com/natsio/natsio/proto"
)

// Publish sends data to subject. It does not wait for the server: the bytes
// are queued and written by the connection's flusher. It fails at once,
// before anything is queued, with ErrBadSubject (ErrSubjectTooLong for a
// subject and reply longer than the server's control line allows, see
// MaxControlLine), ErrMaxPayload, ErrClosed, ErrDraining or, while
// disconnected with a full reconnect buffer, ErrReconnectBuffer. It allocates nothing. The subject, reply, headers and
// data are copied before it returns: the caller may reuse their memory at
// once (also for PublishMsg and Request).
func (nc *Conn) Publish(subject string, data []byte) error {
	if nc.opts.observer != nil {
		return nc.publishObserved(PubPublish, subject, "", nil, data, pubNormal, nil)
	}
	return nc.publish(subject, "", nil, data, pubNormal)
}

// pubMode tells publish how its bytes get written.
type pubMode uint8

const (
	pubNormal pubMode = iota // wake the flusher
	pubUrgent                // someone waits: write inline when no write is under way
	pubLazy                  // leave it for a later write (WriteLazy)
)

// PublishMsg sends data with headers h (nil for none) and a reply subject
// (empty for none): the form for everything Publish does not cover. It
// fails like Publish, and also with ErrHeadersUnsupported when the server
// does not support headers and ErrBadHeader when a key or value is
// invalid, before anything is queued. It allocates nothing.
func (nc *Conn) PublishMsg(subject, reply string, h *proto.Header, data []byte) error {
	if nc.opts.observer != nil {
		return nc.publishObserved(PubPublish, subject, reply, h, data, pubNormal, nil)
	}
	if h == nil {
		return nc.publish(subject, reply, nil, data, pubNormal)
	}
	return nc.publish(subject, reply, h, data, pubNormal)
}

// publish queues one message. pubUrgent marks a message someone waits on
// (a request, a response): when no write is in progress it is written at
// once by the calling goroutine, saving the hand-off to the flusher.
// pubLazy leaves it for a later write (WriteLazy).
func (nc *Conn) publish(subject, reply string, h *proto.Header, data []byte, mode pubMode) error {
	return nc.publishAt(subject, reply, h, data, mode, time.Time{})
}

// publishAt is publish for a caller that has just read the clock (now;
// zero if not): an inline write uses it for its deadline instead of
// reading the clock again: between a response and the next request every
// microsecond lengthens the round trip (docs/performance.md).
func (nc *Conn) publishAt(subject, reply string, h *proto.Header, data []byte, mode pubMode, now time.Time) error {
	size, hdr := len(data), -1
	if h != nil {
		hdr = h.EncodedLen()
		size += hdr
	}
	nc.mu.Lock()
	if err := nc.writableLocked(); err != nil {
		nc.mu.Unlock()
		return err
	}
	if int64(size) > nc.info.MaxPayload {
		nc.mu.Unlock()
		return ErrMaxPayload
	}
	if h != nil && !nc.info.Headers {
		nc.mu.Unlock()
		return ErrHeadersUnsupported
	}
	if nc.state != stateConnected {
		if nc.opts.reconnectBuf < 0 || len(nc.wbuf)+size+len(subject)+len(reply)+32 > nc.opts.reconnectBuf {
			nc.bufFull++
			nc.mu.Unlock()
			return ErrReconnectBuffer
		}
	}
	var err error
	if !pubLineFits(nc.opts.maxControlLine, subject, reply, hdr, len(data)) {
		err = ErrSubjectTooLong
	} else if h == nil {
		if err = nc.pubSubject.Check(subject); err == nil && reply != "" {
			err = proto.ValidatePublishSubject(reply)
		}
		if err == nil {
			nc.wbuf = wire.AppendPubUnchecked(nc.wbuf, subject, reply, data)
		}
	} else {
		nc.wbuf, err = proto.AppendHPub(nc.wbuf, subject, reply, h, data)
	}
	if err != nil {
		nc.mu.Unlock()
		return err
	}
	nc.out.msgs++
	nc.out.bytes += uint64(size)
	if nc.state != stateConnected {
		nc.bufPeak = max(nc.bufPeak, len(nc.wbuf))
	}
	switch {
	case mode == pubUrgent && !nc.writing && nc.state == stateConnected && nc.resp.pending.Load() <= 1:
		nc.writeInline(now)
		return nil
	case mode == pubLazy && len(nc.wbuf) < lazyKick:
		nc.deferLocked()
	default:
		nc.kickLocked()
	}
	for len(nc.wbuf) >= highWater && nc.state == stateConnected {
		nc.wcond.Wait()
	}
	nc.mu.Unlock()
	return nil
}

// pubLineFits reports whether the arguments of a PUB line (hdr < 0) or of
// an HPUB line with a header block of hdr bytes, for a payload of size
// bytes, are at most limit bytes long: what the server checks against its
// max_control_line.
func pubLineFits(limit int, subject, reply string, hdr, size int) bool {
	n := len(subject) + len(reply)
	if n <= limit-48 {
		return true // room for the separators and two sizes of any length
	}
	if reply != "" {
		n++
	}
	if hdr >= 0 {
		n += 1 + decimalLen(hdr)
		size += hdr
	}
	return n+1+decimalLen(size) <= limit
}

// decimalLen is the number of decimal digits of n ≥ 0.
func decimalLen(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// writeInline writes the whole outbound buffer from the calling goroutine.
// nc.mu is held on entry and released on return. Only one goroutine writes
// at a time (nc.writing); whatever is queued meanwhile goes to the flusher.
// now is the caller's reading of the clock, or zero (writeLocked).
func (nc *Conn) writeInline(now time.Time) {
	if nc.writeLocked(now) && len(nc.wbuf) > 0 {
		nc.kicked = false
		nc.kickLocked()
	}
	nc.mu.Unlock()
}

// writeLocked takes the outbound buffer and writes it to the current link,
// releasing nc.mu during the write (nc.writing is set meanwhile) and holding
// it again on return. A failed write loses the link: its bytes may have
// reached the server in part, so their fate is unknown; they are counted as
// lost, never replayed, and writeLocked reports false. now, when not zero,
// is a reading of the clock taken just before (armWrite).
func (nc *Conn) writeLocked(now time.Time) bool {
	l, gen := nc.link, nc.gen
	buf := nc.wbuf
	nc.wbuf = nc.spare[:0]
	nc.spare = nil
	nc.pongOwed = false // the PONG queued, if any, is in buf
	nc.writing = true
	nc.lazyTakenLocked()
	nc.wcond.Broadcast() // the queue is empty: publishers held at highWater go on
	nc.mu.Unlock()
	l.armWrite(nc.opts.writeTimeout, now)
	n, err := l.c.Write(buf)
	nc.stats.writes.Add(1)
	nc.stats.socketOut.Add(uint64(n))
	nc.mu.Lock()
	nc.writing = false
	nc.wcond.Broadcast()
	if cap(buf) <= maxSpare {
		nc.spare = buf[:0]
	}
	if err != nil {
		nc.stats.lostBytes.Add(uint64(len(buf)))
		nc.mu.Unlock()
		nc.connLost(gen, err)
		nc.mu.Lock()
		return false
	}
	return true
}

// armWrite bounds the write about to start by the write timeout d. The
// deadline is moved only when less than three quarters of d remain, not
// before every write (each move costs a runtime timer update), so a write
// that blocks fails after between ¾·d and d. Writes to a link are never
// concurrent (nc.writing), so wdl needs no lock. now is the time, or zero
// to read the clock here.
func (l *link) armWrite(d time.Duration, now time.Time) {
	if now.IsZero() {
		now = time.Now()
	}
	if l.wdl.Sub(now) >= d-d/4 {
		return
	}
	l.wdl = now.Add(d)
	_ = l.c.SetWriteDeadline(l.wdl)
}

// writableLocked reports whether publishes are accepted now.
func (nc *Conn) writableLocked() error {
	if nc.state == stateClosed {
		return ErrClosed
	}
	if nc.draining {
		return ErrDraining
	}
	return nil
}

// kickLocked wakes the flusher unless it was already woken.
func (nc *Conn) kickLocked() {
	if nc.kicked || nc.state != stateConnected {
		return
	}
	nc.kicked = true
	select {
	case nc.kick <- struct{}{}:
	default:
	}
}

// deferLocked notes that lazily published bytes wait in the buffer and
// makes sure they are written within lazyDelay.
func (nc *Conn) deferLocked() {
	if nc.lazy || nc.kicked {
		return // the timer is armed, or the flusher is about to write
	}
	nc.lazy = true
	if nc.lazyTimer == nil {
		nc.lazyTimer = time.AfterFunc(lazyDelay, nc.lazyExpired)
	} else {
		nc.lazyTimer.Reset(lazyDelay)
	}
}

// lazyTakenLocked records that a write took the buffer, lazily published
// bytes included, and disarms their timer.
func (nc *Conn) lazyTakenLocked() {
	if nc.lazy {
		nc.lazy = false
		nc.lazyTimer.Stop()
	}
}

// lazyExpired wakes the flusher for bytes published lazily lazyDelay ago
// that no write has taken since. While a burst of subscriptions goes on
// (queueSubLocked) it waits another lazyDelay instead, up to subMaxWait
// after the burst's first waiting SUB: the burst's SUB lines are written
// at its end, 64 KiB at a time, or every subMaxWait.
func (nc *Conn) lazyExpired() {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	now := time.Now()
	if nc.lazy && now.Sub(nc.lastSub) < subBurstGap && now.Sub(nc.lazySince) < subMaxWait && nc.state == stateConnected {
		nc.lazyTimer.Reset(lazyDelay)
		return
	}
	if nc.lazy {
		nc.lazyTakenLocked()
		nc.kickLocked()
	}
}

// flusher writes queued bytes to the current connection, coalescing every
// publish made while it was writing into the next write.
func (nc *Conn) flusher() {
	defer nc.wg.Done()
	defer close(nc.flusherDone)
	for {
		select {
		case <-nc.kick:
		case <-nc.closed:
			return
		}
		// With a few requests outstanding, yield once so that the
		// requesters the reader has just woken queue theirs before this
		// write: they then share it. With many, they queue theirs while
		// the flusher writes anyway, and a yield would put it behind all
		// of them (at 10,000 concurrent requesters it cost two thirds of
		// the throughput).
		if p := nc.resp.pending.Load(); p > 1 && p <= maxYieldPending {
			runtime.Gosched()
		}
		nc.mu.Lock()
		// While an inline writer is busy, it hands what is left back here.
		for nc.state == stateConnected && len(nc.wbuf) > 0 && !nc.writing {
			if !nc.writeLocked(time.Time{}) {
				break
			}
		}
		nc.kicked = false
		nc.mu.Unlock()
	}
}

// pinger sends keepalive PINGs and drops a connection whose PONGs stop.
func (nc *Conn) pinger() {
	defer nc.wg.Done()
	t := time.NewTicker(nc.opts.pingInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-nc.closed:
			return
		}
		nc.mu.Lock()
		if nc.state != stateConnected {
			nc.mu.Unlock()
			continue
		}
		if nc.pingsOut >= nc.opts.maxPingsOut {
			gen := nc.gen
			nc.mu.Unlock()
			nc.connLost(gen, ErrStaleConnection)
			continue
		}
		nc.pingsOut++
		nc.pongs = append(nc.pongs, nil)
		nc.wbuf = proto.AppendPing(nc.wbuf)
		nc.kickLocked()
		nc.mu.Unlock()
	}
}

// Flush waits until the server has processed everything sent before it (a
// PING/PONG round trip). It fails with ErrDisconnected when the connection
// is lost first (or is down when called), ErrClosed, or ctx's error; a ctx
// without deadline gets the request timeout.
func (nc *Conn) Flush(ctx context.Context) error {
	if ctx == nil {
		return ErrNilContext
	}
	if ctx.Err() != nil {
		return timeoutErr(ctx)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, nc.opts.requestTimeout)
		defer cancel()
	}
	ch := make(chan error, 1)
	nc.mu.Lock()
	switch nc.state {
	case stateClosed:
		nc.mu.Unlock()
		return ErrClosed
	case stateConnected:
	default:
		nc.mu.Unlock()
		return ErrDisconnected
	}
	nc.pongs = append(nc.pongs, ch)
	nc.wbuf = proto.AppendPing(nc.wbuf)
	if !nc.writing {
		nc.writeInline(time.Time{}) // unlocks
	} else {
		nc.kickLocked()
		nc.mu.Unlock()
	}
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return timeoutErr(ctx)
	}
}

// RTT measures the round trip to the server: the time a Flush takes (a
// PING answered by a PONG, behind whatever was queued before it). Its
// errors are Flush's.
func (nc *Conn) RTT(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	if err := nc.Flush(ctx); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// Buffered returns the bytes queued for the server and not yet taken by a
// write: publishes waiting for the flusher, or, while disconnected, the
// reconnect buffer's content.
func (nc *Conn) Buffered() int {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	return len(nc.wbuf)
}

// timeoutErr is ctx's error, matching ErrTimeout too when its deadline
// passed.
func timeoutErr(ctx context.Context) error {
	err := context.Cause(ctx)
	if ctx.Err() == context.DeadlineExceeded {
		return &timeoutError{err}
	}
	return err
}

type timeoutError struct{ cause error }

func (e *timeoutError) Error() string { return "nats: timeout: " + e.cause.Error() }
func (e *timeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}
func (e *timeoutError) Unwrap() error { return e.cause }
