package chaos

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pubwin"
)

const (
	streamMain = "CHAOS"
	subjP1     = "chaos.p1"
	subjP2     = "chaos.p2"
)

// Outcome of a logical publish.
const (
	pubPending   uint8 = iota // being published or retried
	pubAcked                  // a PubAck was received
	pubAbandoned              // given up at the end of the phase: unknown outcome
)

// pubRec is what the harness knows about one logical message (one Msg-Id).
type pubRec struct {
	first    time.Duration // first attempt
	ackAt    time.Duration
	seq      uint64 // PubAck sequence
	attempts uint16
	state    uint8
	dup      bool   // acked as a duplicate
	unsure   bool   // an attempt failed after it may have been sent
	lastErr  string // class of the last failed attempt

	c1              uint16 // deliveries to C1
	c1First, c1Last time.Duration
	stored          uint16 // copies in the final stream
	storedSeq       uint64
}

// pubTrack holds the records of one publisher, indexed by n-1 of "<src>-<n>".
type pubTrack struct {
	src  string
	mu   sync.Mutex
	recs []pubRec
}

func (p *pubTrack) add(at time.Duration) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.recs = append(p.recs, pubRec{first: at})
	return len(p.recs)
}

// with runs f on record n under the lock; false if there is none.
func (p *pubTrack) with(n int, f func(*pubRec)) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n < 1 || n > len(p.recs) {
		return false
	}
	f(&p.recs[n-1])
	return true
}

func (p *pubTrack) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.recs)
}

func (p *pubTrack) id(n int) string { return p.src + "-" + strconv.Itoa(n) }

// parseID splits "p1-42" into ("p1", 42).
func parseID(id string) (string, int, bool) {
	src, num, ok := strings.Cut(id, "-")
	if !ok {
		return "", 0, false
	}
	n, err := strconv.Atoi(num)
	return src, n, err == nil && n > 0
}

// unsureClass reports whether a failed attempt of that class may have been
// stored (the PUB may have reached the server).
func unsureClass(c string) bool {
	switch c {
	case "no stream response", "no responders", "reconnect buffer full", "closed", "window stalled":
		return false
	}
	return true
}

// pacer spaces operations at a rate, without bursting after a pause.
type pacer struct {
	every time.Duration
	next  time.Time
}

func newPacer(rate float64) *pacer {
	return &pacer{every: time.Duration(float64(time.Second) / rate)}
}

func (p *pacer) wait() {
	now := time.Now()
	if p.next.IsZero() || now.Sub(p.next) > time.Second {
		p.next = now
	}
	p.next = p.next.Add(p.every)
	if d := time.Until(p.next); d > 0 {
		time.Sleep(d)
	}
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// sleepOr sleeps d or until ch closes; false if ch closed.
func sleepOr(d time.Duration, ch <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ch:
		return false
	}
}

type latSample struct{ at, d time.Duration }

// pubStats are the figures common to P1 and P2.
type pubStats struct {
	attempts  atomic.Int64
	retries   atomic.Int64
	acked     atomic.Int64
	dupAcks   atomic.Int64
	abandoned atomic.Int64
	errs      counter
	latMu     sync.Mutex
	lat       []latSample
}

func (s *pubStats) latency(at, d time.Duration) {
	s.latMu.Lock()
	s.lat = append(s.lat, latSample{at, d})
	s.latMu.Unlock()
}

// ---- P1: sync publisher, retry until acked with the same Msg-Id ----

type p1w struct {
	ph   *phase
	js   *jsapi.JS
	trk  *pubTrack
	st   pubStats
	data []byte
	done chan struct{}
}

