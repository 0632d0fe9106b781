package conn

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/nats-io/nuid"
	"github.com/natsio/natsio/proto"
)

// Sentinel messages that wake a waiting request without a response.
var (
	disconnectedMsg = &Msg{}
	closedMsg       = &Msg{}
	timedOutMsg     = &Msg{} // the request timeout passed (respMux.expire)
)

// respMux multiplexes every request's response over one wildcard
// subscription, "<prefix>.<nuid>.*". Each request gets a numeric token; the
// reader goroutine hands a response straight to its waiter.
type respMux struct {
	// ready is set once sub, prefix and waiters are in place (they never
	// change afterwards): requests then skip mu in ensureMux.
	ready   atomic.Bool
	mu      sync.Mutex
	prefix  string // "<inbox prefix>.<nuid>."
	sub     *Subscription
	next    uint64
	waiters map[uint64]*waiter
	// pending is len(waiters), stored under mu whenever it changes, read
	// without the lock (the flusher's yield, inline writes, Stats).
	pending atomic.Int32
	// free holds tokens whose request is known to be over (reuseReply),
	// newest last; a request takes the newest, so a loop of requests
	// reuses one reply subject. The server caches its routing per
	// subject: a fresh subject on every request costs it a cache miss
	// and an insert.
	free []uint64
	// pool holds idle waiters for reuse. It is the connection's, not a
	// global: a waiter's channel belongs to the testing/synctest bubble
	// (if any) it was created in, and using it from another bubble, or
	// outside any, is a fatal error.
	pool sync.Pool
	// sweep applies the request timeout to the requests whose ctx has no
	// deadline: one timer for the connection, armed (under mu) for the
	// earliest such deadline, sweepAt, instead of a timer per request.
	// Those deadlines are the request time plus one fixed timeout, so a
	// new request's is never earlier than the one armed: a loop of
	// requests arms it once and leaves it be. It runs expire on a
	// goroutine of its own.
	sweep   *time.Timer
	sweepAt time.Time // zero while sweep is not armed
}

type waiter struct {
	ch    chan *Msg // capacity 1: the response or a sentinel
	reply []byte
	// dl is the request timeout's deadline of a request whose ctx has
	// no deadline (expire enforces it), zero for one whose ctx has. Set
	// under the mux's mu.
	dl time.Time
}

// armSweepLocked makes sure the sweep fires by dl. r.mu is held.
func (r *respMux) armSweepLocked(dl, now time.Time) {
	if !r.sweepAt.IsZero() && !r.sweepAt.After(dl) {
		return
	}
	r.sweepAt = dl
	if r.sweep == nil {
		r.sweep = time.AfterFunc(dl.Sub(now), r.expire)
	} else {
		r.sweep.Reset(dl.Sub(now))
	}
}

// expire runs on the sweep timer's goroutine: it ends the requests whose
// request timeout has passed, waking each with timedOutMsg, and arms the
// sweep for the earliest deadline left. It scans every waiter, once per
// request timeout at most while requests keep coming.
func (r *respMux) expire() {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	var next time.Time
	for tok, w := range r.waiters {
		switch {
		case w.dl.IsZero():
		case !w.dl.After(now):
			delete(r.waiters, tok)
			w.ch <- timedOutMsg
		case next.IsZero() || w.dl.Before(next):
			next = w.dl
		}
	}
	r.pending.Store(int32(len(r.waiters)))
	r.sweepAt = time.Time{}
	if !next.IsZero() {
		r.armSweepLocked(next, now)
	}
}

// NewInbox returns a unique inbox subject under the connection's inbox
// prefix.
func (nc *Conn) NewInbox() string {
	return nc.opts.inboxPrefix + "." + nuid.Next()
}

