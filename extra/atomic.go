package extra

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nuid"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

// Headers of an atomic batch; the publisher sets them and drops any the
// caller supplies.
const (
	HeaderBatchID     = "Nats-Batch-Id"
	HeaderBatchSeq    = "Nats-Batch-Sequence"
	HeaderBatchCommit = "Nats-Batch-Commit"
	batchHeaderPrefix = "Nats-Batch-"
)

// BatchMsg is one message of PublishBatch.
type BatchMsg struct {
	Subject string
	// Header holds custom headers (may be nil); Nats-Batch-* are managed by
	// the publisher.
	Header *proto.Header
	Data   []byte
	// Opts are per-message publish options: a message ID (unique within
	// the batch), expectations, a TTL, headers.
	Opts []jsapi.PubOpt
}

// BatchAck is the acknowledgement of a committed atomic batch.
type BatchAck struct {
	// Stream stored the batch; Sequence is the stream sequence of its last
	// message (the others precede it).
	Stream   string
	Sequence uint64
	// BatchID and BatchSize name the batch and count its messages.
	BatchID   string
	BatchSize int
	// Domain is the JetStream domain, "" when none.
	Domain string
	// Value is a counter stream's total after the batch when the server
	// reports it ("" otherwise; server 2.15.2 does not for batches).
	Value string
}

// BatchPublisher publishes one atomic batch (server 2.12+, stream with
// AllowAtomicPublish): messages added with Add are staged by the server
// and stored together when Commit stores the last one, or not at all.
//
// Every argument is validated before anything is sent; a validation
// failure leaves the publisher usable. A failure after I/O began (an
// error or missing acknowledgement, a lost connection) closes it: the
// server abandons the staged messages after its idle timeout (10 s) and
// stores none of them.
//
// A BatchPublisher is for one goroutine at a time. It runs no goroutine;
// while a batch is open it keeps a disconnect hook on the connection, which
// Commit, Discard and any failure remove.
type BatchPublisher struct {
	js  *jsapi.JS
	nc  *conn.Conn
	set atomicSettings
	id  string

	seq    int
	last   string // subject of the last message sent, for CommitEOB
	closed bool

	hdr    proto.Header
	msgIDs map[string]struct{}

	lost atomic.Pointer[lostError]
	undo func()
}

// NewBatchPublisher returns a publisher for one atomic batch through js.
// It does not contact the server; options are validated at once.
func NewBatchPublisher(js *jsapi.JS, opts ...AtomicOpt) (_ *BatchPublisher, err error) {
	defer func() { err = inFamily(ErrBatchPublish, err) }()
	if js == nil {
		return nil, fmt.Errorf("%w: nil JetStream", conn.ErrInvalidOption)
	}
	set, err := atomicOptions(opts)
	if err != nil {
		return nil, err
	}
	p := &BatchPublisher{js: js, nc: js.Conn(), set: set, id: set.id}
	if p.id == "" {
		p.id = nuid.Next()
	}
	return p, nil
}

// BatchID returns the batch's ID.
func (p *BatchPublisher) BatchID() string { return p.id }

// Size returns how many messages have been sent (the commit included).
func (p *BatchPublisher) Size() int { return p.seq }

// IsClosed reports whether the publisher was committed, discarded or failed.
func (p *BatchPublisher) IsClosed() bool { return p.closed }

// Add sends a message of the batch. opts are publish options for this
// message (jsapi.MsgID, jsapi.ExpectLastSeq on the first message only,
// jsapi.ExpectLastSubjectSeq, jsapi.TTL…); user headers go with AddMsg.
func (p *BatchPublisher) Add(ctx context.Context, subject string, data []byte, opts ...jsapi.PubOpt) (err error) {
	defer func() { err = inFamily(ErrBatchPublish, err) }()
	_, err = p.send(ctx, subject, nil, data, opts, commitNone)
	return err
}

// AddMsg is Add with custom headers h (not modified; may be nil).
func (p *BatchPublisher) AddMsg(ctx context.Context, subject string, h *proto.Header, data []byte, opts ...jsapi.PubOpt) (err error) {
	defer func() { err = inFamily(ErrBatchPublish, err) }()
	_, err = p.send(ctx, subject, h, data, opts, commitNone)
	return err
}

