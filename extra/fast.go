package extra

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

// Fast-batch operations, the next to last token of the reply subject.
const (
	opStart  = '0'
	opAppend = '1'
	opCommit = '2'
	opEOB    = '3'
	opPing   = '4'
)

// fastSuffix ends every fast-batch reply subject.
const fastSuffix = ".$FI"

// FastAck is the result of FastPublisher.Add: the message's batch sequence
// and the highest batch sequence the server had acknowledged as stored
// when Add returned.
type FastAck struct {
	BatchSeq uint64
	AckSeq   uint64
}

// FastPublisher publishes one non-atomic fast-ingest batch (server 2.14+,
// stream with AllowBatchPublish): every message is stored as it arrives;
// the server paces the publisher with flow acknowledgements.
//
// All control travels in the reply subject of each message,
// "<inbox>.<flow>.<gap mode>.<batch seq>.<op>.$FI", and every reply comes
// back on one wildcard subscription, "<inbox>.>", created on first use;
// the batch ID is the inbox's last token. Add waits when the messages sent
// run MaxOutstandingAcks flow intervals ahead of the last acknowledgement.
// When the server stays silent for PingInterval while the publisher waits,
// it pings (an unstored message repeating the highest batch sequence sent)
// and the server repeats its last flow acknowledgement: a lost
// acknowledgement is recovered, and a pending commit shows it is alive.
// The server does not repeat a lost final acknowledgement; a commit whose
// acknowledgement was lost fails with jsapi.ErrBatchUnknownID (the server
// forgot the batch) or ErrAckTimeout.
//
// A FastPublisher owns mutable protocol state: use it from one goroutine
// at a time, and create one per concurrent batch. It runs no goroutine.
// End it with Commit, Close or Abort, which remove the subscription; any
// failure does too.
type FastPublisher struct {
	js  *jsapi.JS
	nc  *conn.Conn
	set fastSettings

	inbox string
	id    string
	sub   *conn.Subscription
	reply []byte // "<inbox>.<flow>.<gap>." and room for the rest
	plen  int

	seq     uint64 // highest data message sent
	size    int
	flow    uint64
	lastAck uint64
	started bool
	subject string // last subject published, for pings and the EOB

	closed     bool
	committing bool
	done       bool          // a terminal reply arrived
	final      *jsapi.PubAck // the terminal ack
	term       error         // the terminal failure
	pend       error         // a failure that ended the batch, awaiting its terminal ack
	reported   error         // the last failure reported to OnError (gap mode ok)

	hdr    proto.Header
	polled context.Context // already cancelled: polls the subscription
	pings  uint64
}

var cancelledCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// NewFastPublisher returns a fast-ingest publisher for one batch through
// js. It does not contact the server; options are validated at once.
func NewFastPublisher(js *jsapi.JS, opts ...FastOpt) (_ *FastPublisher, err error) {
	defer func() { err = inFamily(ErrFastPublish, err) }()
	if js == nil {
		return nil, fmt.Errorf("%w: nil JetStream", conn.ErrInvalidOption)
	}
	set, err := fastOptions(opts)
	if err != nil {
		return nil, err
	}
	nc := js.Conn()
	inbox := nc.NewInbox()
	p := &FastPublisher{js: js, nc: nc, set: set, inbox: inbox, id: inbox[strings.LastIndexByte(inbox, '.')+1:],
		flow: uint64(set.flow), polled: cancelledCtx}
	r := make([]byte, 0, len(inbox)+48)
	r = append(r, inbox...)
	r = append(r, '.')
	r = strconv.AppendInt(r, int64(set.flow), 10)
	r = append(r, '.')
	r = append(r, set.gap.String()...)
	r = append(r, '.')
	p.reply, p.plen = r, len(r)
	return p, nil
}

// BatchID returns the batch's ID (the last token of the inbox).
func (p *FastPublisher) BatchID() string { return p.id }

// Inbox returns the publisher's inbox; replies arrive on "<inbox>.>".
func (p *FastPublisher) Inbox() string { return p.inbox }

// GapMode returns the publisher's gap mode.
func (p *FastPublisher) GapMode() GapMode { return p.set.gap }

// Size returns how many messages were handed to the connection (the
// commit included, the end-of-batch marker of Close not). A message the
// server rejects later is still counted.
func (p *FastPublisher) Size() int { return p.size }

// IsClosed reports whether the publisher was committed, closed, aborted or
// failed.
func (p *FastPublisher) IsClosed() bool { return p.closed }

// LastAckSeq returns the highest batch sequence the server acknowledged.
func (p *FastPublisher) LastAckSeq() uint64 { return p.lastAck }