func (w *p1w) run(stop, abandon <-chan struct{}) {
	defer close(w.done)
	ph, cfg := w.ph, w.ph.cfg
	pace := newPacer(cfg.p1Rate)
	var ack jsapi.PubAck
	for !closed(stop) {
		pace.wait()
		n := w.trk.add(ph.rec.now())
		id := w.trk.id(n)
		backoff := 20 * time.Millisecond
		for attempt := 0; ; attempt++ {
			if attempt > 0 {
				w.st.retries.Add(1)
				if !sleepOr(backoff, abandon) {
					w.trk.with(n, func(r *pubRec) { r.state = pubAbandoned })
					w.st.abandoned.Add(1)
					return
				}
				backoff = min(2*backoff, 250*time.Millisecond)
			}
			w.st.attempts.Add(1)
			start := time.Now()
			ctx, end := ph.wd.ctx(context.Background(), "P1 js.Publish", cfg.p1Timeout)
			var err error
			ack, err = w.js.Publish(ctx, subjP1, w.data, jsapi.MsgID(id))
			end()
			took := time.Since(start)
			if err == nil {
				at := ph.rec.now()
				w.trk.with(n, func(r *pubRec) {
					r.attempts++
					r.state, r.ackAt, r.seq, r.dup = pubAcked, at, ack.Sequence, ack.Duplicate
				})
				w.st.acked.Add(1)
				if ack.Duplicate {
					w.st.dupAcks.Add(1)
				}
				w.st.latency(at-took, took)
				ph.noteAck(ack.Sequence)
				break
			}
			c := classify(err)
			w.st.errs.add(c, 1)
			w.trk.with(n, func(r *pubRec) {
				r.attempts++
				r.lastErr = c
				r.unsure = r.unsure || unsureClass(c)
			})
			ph.rec.eventLimited(ph.name, "P1", "publish error", c)
		}
	}
}

// ---- P2: async window, the application retries failed futures ----

type p2item struct {
	n   int
	f   *pubwin.Future
	at  time.Time
	lag time.Duration // lag meter reading at the publish
}

type p2w struct {
	ph   *phase
	js   *jsapi.JS
	win  *pubwin.Window
	trk  *pubTrack
	st   pubStats
	data []byte

	created, resolved      atomic.Int64
	resOK, resErr, resTO   atomic.Int64
	resLost                atomic.Int64
	stalled, publishErrs   atomic.Int64
	maxInflight            atomic.Int64
	waitOverrun            atomic.Int64 // futures still open past AckTimeout (+grace)
	pendingAfter           int          // Window.Pending() after the phase
	winStats               pubwin.Stats // Window.Stats() after Close
	retryMu                sync.Mutex
	retry                  []int
	futures                chan p2item
	pubDone, waitDone      chan struct{}
	abandonedAfterFailures atomic.Int64
}

func (w *p2w) pushRetry(n int) {
	w.retryMu.Lock()
	w.retry = append(w.retry, n)
	w.retryMu.Unlock()
}

func (w *p2w) popRetry() (int, bool) {
	w.retryMu.Lock()
	defer w.retryMu.Unlock()
	if len(w.retry) == 0 {
		return 0, false
	}
	n := w.retry[0]
	w.retry = w.retry[1:]
	return n, true
}

func (w *p2w) abandon(n int) {
	w.trk.with(n, func(r *pubRec) {
		if r.state == pubPending {
			r.state = pubAbandoned
			w.st.abandoned.Add(1)
		}
	})
}

func (w *p2w) publisher(stop, abandon <-chan struct{}) {
	defer close(w.pubDone)
	defer close(w.futures)
	ph, cfg := w.ph, w.ph.cfg
	pace := newPacer(cfg.p2Rate)
	retryPace := newPacer(max(cfg.p2Rate, 200))
	for {
		if closed(abandon) {
			for {
				n, ok := w.popRetry()
				if !ok {
					return
				}
				w.abandon(n)
			}
		}
		n, isRetry := w.popRetry()
		if isRetry {
			retryPace.wait()
			w.st.retries.Add(1)
		} else {
			if closed(stop) {
				if w.created.Load() == w.resolved.Load() {
					// Nothing in flight: no retry can appear any more.
					if _, more := w.peekRetry(); !more {
						return
					}
				}
				sleepOr(20*time.Millisecond, abandon)
				continue
			}
			pace.wait()
			n = w.trk.add(ph.rec.now())
		}
		id := w.trk.id(n)
		w.st.attempts.Add(1)
		ctx, end := ph.wd.ctx(context.Background(), "P2 Window.Publish", pubwin.DefaultStallWait+time.Second)
		f, err := w.win.Publish(ctx, subjP2, w.data, jsapi.MsgID(id))
		end()
		if err != nil {
			c := classify(err)
			if errors.Is(err, pubwin.ErrTooManyStalled) {
				c = "window stalled"
				w.stalled.Add(1)
			}
			w.publishErrs.Add(1)
			w.st.errs.add("publish: "+c, 1)
			w.trk.with(n, func(r *pubRec) {
				r.attempts++
				r.lastErr = c
				r.unsure = r.unsure || unsureClass(c)
			})
			ph.rec.eventLimited(ph.name, "P2", "publish error", c)
			w.pushRetry(n)
			sleepOr(50*time.Millisecond, abandon)
			continue
		}
		w.created.Add(1)
		if p := int64(w.win.Pending()); p > w.maxInflight.Load() {
			w.maxInflight.Store(p)
		}
		w.futures <- p2item{n: n, f: f, at: time.Now(), lag: ph.wd.lag.total()}
	}
}

