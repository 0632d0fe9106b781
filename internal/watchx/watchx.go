// Package watchx is the read of a kv or objstore watch: an ordered
// consumer read from when the watch begins (when Watch is called, not
// when its loop starts), with the end-of-initial-values marker placed at
// the point where it began.
package watchx

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
	"github.com/natsio/natsio/pull"
)

// QueueLen bounds the messages a live watch holds between its read and
// its loop; a full queue holds the read back (and the server with it).
const QueueLen = 256

// initial tells the end of a watch's initial values: the messages its
// first server-side consumer had to deliver when it was created
// (ordered.Consumer.InitialPending). Once the consumer was recreated
// before then the count no longer holds, and the first message reporting
// nothing pending ends them.
type initial struct {
	left     uint64
	counting bool
	done     bool
}

func newInitial(oc *ordered.Consumer) *initial {
	n := oc.InitialPending()
	return &initial{left: n, counting: true, done: n == 0}
}

// after reports whether the message md describes, just given, ends the
// initial values.
func (in *initial) after(md jsapi.Metadata) bool {
	if in.done {
		return false
	}
	if in.counting {
		in.left--
	}
	in.done = (in.counting && in.left == 0) || md.NumPending == 0
	return in.done
}

// ReadInitial reads the initial values of oc, an ordered consumer just
// made by New, giving each message to each, and ends after the last one
// (at once when there is none), or when each returns false. It returns
// oc's terminal error, nil otherwise. opts are the read's options.
func ReadInitial(ctx context.Context, oc *ordered.Consumer, opts []ordered.Opt, each func(m *jsapi.Msg, md jsapi.Metadata) bool) error {
	in := newInitial(oc)
	if in.done {
		stop(ctx, oc)
		return nil
	}
	opts = append(opts[:len(opts):len(opts)], ordered.OnReset(func(error) { in.counting = false }))
	for m, err := range oc.Messages(ctx, opts...) {
		if err != nil {
			return err
		}
		md, err := m.Metadata()
		if err != nil {
			continue // ordered skips these already
		}
		if !each(m, md) || in.after(md) {
			return nil
		}
	}
	return nil
}

// item is what a live watch's read hands its loop: a message, or the news
// that the consumer was recreated.
type item struct {
	m     *jsapi.Msg
	reset bool
}

// Live is a watch that has begun: a Consume of its ordered consumer,
// started when the watch was called, that hands each message to the
// watch's loop through a queue of QueueLen. Until the loop starts, the
// messages wait there (and in the consumer's pull), as in a subscription:
// a write made after the watch began is read as its own entry even when a
// later write replaces it in the stream before the loop starts.
type Live struct {
	oc  *ordered.Consumer
	in  *initial
	q   chan item
	end *ender
	ctx context.Context
}

// ender ends a live watch's read, once.
type ender struct {
	cc   *pull.ConsumeContext
	quit chan struct{}
	once sync.Once
}

func (e *ender) stop() {
	e.once.Do(func() {
		close(e.quit)
		e.cc.Stop()
	})
	<-e.cc.Closed()
}

// Start begins a live watch on oc, an ordered consumer just made by New
// and not read yet; opts are the read's options. It returns once the
// initial values have been received (or the queue is full), so that a
// write made after Start returns cannot replace one of them unread. The
// read runs until Read's loop ends, ctx ends, oc meets a terminal error,
// or the Live is garbage collected without having been read.
func Start(ctx context.Context, oc *ordered.Consumer, opts []ordered.Opt) (*Live, error) {
	q, quit, ready := make(chan item, QueueLen), make(chan struct{}), make(chan struct{})
	got := newInitial(oc) // on the read's goroutine only
	if got.done {
		close(ready)
	}
	put := func(it item) {
		select {
		case q <- it:
			return
		default:
		}
		if !got.done {
			got.done = true // full: Start returns
			close(ready)
		}
		select {
		case q <- it:
		case <-quit:
		}
	}
	opts = append(opts[:len(opts):len(opts)], ordered.OnReset(func(error) {
		got.counting = false
		put(item{reset: true})
	}))
	cc, err := oc.Consume(ctx, func(m *jsapi.Msg) {
		put(item{m: m})
		if md, err := m.Metadata(); err == nil && got.after(md) {
			close(ready)
		}
	}, opts...)
	if err != nil {
		stop(ctx, oc)
		return nil, err
	}
	l := &Live{oc: oc, in: newInitial(oc), q: q, end: &ender{cc: cc, quit: quit}, ctx: ctx}
	select {
	case <-ready:
	case <-cc.Closed(): // Read reports why
	case <-ctx.Done():
	}
	// A watch never ranged over must not read for ever: its read ends
	// when nothing can range over it any more. The read itself holds only
	// the queue, not l.
	runtime.AddCleanup(l, func(e *ender) { go e.stop() }, l.end)
	return l, nil
}

// Read ranges over the watch: it gives each message to each and calls
// marker once, after the initial values (at once when there were none).
// Either returning false ends the watch with a nil error; otherwise Read
// returns the read's terminal error, or ctx's cause once ctx ended. A
// Live is read once; when Read returns, the read has ended and its
// server-side consumer is deleted.
func (l *Live) Read(each func(m *jsapi.Msg, md jsapi.Metadata) bool, marker func() bool) error {
	defer l.end.stop()
	if l.in.done && !marker() {
		return nil
	}
	closed := l.end.cc.Closed()
	for {
		var it item
		select {
		case it = <-l.q:
		case <-closed:
			// The handler has returned for the last time: what it queued
			// is all there is.
			select {
			case it = <-l.q:
			default:
				if err := l.end.cc.Err(); err != nil {
					return err
				}
				return context.Cause(l.ctx)
			}
		}
		if it.reset {
			l.in.counting = false
			continue
		}
		md, err := it.m.Metadata()
		if err != nil {
			continue // ordered skips these already
		}
		if !each(it.m, md) {
			return nil
		}
		if l.in.after(md) && !marker() {
			return nil
		}
	}
}

// stop deletes the server-side consumer of a watch that ends before any
// read (best effort): nothing is left behind.
func stop(ctx context.Context, oc *ordered.Consumer) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	_ = oc.Delete(dctx)
}