// Flow returns the current flow: the server acknowledges every Flow()
// messages. It starts at the requested flow and follows the server.
func (p *FastPublisher) Flow() int { return int(p.flow) }

// Add stores a message; it returns once the message is handed to the
// connection (after waiting for the flow window, and for the first
// message for the server's first flow acknowledgement). opts are publish
// options for this message (expectations, TTL, message ID, headers).
func (p *FastPublisher) Add(ctx context.Context, subject string, data []byte, opts ...jsapi.PubOpt) (_ FastAck, err error) {
	defer func() { err = inFamily(ErrFastPublish, err) }()
	return p.AddMsg(ctx, subject, nil, data, opts...)
}

// AddMsg is Add with headers h (not modified; may be nil).
func (p *FastPublisher) AddMsg(ctx context.Context, subject string, h *proto.Header, data []byte, opts ...jsapi.PubOpt) (_ FastAck, err error) {
	defer func() { err = inFamily(ErrFastPublish, err) }()
	hdr, err := p.begin(ctx, subject, h, opts)
	if err != nil {
		return FastAck{}, err
	}
	defer p.hdr.Reset()
	if p.seq > 0 {
		p.drain()
		if err := p.check(ctx); err != nil {
			return FastAck{}, p.fail(err)
		}
		if p.seq >= p.lastAck+p.flow*uint64(p.set.maxOut) {
			if err := p.await(ctx, waitWindow, p.seq); err != nil {
				if ctx.Err() != nil && !p.done && p.pend == nil {
					return FastAck{}, err // nothing lost: the publisher stays usable
				}
				return FastAck{}, p.fail(err)
			}
			if err := p.check(ctx); err != nil {
				return FastAck{}, p.fail(err)
			}
		}
	}
	seq := p.seq + 1
	op := byte(opAppend)
	if seq == 1 {
		op = opStart
	}
	if err := p.publish(subject, hdr, data, seq, op); err != nil {
		return FastAck{}, err
	}
	p.seq, p.subject = seq, subject
	p.size++
	if seq == 1 {
		if err := p.start(ctx, subject, hdr, data); err != nil {
			return FastAck{}, p.fail(err)
		}
		if err := p.check(ctx); err != nil {
			return FastAck{}, p.fail(err)
		}
	}
	return FastAck{BatchSeq: seq, AckSeq: p.lastAck}, nil
}

// Commit stores a last message and ends the batch. It returns the
// server's acknowledgement, checked to name this batch and count every
// message sent (BatchID, BatchSize). The publisher is closed afterwards.
func (p *FastPublisher) Commit(ctx context.Context, subject string, data []byte, opts ...jsapi.PubOpt) (_ *jsapi.PubAck, err error) {
	defer func() { err = inFamily(ErrFastPublish, err) }()
	return p.CommitMsg(ctx, subject, nil, data, opts...)
}

// CommitMsg is Commit with headers h (may be nil).
func (p *FastPublisher) CommitMsg(ctx context.Context, subject string, h *proto.Header, data []byte, opts ...jsapi.PubOpt) (_ *jsapi.PubAck, err error) {
	defer func() { err = inFamily(ErrFastPublish, err) }()
	hdr, err := p.begin(ctx, subject, h, opts)
	if err != nil {
		return nil, err
	}
	defer p.hdr.Reset()
	if p.seq > 0 {
		p.drain()
		if err := p.check(ctx); err != nil {
			return nil, p.fail(err)
		}
	}
	seq := p.seq + 1
	if err := p.publish(subject, hdr, data, seq, opCommit); err != nil {
		return nil, err
	}
	p.seq, p.subject = seq, subject
	p.size++
	return p.finish(ctx, seq)
}

