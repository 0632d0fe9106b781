package pubwin

import (
	"errors"
	"sync"
	"time"
	"unsafe"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

// retryable reports whether a reply's error asks for the same message to
// be sent again: jsapi.Publish retries the same two.
func retryable(err error) bool {
	return errors.Is(err, jsapi.ErrNoStreamResponse) || errors.Is(err, jsapi.ErrTooManyRequests)
}

// frame is a pending message kept for a retry: the subject and header
// strings are shared (strings are immutable), the fields slice and the data
// are the frame's own copies, so the caller may reuse its header and data
// as soon as Publish returns. Frames are pooled: a publish copies its data
// into a recycled buffer, allocating nothing once the pool is warm. A frame
// lives while its future is pending and is cleared when it returns to the
// pool.
type frame struct {
	subj  []byte       // a copy of the subject
	block []byte       // a copy of the header block
	hdr   proto.Header // reads block
	data  []byte
}

// maxPooledData: data buffers larger than this are left to the garbage
// collector rather than kept in the pool.
const maxPooledData = 64 << 10

var framePool = sync.Pool{New: func() any { return new(frame) }}

// newFrame copies a message for a retry: its subject, header and data are
// copied into the frame's own buffers (no allocation once the pool is
// warm), so that nothing of the caller's memory is kept — the caller may
// publish the fields of a borrowed message. h has been validated.
func newFrame(subject string, h *proto.Header, data []byte) *frame {
	fr := framePool.Get().(*frame)
	fr.subj = append(fr.subj[:0], subject...)
	fr.block = fr.block[:0]
	fr.hdr = proto.Header{}
	if h != nil && h.Len() > 0 {
		fr.block, _ = proto.AppendHeaderBlock(fr.block, h)
		fr.hdr = proto.HeaderFromBlock(fr.block)
	}
	fr.data = append(fr.data[:0], data...)
	return fr
}

// subject is the frame's subject, a view of its buffer.
func (fr *frame) subject() string {
	return unsafe.String(unsafe.SliceData(fr.subj), len(fr.subj))
}

// header is the frame's header, nil when it has none.
func (fr *frame) header() *proto.Header {
	if len(fr.block) == 0 {
		return nil
	}
	return &fr.hdr
}

// release clears the frame and returns it to the pool.
func (fr *frame) release() {
	fr.subj = fr.subj[:0]
	fr.block = fr.block[:0]
	fr.hdr = proto.Header{}
	clear(fr.data)
	fr.data = fr.data[:0]
	if cap(fr.data) > maxPooledData {
		fr.data = nil
	}
	framePool.Put(fr)
}

// retryLater schedules the retry of the pending message of tok after a
// reply failed it with err. It reports false when the message is not
// retried: it is no longer pending, the window is closed, its attempts are
// used up, or the retry could not be sent before the message's ack
// timeout. The caller then ends the future with err.
func (w *Window) retryLater(tok uint64, err error) bool {
	if w.o.retryAttempts == 0 || !retryable(err) {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	f := w.pending.get(tok)
	if f == nil || w.closed || f.fr == nil || int(f.attempt) >= w.o.retryAttempts {
		return false
	}
	wait := w.o.retryWait << f.attempt
	if time.Now().Add(wait).After(f.deadline) {
		return false
	}
	f.attempt++
	f.waiting = true
	if f.timer == nil {
		f.timer = time.AfterFunc(wait, func() { w.resend(f) })
	} else {
		f.timer.Reset(wait)
	}
	return true
}

// resend sends a waiting message again, on its timer's goroutine. It keeps
// the message's token, so its slot and its place in the window do not
// change. A message that left the window meanwhile (closed, failed by a
// disconnect, timed out) is not sent.
func (w *Window) resend(f *Future) {
	w.mu.Lock()
	if w.closed || !f.waiting || w.pending.get(f.token) != f {
		w.mu.Unlock()
		return
	}
	f.waiting = false
	// While sending, the frame stays with f even if f ends meanwhile;
	// doneSending then releases it.
	f.mu.Lock()
	f.sending++
	fr := f.fr
	f.mu.Unlock()
	w.mu.Unlock()
	w.count.retries.Add(1)
	err := w.send(fr.subject(), f.token, fr.header(), fr.data)
	f.doneSending()
	if err != nil {
		w.end(f.token, nil, err)
	}
}

// doneSending ends a resend, releasing the frame if the future ended
// while it was being sent. (The reply to a resend may ask for the next one
// before the sending goroutine gets here, so two can overlap.)
func (f *Future) doneSending() {
	f.mu.Lock()
	f.sending--
	fr := f.takeFrameLocked()
	f.mu.Unlock()
	if fr != nil {
		fr.release()
	}
}

// takeFrameLocked detaches f's frame, for release, once f is done and no
// resend is using it; otherwise it returns nil. f.mu is held.
func (f *Future) takeFrameLocked() *frame {
	if !f.done || f.sending != 0 {
		return nil
	}
	fr := f.fr
	f.fr = nil
	return fr
}

// stopRetryLocked cancels a scheduled retry of f, which has just left the
// window. w.mu is held.
func (f *Future) stopRetryLocked() {
	if f.timer != nil {
		f.timer.Stop()
		f.waiting = false
	}
}
