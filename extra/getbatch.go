package extra

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/directget"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

// HeaderUpToSequence, on the end-of-batch marker of a multi_last direct
// get, is the stream sequence the answer was computed up to.
const HeaderUpToSequence = "Nats-UpTo-Sequence"

// GetBatch fetches up to batch messages of stream with one Direct Get
// request (server 2.11+, stream with AllowDirect) and yields them in
// stream order, as *jsapi.StoredMsg with NumPending and LastSequence set.
// It starts at the first message unless StartSeq or StartTime says
// otherwise; NextBySubject filters by subject (wildcards allowed) and
// MaxBytes caps the bytes the server sends. A yielded message and the
// memory it views (its reply) belong to the caller: nothing reuses them.
//
// The iterator is single-use: it sends the request when ranged over and
// ends at the server's end-of-batch marker. An error ends it: ErrNoMessages
// when nothing matched, a *jsapi.StatusError for another status (503: no such
// stream, or no direct get), ErrBatchUnsupported from a server before
// 2.11 (with a *jsapi.FeatureError, before anything is sent, when the
// server's level is known), jsapi.ErrBadResponse for a reply that cannot
// be understood, or the context's error. Invalid arguments are yielded as
// conn.ErrInvalidOption before anything is sent. Without a deadline on
// ctx, each message must arrive within jsapi.DefaultTimeout. Breaking out
// of the loop, or cancelling ctx, ends the iteration at once and removes
// the reply subscription.
func GetBatch(ctx context.Context, js *jsapi.JS, stream string, batch int, opts ...GetBatchOpt) iter.Seq2[*jsapi.StoredMsg, error] {
	r := &getRequest{js: js, stream: stream}
	r.err = r.batchBody(batch, opts)
	r.slab = min(max(batch, 1), 128)
	return r.seq(ctx)
}

// GetLastMsgsFor fetches, with one Direct Get request, the last message of
// each subject matching subjects (wildcards allowed; at most
// MaxLastMsgsSubjects may match, else ErrTooManyResults). UpToSeq or
// UpToTime fetch the last messages at or before a point instead of the
// latest; MaxMsgs caps how many are returned, PageBytes the size of each
// reply (a page, below). Messages are yielded in
// stream order; the iterator behaves as GetBatch's. It fails with
// ErrNoSubjects for no subject and ErrNoMessages when none matched.
//
// The server ends a reply early at PageBytes or its max_pending limit (64
// MiB by default) and says how many matches remain; the iterator then asks for
// the next page itself, from after the last message and up to the same
// snapshot sequence (Nats-UpTo-Sequence), so that the pages together are
// the answer as of the first request: a message stored meanwhile is not
// mixed in. A message's LastSequence stays the previous one yielded
// across pages.
func GetLastMsgsFor(ctx context.Context, js *jsapi.JS, stream string, subjects []string, opts ...GetLastMsgsOpt) iter.Seq2[*jsapi.StoredMsg, error] {
	r := &getRequest{js: js, stream: stream, multi: true}
	r.err = r.lastBody(subjects, opts)
	r.slab = min(max(len(subjects), 1), 128)
	return r.seq(ctx)
}

// getRequest is one batch or multi-last direct get.
type getRequest struct {
	js     *jsapi.JS
	stream string
	multi  bool
	body   []byte
	// multi_last paging: the request up to the subject list and
	// max_bytes, and MaxMsgs (0: none).
	head  []byte
	limit int
	slab  int
	err   error // a validation failure, yielded before any I/O
}

func (r *getRequest) common() error {
	if r.js == nil {
		return fmt.Errorf("%w: nil JetStream", conn.ErrInvalidOption)
	}
	if err := jsapi.ValidateName(r.stream); err != nil {
		return fmt.Errorf("%w: %w", conn.ErrInvalidOption, err)
	}
	return nil
}