// Close ends the batch without storing another message: it sends an
// end-of-batch marker and returns the acknowledgement, as Commit. Closing
// a publisher that stored nothing fails with ErrEmptyBatch (and leaves it
// usable).
func (p *FastPublisher) Close(ctx context.Context) (_ *jsapi.PubAck, err error) {
	defer func() { err = inFamily(ErrFastPublish, err) }()
	if ctx == nil {
		return nil, conn.ErrNilContext
	}
	if p.closed {
		return nil, ErrBatchClosed
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	if p.seq == 0 {
		return nil, ErrEmptyBatch
	}
	p.drain()
	if err := p.check(ctx); err != nil {
		return nil, p.fail(err)
	}
	if err := p.publish(p.subject, nil, nil, p.seq+1, opEOB); err != nil {
		return nil, err
	}
	return p.finish(ctx, p.seq)
}

// Abort releases the publisher's subscription without ending the batch:
// the messages already stored stay stored, and the server forgets the
// batch after its idle timeout (10 s). It is safe to call at any time,
// more than once.
func (p *FastPublisher) Abort() (err error) {
	defer func() { err = inFamily(ErrFastPublish, err) }()
	return p.release()
}

// begin runs the checks common to Add and Commit and returns the headers
// to send.
func (p *FastPublisher) begin(ctx context.Context, subject string, h *proto.Header, opts []jsapi.PubOpt) (*proto.Header, error) {
	if ctx == nil {
		return nil, conn.ErrNilContext
	}
	if p.closed {
		return nil, ErrBatchClosed
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx) // nothing sent; the publisher goes on
	}
	if err := proto.ValidatePublishSubject(subject); err != nil {
		return nil, err
	}
	if p.seq == 0 {
		if err := p.js.Check(ctx, jsapi.FeatureFastBatch); err != nil {
			return nil, err // nothing sent; the publisher goes on
		}
	}
	hdr := h
	if len(opts) > 0 {
		p.hdr.Reset()
		if h != nil {
			for k, v := range h.All() {
				p.hdr.Add(k, v)
			}
		}
		if err := p.js.ApplyPubOpts(ctx, &p.hdr, opts...); err != nil {
			p.hdr.Reset()
			return nil, err
		}
		hdr = &p.hdr
	}
	if p.sub == nil {
		sub, err := p.nc.Subscribe(p.inbox + ".>")
		if err != nil {
			return nil, fmt.Errorf("%w: batch %s: %w", ErrSubscribeFailed, p.id, err)
		}
		p.sub = sub
	}
	return hdr, nil
}

// publish sends one message of the batch. A failure means nothing was
// queued; only a closed connection ends the publisher.
func (p *FastPublisher) publish(subject string, h *proto.Header, data []byte, seq uint64, op byte) error {
	b := strconv.AppendUint(p.reply[:p.plen], seq, 10)
	b = append(b, '.', op)
	b = append(b, fastSuffix...)
	p.reply = b
	err := p.nc.PublishMsg(subject, unsafe.String(unsafe.SliceData(b), len(b)), h, data)
	if err == nil {
		return nil
	}
	err = fmt.Errorf("%w: batch %s: %w", ErrPublishFailed, p.id, err)
	if errors.Is(err, conn.ErrClosed) || errors.Is(err, conn.ErrDraining) {
		return p.fail(err)
	}
	return err
}

// start waits for the first flow acknowledgement of the batch, whose first
// message was just sent. When no stream answered it (no responders), it
// sends it again as RetryStart says: nobody received it, so nothing was
// stored and the batch has not begun.
func (p *FastPublisher) start(ctx context.Context, subject string, h *proto.Header, data []byte) error {
	for attempt := 0; ; attempt++ {
		if err := p.await(ctx, waitStart, 1); err != nil {
			return err
		}
		refused := p.done && !p.started && p.final == nil && errors.Is(p.term, jsapi.ErrNoStreamResponse)
		if !refused || attempt >= p.set.retry.attempts {
			return nil // check reports the outcome
		}
		if werr := p.set.retry.pause(ctx, attempt); werr != nil {
			return nil // the 503 stands
		}
		p.done, p.term = false, nil
		if err := p.publish(subject, h, data, 1, opStart); err != nil {
			return err
		}
	}
}

// ping asks the server to repeat its flow state for batch sequence seq.
func (p *FastPublisher) ping(seq uint64) {
	if p.subject == "" {
		return
	}
	if p.publish(p.subject, nil, nil, seq, opPing) == nil {
		p.pings++
	}
}

// finish waits for the terminal acknowledgement of a batch whose last
// message has batch sequence seq, checks it, and closes the publisher.
func (p *FastPublisher) finish(ctx context.Context, seq uint64) (*jsapi.PubAck, error) {
	p.committing = true
	if err := p.await(ctx, waitFinal, seq); err != nil {
		return nil, p.fail(err)
	}
	if err := p.check(ctx); err != nil {
		return nil, p.fail(err)
	}
	ack := p.final
	_ = p.release()
	if ack == nil {
		return nil, fmt.Errorf("%w: batch %s ended without acknowledgement", ErrInvalidBatchAck, p.id)
	}
	if fe, ok := p.reported.(*FastAPIError); ok && fe.Seq == seq && ack.BatchID == p.id && uint64(ack.BatchSize) == seq-1 {
		// Gap mode ok: the last message failed its check; the server
		// ended the batch without it.
		fe.PubAck = ack
		return nil, fe
	}
	if ack.BatchID != p.id || uint64(ack.BatchSize) != seq {
		return nil, fmt.Errorf("%w: batch %s with %d messages acknowledged as batch %q with %d",
			ErrInvalidBatchAck, p.id, seq, ack.BatchID, ack.BatchSize)
	}
	return ack, nil
}