func (w *p2w) peekRetry() (int, bool) {
	w.retryMu.Lock()
	defer w.retryMu.Unlock()
	if len(w.retry) == 0 {
		return 0, false
	}
	return w.retry[0], true
}

// waiter waits for every future in publish order. A future must end by
// AckTimeout after its publish (RELIABILITY.md I2: no default "forever").
func (w *p2w) waiter(abandon <-chan struct{}) {
	defer close(w.waitDone)
	ph, cfg := w.ph, w.ph.cfg
	for it := range w.futures {
		limit := time.Until(it.at.Add(cfg.p2AckTimeout + time.Second))
		ctx, end := ph.wd.ctx(context.Background(), "P2 Future.Wait", max(limit, time.Millisecond))
		ack, err := it.f.Wait(ctx)
		end()
		if err != nil && errors.Is(err, context.DeadlineExceeded) && !it.f.Done() {
			// Past its ack timeout + 1 s: give it the time the process
			// could not run since the publish, then it is an overrun.
			extra := ph.wd.lag.total() - it.lag
			deadline := time.Now().Add(extra)
			for !it.f.Done() && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if !it.f.Done() {
				w.waitOverrun.Add(1)
				ph.rec.event(ph.name, "P2", "future overran", w.trk.id(it.n))
			}
			ack, err = it.f.Wait(context.Background())
		}
		took := time.Since(it.at)
		if err == nil {
			at := ph.rec.now()
			w.resOK.Add(1)
			w.trk.with(it.n, func(r *pubRec) {
				r.attempts++
				r.state, r.ackAt, r.seq, r.dup = pubAcked, at, ack.Sequence, ack.Duplicate
			})
			w.st.acked.Add(1)
			if ack.Duplicate {
				w.st.dupAcks.Add(1)
			}
			w.st.latency(at-took, took)
			ph.noteAck(ack.Sequence)
			w.resolved.Add(1)
			continue
		}
		c := classify(err)
		switch {
		case errors.Is(err, pubwin.ErrAckTimeout):
			c = "ack timeout"
			w.resTO.Add(1)
		case errors.Is(err, pubwin.ErrAckLost):
			c = "ack lost"
			w.resLost.Add(1)
		default:
			w.resErr.Add(1)
		}
		w.st.errs.add("future: "+c, 1)
		w.trk.with(it.n, func(r *pubRec) {
			r.attempts++
			r.lastErr = c
			r.unsure = r.unsure || unsureClass(c)
		})
		ph.rec.eventLimited(ph.name, "P2", "future error", c)
		if closed(abandon) {
			w.abandon(it.n)
			w.abandonedAfterFailures.Add(1)
		} else {
			w.pushRetry(it.n)
		}
		// Counted last, so that the publisher never sees everything
		// resolved before the retry is queued.
		w.resolved.Add(1)
	}
}

// finish abandons what is left once publisher and waiter are done.
func (w *p2w) finish() {
	for {
		n, ok := w.popRetry()
		if !ok {
			return
		}
		w.abandon(n)
	}
}