// Commit sends the last message, which commits the batch, and returns the
// stream's acknowledgement, checked to name this batch and count every
// message (ErrInvalidBatchAck otherwise). The publisher is closed
// afterwards, whatever the outcome (except a validation failure). A commit
// whose acknowledgement does not come in time (ErrAckTimeout) or is lost
// with the connection may or may not have been applied.
func (p *BatchPublisher) Commit(ctx context.Context, subject string, data []byte, opts ...jsapi.PubOpt) (_ *BatchAck, err error) {
	defer func() { err = inFamily(ErrBatchPublish, err) }()
	return p.send(ctx, subject, nil, data, opts, commitLast)
}

// CommitMsg is Commit with custom headers h (may be nil).
func (p *BatchPublisher) CommitMsg(ctx context.Context, subject string, h *proto.Header, data []byte, opts ...jsapi.PubOpt) (_ *BatchAck, err error) {
	defer func() { err = inFamily(ErrBatchPublish, err) }()
	return p.send(ctx, subject, h, data, opts, commitLast)
}

// CommitEOB commits the messages added so far with an end-of-batch marker:
// an empty message, sent on the subject of the last one added, that the
// server (2.14+, API level 4) does not store. Use it when the batch's end
// is known only after its last message went out (a stream of input that
// ends). The acknowledgement counts the messages added, not the marker,
// and the marker does not count toward MaxBatchSize: a batch already at
// the limit can still be committed this way. At least one message must have been added (ErrEmptyBatch otherwise, and
// the publisher stays open). An older server rejects the marker with an
// *jsapi.APIError (invalid commit, err_code 10200) and stores nothing.
// The publisher is closed afterwards, as by Commit.
func (p *BatchPublisher) CommitEOB(ctx context.Context) (_ *BatchAck, err error) {
	defer func() { err = inFamily(ErrBatchPublish, err) }()
	if p.seq == 0 && !p.closed {
		return nil, ErrEmptyBatch
	}
	return p.send(ctx, p.last, nil, nil, nil, commitEOB)
}

// How a message of an atomic batch commits it.
const (
	commitNone = iota // staged
	commitLast        // stored, and commits the batch ("1")
	commitEOB         // not stored, commits what came before ("eob")
)

// Discard closes the publisher without committing: the server stores none
// of the messages sent. It is safe to call more than once.
func (p *BatchPublisher) Discard() { p.close() }

func (p *BatchPublisher) close() {
	p.closed = true
	p.unhook()
}

// unhook removes the disconnect hook. Before the first message went out
// a disconnect does not matter: it is forgotten.
func (p *BatchPublisher) unhook() {
	if p.undo != nil {
		p.undo()
		p.undo = nil
	}
	if p.seq == 0 {
		p.lost.Store(nil)
	}
}

// fail closes the publisher and returns err.
func (p *BatchPublisher) fail(err error) error {
	p.close()
	return err
}

// request sends message seq (headers in p.hdr) and waits for its reply. A
// first message that finds no stream is sent again as RetryStart says:
// nobody received it, so nothing was stored.
func (p *BatchPublisher) request(ctx context.Context, subject string, data []byte, seq int) (*conn.Msg, error) {
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, p.set.timeout)
		m, err := p.nc.RequestMsg(actx, subject, &p.hdr, data)
		cancel()
		if seq != 1 || attempt >= p.set.retry.attempts || !errors.Is(err, conn.ErrNoResponders) {
			return m, err
		}
		if werr := p.set.retry.pause(ctx, attempt); werr != nil {
			return nil, err
		}
	}
}