// batchBody validates GetBatch's arguments and encodes its request.
func (r *getRequest) batchBody(batch int, opts []GetBatchOpt) error {
	if err := r.common(); err != nil {
		return err
	}
	if batch < 1 {
		return fmt.Errorf("%w: batch %d", conn.ErrInvalidOption, batch)
	}
	var (
		seq      uint64
		start    time.Time
		subject  string
		maxBytes int
		hasStart bool
	)
	for _, wrapped := range opts {
		switch o := wrapped.o; o.kind {
		case getStartSeq:
			if o.n == 0 {
				return fmt.Errorf("%w: StartSeq 0", conn.ErrInvalidOption)
			}
			seq = o.n
		case getStartTime:
			if o.t.IsZero() {
				return fmt.Errorf("%w: zero StartTime", conn.ErrInvalidOption)
			}
			start, hasStart = o.t, true
		case getNextBySubject:
			if err := proto.ValidateSubscribeSubject(o.s); err != nil {
				return fmt.Errorf("%w: NextBySubject %q", conn.ErrInvalidOption, o.s)
			}
			subject = o.s
		case getMaxBytes:
			if o.i < 1 {
				return fmt.Errorf("%w: MaxBytes %d", conn.ErrInvalidOption, o.i)
			}
			maxBytes = o.i
		default:
			return fmt.Errorf("%w: zero GetBatchOpt", conn.ErrInvalidOption)
		}
	}
	if seq > 0 && hasStart {
		return fmt.Errorf("%w: StartSeq and StartTime are mutually exclusive", conn.ErrInvalidOption)
	}
	if seq == 0 && !hasStart {
		seq = 1 // the server needs an explicit start
	}
	b := append(make([]byte, 0, 96), `{"batch":`...)
	b = strconv.AppendInt(b, int64(batch), 10)
	if hasStart {
		b = append(b, `,"start_time":"`...)
		b = start.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	} else {
		b = append(b, `,"seq":`...)
		b = strconv.AppendUint(b, seq, 10)
	}
	if subject != "" {
		b = append(b, `,"next_by_subj":`...)
		b = appendJSONString(b, subject)
	}
	if maxBytes > 0 {
		b = append(b, `,"max_bytes":`...)
		b = strconv.AppendInt(b, int64(maxBytes), 10)
	}
	r.body = append(b, '}')
	return nil
}