// ensureMux creates the response subscription on first use; a failed
// attempt is retried on the next request.
func (nc *Conn) ensureMux() (*respMux, error) {
	r := &nc.resp
	if r.ready.Load() {
		return r, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sub != nil {
		return r, nil
	}
	prefix := nc.opts.inboxPrefix + "." + nuid.Next() + "."
	sub, err := nc.subscribeMux(prefix+"*", r.route)
	if err != nil {
		return nil, err
	}
	r.prefix = prefix
	r.sub = sub
	if r.waiters == nil {
		r.waiters = make(map[uint64]*waiter)
	}
	r.ready.Store(true)
	return r, nil
}

// route runs on the reader goroutine for each response: it hands the
// response to its waiter's channel (capacity 1, so it never blocks).
func (r *respMux) route(m *Msg) {
	tok, ok := proto.ParseUint([]byte(m.Subject[min(len(r.prefix), len(m.Subject)):]))
	if !ok || !strings.HasPrefix(m.Subject, r.prefix) {
		return
	}
	r.mu.Lock()
	w := r.waiters[tok]
	delete(r.waiters, tok)
	r.pending.Store(int32(len(r.waiters)))
	r.mu.Unlock()
	if w != nil {
		w.ch <- m
	}
}

// failAll wakes every waiting request with sentinel.
func (r *respMux) failAll(sentinel *Msg) {
	r.mu.Lock()
	for tok, w := range r.waiters {
		delete(r.waiters, tok)
		w.ch <- sentinel
	}
	r.pending.Store(0)
	if r.sweep != nil {
		r.sweep.Stop()
		r.sweepAt = time.Time{}
	}
	r.mu.Unlock()
}

// Request publishes data to subject and waits for the first response,
// bounded by ctx (a ctx without deadline gets the request timeout). It
// fails with ErrNoResponders at once when nobody listens on subject,
// ErrTimeout (also matching context.DeadlineExceeded) at the deadline,
// ErrDisconnected when the connection is lost first, and ErrClosed. A ctx
// that is already done fails at once with its error, and nothing is sent.
func (nc *Conn) Request(ctx context.Context, subject string, data []byte) (*Msg, error) {
	return nc.RequestMsg(ctx, subject, nil, data)
}

// RequestMsg is Request with headers h (nil for none).
func (nc *Conn) RequestMsg(ctx context.Context, subject string, h *proto.Header, data []byte) (*Msg, error) {
	if nc.opts.observer != nil {
		return nc.requestObserved(ctx, subject, h, data)
	}
	return nc.requestMsg(ctx, subject, h, data)
}

// requestMsg is RequestMsg past the Observer: natsio's own layers send
// their protocol requests with it (RequestUnobserved).
func (nc *Conn) requestMsg(ctx context.Context, subject string, h *proto.Header, data []byte) (*Msg, error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	// A caller that has already given up sends nothing: a request
	// published now would act without anyone to hear the outcome.
	if ctx.Err() != nil {
		return nil, timeoutErr(ctx)
	}
	r, err := nc.ensureMux()
	if err != nil {
		return nil, err
	}
	w, _ := r.pool.Get().(*waiter)
	if w == nil {
		w = &waiter{ch: make(chan *Msg, 1)}
	}
	// One reading of the clock serves the deadline and the write's.
	now := time.Now()
	// Without a deadline on ctx the request ends at the request timeout:
	// the mux's sweep enforces it (expire).
	w.dl = time.Time{}
	if _, ok := ctx.Deadline(); !ok {
		w.dl = now.Add(nc.opts.requestTimeout)
	}
	r.mu.Lock()
	if !w.dl.IsZero() {
		r.armSweepLocked(w.dl, now)
	}
	var tok uint64
	if n := len(r.free); n > 0 {
		tok = r.free[n-1]
		r.free = r.free[:n-1]
	} else {
		r.next++
		tok = r.next
	}
	w.reply = strconv.AppendUint(append(w.reply[:0], r.prefix...), tok, 10)
	r.waiters[tok] = w
	r.pending.Store(int32(len(r.waiters)))
	r.mu.Unlock()

	reply := unsafe.String(unsafe.SliceData(w.reply), len(w.reply))
	if err := nc.publishAt(subject, reply, h, data, pubUrgent, now); err != nil {
		r.forget(tok, w)
		return nil, err
	}
	nc.stats.requests.Add(1)
	var m *Msg
	if done := ctx.Done(); done == nil {
		m = <-w.ch // the response, or a sentinel: expire, failAll
	} else {
		select {
		case m = <-w.ch:
		case <-done:
			r.forget(tok, w)
			nc.stats.requestTimeouts.Add(1)
			return nil, timeoutErr(ctx)
		}
	}
	r.pool.Put(w)
	switch m {
	case timedOutMsg:
		nc.stats.requestTimeouts.Add(1)
		return nil, &timeoutError{context.DeadlineExceeded}
	case disconnectedMsg:
		return nil, ErrDisconnected
	case closedMsg:
		return nil, ErrClosed
	}
	if len(m.Data) == 0 && m.Status() == 503 {
		nc.stats.noResponders.Add(1)
		return nil, ErrNoResponders
	}
	return m, nil
}

// reuseReply declares that the request answered by m will receive no
// further message, so that its reply subject may serve a later request of
// this connection. Call it only where the protocol guarantees a single
// reply — a JetStream PubAck or API error for a publish, a direct get
// reply — and never for a core request, which any number of subscribers
// may answer: a late second reply would be taken as the answer to the
// later request. A request that ended without its reply (timeout,
// cancellation, disconnect) keeps its subject out of reuse for good.
//
// m must be a response just returned by Request or RequestMsg of this
// connection, and reuseReply called once for it,
// before the next request: a message of another connection or a subject
// in use is ignored, but a stale response whose subject has since served a
// request that timed out would put that subject back into use.
func (nc *Conn) reuseReply(m *Msg) {
	if m == nil {
		return
	}
	r := &nc.resp
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.prefix == "" || !strings.HasPrefix(m.Subject, r.prefix) {
		return
	}
	tok, ok := proto.ParseUint([]byte(m.Subject[len(r.prefix):]))
	if !ok || tok == 0 || tok > r.next || len(r.free) == maxFreeReplies {
		return
	}
	if _, busy := r.waiters[tok]; busy {
		return
	}
	for _, t := range r.free {
		if t == tok {
			return
		}
	}
	if r.free == nil {
		r.free = make([]uint64, 0, maxFreeReplies)
	}
	r.free = append(r.free, tok)
}

// forget removes an abandoned request; once removed no response can be
// sent to w, so it is drained and reused.
func (r *respMux) forget(tok uint64, w *waiter) {
	r.mu.Lock()
	delete(r.waiters, tok)
	r.pending.Store(int32(len(r.waiters)))
	r.mu.Unlock()
	select {
	case <-w.ch:
	default:
	}
	r.pool.Put(w)
}