// send validates and sends message seq+1.
func (p *BatchPublisher) send(ctx context.Context, subject string, h *proto.Header, data []byte, opts []jsapi.PubOpt, mode int) (*BatchAck, error) {
	if ctx == nil {
		return nil, conn.ErrNilContext
	}
	if p.closed {
		return nil, ErrBatchClosed
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx) // nothing sent; the publisher goes on
	}
	seq := p.seq + 1
	size := seq // messages the batch holds with this one
	if mode == commitEOB {
		size-- // the server does not count the marker
	}
	if seq == 1 {
		if err := p.js.Check(ctx, jsapi.FeatureAtomicBatch); err != nil {
			return nil, err // nothing sent; the publisher goes on
		}
	}
	if mode == commitEOB {
		if err := p.js.Check(ctx, jsapi.FeatureBatchCommitEOB); err != nil {
			return nil, err // the marker is not sent; the publisher goes on
		}
	}
	msgID, err := p.prepare(ctx, seq, size, subject, h, opts)
	if err != nil {
		return nil, err
	}
	p.hdr.Set(HeaderBatchID, p.id)
	p.hdr.Set(HeaderBatchSeq, seqString(seq))
	commit := mode != commitNone
	switch mode {
	case commitLast:
		p.hdr.Set(HeaderBatchCommit, "1")
	case commitEOB:
		p.hdr.Set(HeaderBatchCommit, "eob")
	}
	defer p.hdr.Reset()

	if p.undo == nil {
		p.undo = p.nc.OnDisconnect(func(reason error) {
			p.lost.CompareAndSwap(nil, &lostError{batch: p.id, reason: reason})
		})
	}
	if l := p.lost.Load(); l != nil {
		return nil, p.fail(l)
	}
	if p.seq > 0 && !p.nc.IsConnected() {
		// The link is gone; the disconnect hooks run in no set order, so
		// ours may not have run yet. A message now would wait in the
		// reconnect buffer and reach the server after the cut.
		return nil, p.fail(&lostError{batch: p.id, reason: conn.ErrDisconnected})
	}

	wantAck := commit || (seq == 1 && p.set.ackFirst) || (p.set.ackEvery > 0 && seq%p.set.ackEvery == 0)
	if !wantAck {
		if err := p.nc.PublishMsg(subject, "", &p.hdr, data); err != nil {
			// Nothing was queued: the batch is intact unless the
			// connection is gone for good.
			if errors.Is(err, conn.ErrClosed) || errors.Is(err, conn.ErrDraining) {
				return nil, p.fail(err)
			}
			if seq == 1 {
				p.unhook()
			}
			return nil, err
		}
		p.sent(seq, subject, msgID)
		return nil, nil
	}

	m, err := p.request(ctx, subject, data, seq)
	if err != nil {
		if errors.Is(err, conn.ErrMaxPayload) || errors.Is(err, conn.ErrBadHeader) || errors.Is(err, conn.ErrBadSubject) ||
			errors.Is(err, conn.ErrHeadersUnsupported) || errors.Is(err, conn.ErrReconnectBuffer) {
			// Rejected before anything was queued.
			if seq == 1 {
				p.unhook()
			}
			return nil, err
		}
		what := "message " + strconv.Itoa(seq)
		switch {
		case errors.Is(err, conn.ErrNoResponders):
			err = fmt.Errorf("extra: atomic batch %s: %w: %w", p.id, jsapi.ErrNoStreamResponse, err)
		case errors.Is(err, conn.ErrTimeout) && ctx.Err() == nil:
			err = &ackTimeoutError{what: "atomic batch " + p.id + " " + what}
		default:
			err = fmt.Errorf("extra: atomic batch %s %s: %w", p.id, what, err)
		}
		return nil, p.fail(err)
	}
	p.sent(seq, subject, msgID)
	if !commit {
		if len(m.Data) == 0 {
			if code := m.Status(); code != 0 {
				return nil, p.fail(fmt.Errorf("%w: atomic batch %s message %d: status %d", jsapi.ErrBadResponse, p.id, seq, code))
			}
			return nil, nil
		}
		var ack jsapi.PubAck
		if err := jsapi.ParsePubAck(m.Data, &ack); err != nil {
			return nil, p.fail(batchErr(p.id, seq, err))
		}
		return nil, p.fail(fmt.Errorf("%w: atomic batch %s message %d: unexpected PubAck", jsapi.ErrBadResponse, p.id, seq))
	}
	p.close()
	if len(m.Data) == 0 && m.Status() == 503 {
		return nil, fmt.Errorf("extra: atomic batch %s commit: %w", p.id, jsapi.ErrNoStreamResponse)
	}
	var ack jsapi.PubAck
	if err := jsapi.ParsePubAck(m.Data, &ack); err != nil {
		return nil, batchErr(p.id, seq, err)
	}
	stored := seq
	if mode == commitEOB {
		stored-- // the marker
	}
	if ack.BatchID != p.id || ack.BatchSize != stored {
		return nil, fmt.Errorf("%w: commit of batch %s with %d messages acknowledged as batch %q with %d",
			ErrInvalidBatchAck, p.id, stored, ack.BatchID, ack.BatchSize)
	}
	return &BatchAck{Stream: ack.Stream, Sequence: ack.Sequence, BatchID: ack.BatchID, BatchSize: ack.BatchSize,
		Domain: ack.Domain, Value: ack.Value}, nil
}