// release removes the subscription and closes the publisher.
func (p *FastPublisher) release() error {
	p.closed = true
	if p.sub == nil {
		return nil
	}
	sub := p.sub
	p.sub = nil
	if err := sub.Unsubscribe(); err != nil && !errors.Is(err, conn.ErrClosed) && !errors.Is(err, conn.ErrBadSubscription) {
		return err
	}
	return nil
}

// fail closes the publisher and returns err.
func (p *FastPublisher) fail(err error) error {
	_ = p.release()
	return err
}

// check reports the failure that ended the batch, if any. A failure
// reported before its terminal acknowledgement (gap mode fail) waits for
// that acknowledgement up to the ack timeout, so that the error carries it.
func (p *FastPublisher) check(ctx context.Context) error {
	if p.pend != nil && !p.done {
		_ = p.await(ctx, waitFinal, p.seq)
		if !p.done {
			p.done, p.term = true, p.pend
		}
	}
	if !p.done {
		return nil
	}
	if p.term != nil {
		return p.term
	}
	if !p.committing {
		// The server ended the batch on its own (a backward gap in gap
		// mode ok, a duplicate first message).
		if p.reported != nil {
			return p.reported
		}
		return fmt.Errorf("%w: the server ended batch %s after %d messages", ErrBatchClosed, p.id, p.final.BatchSize)
	}
	return nil
}

type waitMode uint8

const (
	waitStart  waitMode = iota // the first flow acknowledgement
	waitWindow                 // room in the flow window
	waitFinal                  // the terminal acknowledgement
)

func (p *FastPublisher) satisfied(mode waitMode) bool {
	if p.done {
		return true
	}
	switch mode {
	case waitStart:
		return p.started || p.pend != nil
	case waitWindow:
		return p.pend != nil || p.seq < p.lastAck+p.flow*uint64(p.set.maxOut)
	}
	return false
}

// await handles replies until mode is satisfied or the batch ended. After
// PingInterval of silence it pings with batch sequence pingSeq; after the
// ack timeout of silence it fails with ErrAckTimeout.
func (p *FastPublisher) await(ctx context.Context, mode waitMode, pingSeq uint64) error {
	timeout := p.set.timeout
	deadline := time.Now().Add(timeout)
	for !p.satisfied(mode) {
		if p.pend != nil {
			mode = waitFinal
		}
		now := time.Now()
		if !now.Before(deadline) {
			return &ackTimeoutError{what: fmt.Sprintf("fast batch %s at sequence %d", p.id, p.seq)}
		}
		wctx, cancel := context.WithTimeout(ctx, min(p.set.ping, deadline.Sub(now)))
		m, err := p.sub.NextMsg(wctx)
		cancel()
		if err == nil {
			p.handle(m)
			deadline = time.Now().Add(timeout)
			continue
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			if time.Now().Before(deadline) {
				p.ping(pingSeq)
			}
			continue
		}
		return fmt.Errorf("extra: fast batch %s: %w", p.id, err)
	}
	return nil
}

// drain handles the replies already received, without waiting.
func (p *FastPublisher) drain() {
	for !p.done {
		m, ok := p.sub.TryNextMsg()
		if !ok {
			return
		}
		p.handle(m)
	}
}

// handle processes one reply on the inbox.
func (p *FastPublisher) handle(m *conn.Msg) {
	if p.done {
		return // late replies after the end (unknown batch for pings, …)
	}
	seq := replySeq(m.Subject)
	if len(m.Data) == 0 {
		if m.Status() == 503 {
			p.end(nil, fmt.Errorf("extra: fast batch %s message %d: %w: %w", p.id, seq, jsapi.ErrNoStreamResponse, conn.ErrNoResponders))
		} else {
			p.end(nil, fmt.Errorf("%w: fast batch %s: empty reply to message %d", jsapi.ErrBadResponse, p.id, seq))
		}
		return
	}
	if f, ok := parseFlow(m.Data); ok {
		switch f.kind {
		case 'a':
			p.started = true
			if f.seq > p.lastAck {
				p.lastAck = f.seq
			}
			if f.msgs > 0 {
				p.flow = f.msgs
			}
		case 'g':
			p.report(&GapError{Expected: f.lastSeq, Received: f.seq})
		case 'e':
			p.report(&FastAPIError{Seq: f.seq, Flow: true, APIError: f.err})
		default:
			p.end(nil, fmt.Errorf("%w: fast batch %s: flow message %s", jsapi.ErrBadResponse, p.id, proto.Excerpt(m.Data)))
		}
		return
	}
	var ack jsapi.PubAck
	if err := jsapi.ParsePubAck(m.Data, &ack); err != nil {
		var ae *jsapi.APIError
		if errors.As(err, &ae) {
			p.end(nil, &FastAPIError{Seq: seq, APIError: ae})
		} else {
			p.end(nil, fmt.Errorf("extra: fast batch %s: %w", p.id, err)) // err matches jsapi.ErrBadResponse
		}
		return
	}
	p.end(&ack, nil)
}