// lastBody validates GetLastMsgsFor's arguments and encodes its request.
func (r *getRequest) lastBody(subjects []string, opts []GetLastMsgsOpt) error {
	if err := r.common(); err != nil {
		return err
	}
	if len(subjects) == 0 {
		return ErrNoSubjects
	}
	if len(subjects) > MaxLastMsgsSubjects {
		return fmt.Errorf("%w: %d subjects, at most %d", errTooManySubjects, len(subjects), MaxLastMsgsSubjects)
	}
	var (
		limit    int
		maxBytes int
		upToSeq  uint64
		upTo     time.Time
		hasTime  bool
	)
	for _, wrapped := range opts {
		switch o := wrapped.o; o.kind {
		case getMaxMsgs:
			if o.i < 1 {
				return fmt.Errorf("%w: MaxMsgs %d", conn.ErrInvalidOption, o.i)
			}
			limit = o.i
		case getMaxBytes:
			if o.i < 1 {
				return fmt.Errorf("%w: PageBytes %d", conn.ErrInvalidOption, o.i)
			}
			maxBytes = o.i
		case getUpToSeq:
			if o.n == 0 {
				return fmt.Errorf("%w: UpToSeq 0", conn.ErrInvalidOption)
			}
			upToSeq = o.n
		case getUpToTime:
			if o.t.IsZero() {
				return fmt.Errorf("%w: zero UpToTime", conn.ErrInvalidOption)
			}
			upTo, hasTime = o.t, true
		default:
			return fmt.Errorf("%w: zero GetLastMsgsOpt", conn.ErrInvalidOption)
		}
	}
	if upToSeq > 0 && hasTime {
		return fmt.Errorf("%w: UpToSeq and UpToTime are mutually exclusive", conn.ErrInvalidOption)
	}
	n := 32
	for _, s := range subjects {
		if err := proto.ValidateSubscribeSubject(s); err != nil {
			return fmt.Errorf("%w: subject %q", conn.ErrInvalidOption, s)
		}
		n += len(s) + 3
	}
	b := append(make([]byte, 0, n+64), `{"multi_last":[`...)
	for i, s := range subjects {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	b = append(b, ']')
	if maxBytes > 0 {
		b = append(b, `,"max_bytes":`...)
		b = strconv.AppendInt(b, int64(maxBytes), 10)
	}
	r.head, r.limit = b, limit
	b = append(make([]byte, 0, len(b)+64), b...)
	if limit > 0 {
		b = append(b, `,"batch":`...)
		b = strconv.AppendInt(b, int64(limit), 10)
	}
	if upToSeq > 0 {
		b = append(b, `,"up_to_seq":`...)
		b = strconv.AppendUint(b, upToSeq, 10)
	}
	if hasTime {
		b = append(b, `,"up_to_time":"`...)
		b = upTo.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	}
	r.body = append(b, '}')
	return nil
}

// errGetTimeout: no reply within the default timeout; it matches
// conn.ErrTimeout and context.DeadlineExceeded.
var errGetTimeout = &matchErr{"extra: batch direct get: timed out waiting for the server",
	[]error{conn.ErrTimeout, context.DeadlineExceeded}}

// seq returns the single-use iterator of the request.
func (r *getRequest) seq(ctx context.Context) iter.Seq2[*jsapi.StoredMsg, error] {
	var used atomic.Bool
	return func(yield func(*jsapi.StoredMsg, error) bool) {
		if !used.CompareAndSwap(false, true) {
			yield(nil, ErrIteratorUsed)
			return
		}
		if ctx == nil {
			yield(nil, conn.ErrNilContext)
			return
		}
		if r.err != nil {
			yield(nil, r.err)
			return
		}
		if err := r.js.Check(ctx, jsapi.FeatureBatchDirectGet); err != nil {
			yield(nil, fmt.Errorf("%w: %w", ErrBatchUnsupported, err))
			return
		}
		if err := r.run(ctx, yield); err != nil {
			yield(nil, err)
		}
	}
}

// run sends the request and yields the replies until the end-of-batch
// marker. It returns the error that ended it, nil at the end or when the
// consumer stopped.
func (r *getRequest) run(ctx context.Context, yield func(*jsapi.StoredMsg, error) bool) error {
	nc := r.js.Conn()
	inbox := nc.NewInbox()
	sub, err := nc.Subscribe(inbox)
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	if err := nc.PublishMsg(r.js.Prefix()+"DIRECT.GET."+r.stream, inbox, nil, r.body); err != nil {
		return err
	}

	wctx := ctx
	var idle *time.Timer
	const idleTimeout = jsapi.DefaultTimeout
	if _, ok := ctx.Deadline(); !ok {
		c, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		idle = time.AfterFunc(idleTimeout, func() { cancel(errGetTimeout) })
		defer idle.Stop()
		wctx = c
	}

	var (
		slab      []jsapi.StoredMsg
		n         int
		batch     []*conn.Msg
		rep       directget.Reply // the header of the reply at hand
		last      uint64          // sequence of the last message yielded
		pageStart bool            // the next message starts a later page
	)
	for {
		if ctx.Err() != nil {
			return context.Cause(ctx) // even with replies queued
		}
		// Everything queued at once: one lock and one idle-timer reset per
		// batch of replies, not per reply.
		batch, err = sub.NextBatch(wctx, batch)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, errGetTimeout) {
				return fmt.Errorf("%w: %w", errGetTimeout, err)
			}
			return err
		}
		if idle != nil {
			idle.Reset(idleTimeout)
		}
		for _, m := range batch {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			rep.Parse(m.Header.Block())
			if code, desc := rep.Status, rep.Description; code != 0 {
				switch {
				case code == 204 && r.multi:
					more, err := r.nextPage(nc, inbox, &m.Header, n)
					if err != nil || !more {
						return err
					}
					pageStart = true
					continue
				case code == 204:
					return nil // end of batch
				case code == 408 && desc == "Empty Request":
					// A server before 2.11 ignores multi_last and
					// start_time; every request here names one of them
					// or a sequence, so a 2.11+ server never finds it
					// empty.
					return fmt.Errorf("%w: request seen as empty", ErrBatchUnsupported)
				}
				return statusError(code, desc)
			}
			if len(slab) == 0 {
				slab = make([]jsapi.StoredMsg, r.slab)
			}
			sm := &slab[0]
			slab = slab[1:]
			batchFields, err := parseStored(m, &rep, sm)
			if err != nil {
				return err
			}
			if n == 0 && !batchFields {
				return ErrBatchUnsupported
			}
			if pageStart {
				// The server counts from the start of its page.
				sm.LastSequence, pageStart = last, false
			}
			last = sm.Sequence
			n++
			if !yield(sm, nil) {
				return nil
			}
		}
	}
}