// batchErr wraps what ParsePubAck returned for a reply (an error reply's
// *jsapi.APIError, or jsapi.ErrBadResponse) with the batch and message it
// answered. A batch the server finds too large also matches
// ErrBatchTooLarge, as the local check does.
func batchErr(id string, seq int, err error) error {
	if errors.Is(err, jsapi.ErrAtomicTooLarge) {
		return fmt.Errorf("%w: atomic batch %s message %d: %w", ErrBatchTooLarge, id, seq, err)
	}
	return fmt.Errorf("extra: atomic batch %s message %d: %w", id, seq, err)
}

// sent records that message seq went out on subject.
func (p *BatchPublisher) sent(seq int, subject, msgID string) {
	p.seq, p.last = seq, subject
	if msgID != "" {
		if p.msgIDs == nil {
			p.msgIDs = make(map[string]struct{})
		}
		p.msgIDs[msgID] = struct{}{}
	}
}

// prepare validates message seq, after which the batch holds size
// messages, and builds its headers (without the batch headers) into p.hdr.
// It returns the message ID, if any. On error p.hdr is reset.
func (p *BatchPublisher) prepare(ctx context.Context, seq, size int, subject string, h *proto.Header, opts []jsapi.PubOpt) (msgID string, err error) {
	p.hdr.Reset()
	msgID, err = buildAtomic(ctx, p.js, &p.hdr, seq, size, p.set.max, subject, h, opts, p.msgIDs)
	if err != nil {
		p.hdr.Reset()
	}
	return msgID, err
}

// buildAtomic validates message seq of an atomic batch, after which the
// batch holds size messages (at most limit), and writes its headers (custom
// ones, then those of opts) into dst. ids holds the message IDs already
// used in the batch.
func buildAtomic(ctx context.Context, js *jsapi.JS, dst *proto.Header, seq, size, limit int, subject string, h *proto.Header, opts []jsapi.PubOpt, ids map[string]struct{}) (string, error) {
	if err := proto.ValidatePublishSubject(subject); err != nil {
		return "", fmt.Errorf("%w: message %d subject %q", err, seq, subject)
	}
	if size > limit {
		return "", fmt.Errorf("%w: message %d exceeds %d", errTooLarge, seq, limit)
	}
	if h != nil {
		for k, v := range h.All() {
			if !strings.HasPrefix(k, batchHeaderPrefix) {
				dst.Add(k, v)
			}
		}
	}
	if len(opts) > 0 {
		if err := js.ApplyPubOpts(ctx, dst, opts...); err != nil {
			return "", err
		}
		dst.Del(HeaderBatchID)
		dst.Del(HeaderBatchSeq)
		dst.Del(HeaderBatchCommit)
	}
	if err := dst.Validate(); err != nil {
		return "", fmt.Errorf("%w: message %d", err, seq)
	}
	if _, ok := dst.Lookup(jsapi.HeaderExpectedLastMsgID); ok {
		return "", fmt.Errorf("%w: %s", errUnsupportedHeader, jsapi.HeaderExpectedLastMsgID)
	}
	if _, ok := dst.Lookup(jsapi.HeaderExpectedLastSeq); ok && seq > 1 {
		return "", fmt.Errorf("%w: %s on message %d (first message only)", errUnsupportedHeader, jsapi.HeaderExpectedLastSeq, seq)
	}
	id, _ := dst.Lookup(jsapi.HeaderMsgID)
	if id != "" {
		if _, dup := ids[id]; dup {
			return "", fmt.Errorf("%w: %q on message %d", errDuplicateMsgID, id, seq)
		}
	}
	return id, nil
}