// report handles a gap or a failed message: in gap mode ok it goes to
// OnError, in gap mode fail it ends the batch (and the first goes to
// OnError as well).
func (p *FastPublisher) report(err error) {
	if p.set.gap == GapOK {
		p.reported = err
		if p.set.onError != nil {
			p.set.onError(inFamily(ErrFastPublish, err))
		}
		return
	}
	if p.pend == nil {
		p.pend = err
		if p.set.onError != nil {
			p.set.onError(inFamily(ErrFastPublish, err))
		}
	}
}

// end records the terminal reply: an acknowledgement or an error.
func (p *FastPublisher) end(ack *jsapi.PubAck, err error) {
	p.done = true
	p.final = ack
	cause := p.pend
	if cause == nil && !p.committing && p.reported != nil {
		cause = p.reported
	}
	if cause != nil {
		if ack != nil {
			switch e := cause.(type) {
			case *GapError:
				e.PubAck = ack
			case *FastAPIError:
				e.PubAck = ack
			}
		}
		p.term = cause
		return
	}
	p.term = err
}

// replySeq extracts the batch sequence from a reply subject
// "<inbox>.<flow>.<gap>.<seq>.<op>.$FI" (0 when it has another form).
func replySeq(subject string) uint64 {
	s, ok := strings.CutSuffix(subject, fastSuffix)
	if !ok {
		return 0
	}
	i := strings.LastIndexByte(s, '.') // before <op>
	if i < 0 {
		return 0
	}
	s = s[:i]
	seq, _ := proto.ParseUint([]byte(s[strings.LastIndexByte(s, '.')+1:]))
	return seq
}

// flowMsg is a fast-batch flow message: an acknowledgement ('a'), a gap
// ('g') or a failed message ('e').
type flowMsg struct {
	kind    byte
	seq     uint64
	msgs    uint64
	lastSeq uint64
	err     *jsapi.APIError
}

// parseFlow decodes a flow message ({"type":…}); ok is false for anything
// else (a PubAck). Acknowledgements and gaps, flat objects of numbers, are
// decoded without allocating.
func parseFlow(b []byte) (f flowMsg, ok bool) {
	b = bytes.TrimSpace(b)
	if !bytes.HasPrefix(b, []byte(`{"type":"`)) {
		return f, false
	}
	i := len(`{"type":"`)
	j := bytes.IndexByte(b[i:], '"')
	if j < 0 {
		return f, true
	}
	switch string(b[i : i+j]) {
	case "ack":
		f.kind = 'a'
	case "gap":
		f.kind = 'g'
	case "err":
		var v struct {
			Seq   uint64          `json:"seq"`
			Error *jsapi.APIError `json:"error"`
		}
		if json.Unmarshal(b, &v) == nil && v.Error != nil {
			f.kind, f.seq, f.err = 'e', v.Seq, v.Error
		}
		return f, true
	default:
		return f, true
	}
	i += j + 1
	for {
		for i < len(b) && (b[i] == ' ' || b[i] == ',') {
			i++
		}
		if i >= len(b) {
			f.kind = 0
			return f, true
		}
		if b[i] == '}' {
			return f, true
		}
		if b[i] != '"' {
			f.kind = 0
			return f, true
		}
		k := bytes.IndexByte(b[i+1:], '"')
		if k < 0 {
			f.kind = 0
			return f, true
		}
		key := b[i+1 : i+1+k]
		i += k + 2
		for i < len(b) && (b[i] == ' ' || b[i] == ':') {
			i++
		}
		e := i
		for e < len(b) && b[e] >= '0' && b[e] <= '9' {
			e++
		}
		n, nok := proto.ParseUint(b[i:e])
		if !nok {
			f.kind = 0
			return f, true
		}
		switch string(key) {
		case "seq":
			f.seq = n
		case "msgs":
			f.msgs = n
		case "last_seq":
			f.lastSeq = n
		}
		i = e
	}
}