// nextPage reads a multi_last end-of-batch marker eob, after n messages
// yielded in all: when the server reports more matches and MaxMsgs allows,
// it requests the next page on inbox and reports true.
func (r *getRequest) nextPage(nc *conn.Conn, inbox string, eob *proto.Header, n int) (bool, error) {
	pending, ok := proto.ParseUint(eob.Get(jsapi.HeaderNumPending))
	if !ok || pending == 0 || (r.limit > 0 && n >= r.limit) {
		return false, nil
	}
	lastSeq, ok1 := proto.ParseUint(eob.Get(jsapi.HeaderLastSequence))
	upTo, ok2 := proto.ParseUint(eob.Get(HeaderUpToSequence))
	if !ok1 || !ok2 || lastSeq == 0 || upTo < lastSeq {
		return false, fmt.Errorf("%w: multi_last end of batch with %d pending but no usable Nats-Last-Sequence / Nats-UpTo-Sequence", jsapi.ErrBadResponse, pending)
	}
	b := append(make([]byte, 0, len(r.head)+64), r.head...)
	if r.limit > 0 {
		b = append(b, `,"batch":`...)
		b = strconv.AppendInt(b, int64(r.limit-n), 10)
	}
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, lastSeq+1, 10)
	b = append(b, `,"up_to_seq":`...)
	b = strconv.AppendUint(b, upTo, 10)
	b = append(b, '}')
	if err := nc.PublishMsg(r.js.Prefix()+"DIRECT.GET."+r.stream, inbox, nil, b); err != nil {
		return false, err
	}
	return true, nil
}

// parseStored fills sm from m, a direct get reply without status, and r,
// its header block as Reply.Parse read it. It reports whether the
// batch fields (Nats-Num-Pending) were present. The block is cut in place
// before the fields the server appended (the message belongs to the
// receiver), so that sm.Header holds the stored headers only, without
// allocating; the subject is a view of the reply too. It fails with an
// error matching jsapi.ErrBadResponse.
func parseStored(m *conn.Msg, r *directget.Reply, sm *jsapi.StoredMsg) (bool, error) {
	dm, err := r.Batch()
	if err != nil {
		return false, fmt.Errorf("%w: %v", jsapi.ErrBadResponse, err)
	}
	*sm = jsapi.StoredMsg{Subject: dm.Subject, Sequence: dm.Sequence, Header: dm.Header, Data: m.Data, Time: dm.Time,
		NumPending: dm.NumPending, LastSequence: dm.LastSequence}
	return dm.HasPending, nil
}

// appendJSONString appends s as a JSON string. s is a validated subject:
// no control characters, valid UTF-8; only quotes and backslashes need
// escaping.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}