// PublishBatch publishes msgs as one atomic batch: every message is
// validated first (at most MaxBatchSize, default MaxAtomicBatch; unique
// message IDs; supported headers), then all are sent, the last one
// committing the batch. It fails with ErrEmptyBatch for no message.
func PublishBatch(ctx context.Context, js *jsapi.JS, msgs []BatchMsg, opts ...AtomicOpt) (_ *BatchAck, err error) {
	defer func() { err = inFamily(ErrBatchPublish, err) }()
	if ctx == nil {
		return nil, conn.ErrNilContext
	}
	if len(msgs) == 0 {
		return nil, ErrEmptyBatch
	}
	p, err := NewBatchPublisher(js, opts...)
	if err != nil {
		return nil, err
	}
	if len(msgs) > p.set.max {
		return nil, fmt.Errorf("%w: %d messages, at most %d", errTooLarge, len(msgs), p.set.max)
	}
	// Validate everything before the first byte is sent.
	if err := js.Check(ctx, jsapi.FeatureAtomicBatch); err != nil {
		return nil, err
	}
	var ids map[string]struct{}
	for i := range msgs {
		m := &msgs[i]
		id, err := buildAtomic(ctx, js, &p.hdr, i+1, i+1, p.set.max, m.Subject, m.Header, m.Opts, ids)
		p.hdr.Reset()
		if err != nil {
			return nil, err
		}
		if id != "" {
			if ids == nil {
				ids = make(map[string]struct{})
			}
			ids[id] = struct{}{}
		}
	}
	for i := range msgs[:len(msgs)-1] {
		m := &msgs[i]
		if err := p.AddMsg(ctx, m.Subject, m.Header, m.Data, m.Opts...); err != nil {
			p.Discard()
			return nil, err
		}
	}
	last := &msgs[len(msgs)-1]
	return p.CommitMsg(ctx, last.Subject, last.Header, last.Data, last.Opts...)
}

// PublishBatchSeq is PublishBatch over an iterator. It holds back one
// message so that the last one carries the commit; no extra message is
// added. Messages are validated as they come: a failure discards the batch
// (nothing is stored).
func PublishBatchSeq(ctx context.Context, js *jsapi.JS, msgs iter.Seq[BatchMsg], opts ...AtomicOpt) (_ *BatchAck, err error) {
	defer func() { err = inFamily(ErrBatchPublish, err) }()
	if ctx == nil {
		return nil, conn.ErrNilContext
	}
	p, err := NewBatchPublisher(js, opts...)
	if err != nil {
		return nil, err
	}
	var prev BatchMsg
	have := false
	for m := range msgs {
		if have {
			if err := p.AddMsg(ctx, prev.Subject, prev.Header, prev.Data, prev.Opts...); err != nil {
				p.Discard()
				return nil, err
			}
		}
		prev, have = m, true
	}
	if !have {
		return nil, ErrEmptyBatch
	}
	ack, err := p.CommitMsg(ctx, prev.Subject, prev.Header, prev.Data, prev.Opts...)
	if err != nil {
		p.Discard()
	}
	return ack, err
}

// seqStrings holds the decimal strings of atomic batch sequences, so that
// numbering a message allocates nothing.
var seqStrings = sync.OnceValue(func() []string {
	s := make([]string, MaxAtomicBatch+2)
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
})

func seqString(n int) string {
	if t := seqStrings(); n < len(t) {
		return t[n]
	}
	return strconv.Itoa(n)
}
