package kv

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/directget"
	"github.com/natsio/natsio/internal/stamp"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

// Bucket is a handle on a key-value bucket. It is safe for concurrent use
// and holds no server-side resources: watches create their own consumers.
type Bucket struct {
	js     *jsapi.JS
	nc     *conn.Conn
	name   string
	stream *jsapi.Stream
	// pre prefixes the keys of the stored subjects: "$KV.<bucket>." (for a
	// mirror, the origin's bucket).
	pre string
	// putPre prefixes the subjects written to (API prefix of a domain,
	// mirror origin).
	putPre string
	direct bool
	// directLast is the Direct Get subject for the last entry of a key
	// minus the key; directSeq the one for a sequence.
	directLast string
	directSeq  string
	// skipped counts the entries with an unknown KV-Operation that reads
	// skipped (SkippedEntries).
	skipped atomic.Uint64
}

func newBucket(js *jsapi.JS, st *jsapi.Stream) *Bucket {
	info := st.CachedInfo()
	name := strings.TrimPrefix(info.Config.Name, streamPrefix)
	b := &Bucket{
		js:     js,
		nc:     js.Conn(),
		name:   name,
		stream: st,
		pre:    subjectPrefix + name + ".",
		direct: info.Config.AllowDirect,
	}
	jsPre := ""
	if js.Prefix() != "$JS.API." {
		// Domains and imported APIs: the server maps the prefixed subject
		// back into the account's $KV namespace.
		jsPre = js.Prefix()
	}
	b.putPre = jsPre + b.pre
	if m := info.Config.Mirror; m != nil {
		origin := strings.TrimPrefix(m.Name, streamPrefix)
		b.pre = subjectPrefix + origin + "."
		if m.External != nil && m.External.APIPrefix != "" {
			b.putPre = m.External.APIPrefix + "." + b.pre
		} else {
			b.putPre = jsPre + b.pre
		}
	}
	b.directSeq = js.Prefix() + "DIRECT.GET." + info.Config.Name
	b.directLast = b.directSeq + "." + b.pre
	return b
}

// Name returns the bucket's name.
func (b *Bucket) Name() string { return b.name }

// StreamName returns the name of the stream behind the bucket.
func (b *Bucket) StreamName() string { return b.stream.Name() }

// Op is what an entry did to its key.
type Op uint8

const (
	// OpPut stored a value.
	OpPut Op = iota
	// OpDelete marked the key deleted, keeping its history.
	OpDelete
	// OpPurge removed the key's history (or the server removed the key
	// when its TTL or the bucket's expired: a limit marker).
	OpPurge
)

func (o Op) String() string {
	switch o {
	case OpPut:
		return "PUT"
	case OpDelete:
		return "DEL"
	case OpPurge:
		return "PURGE"
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}

// Entry is one revision of a key. Its fields belong to the receiver.
type Entry struct {
	Bucket string
	Key    string
	// Value is empty for deletes and purges, and in watches with MetaOnly.
	Value []byte
	// Revision is the entry's stream sequence: unique and increasing
	// within the bucket.
	Revision uint64
	// Created is when the server stored the entry.
	Created time.Time
	// Delta is, in a watch, how many entries matching the watch follow
	// this one in the stream now (0: caught up); 0 from Get.
	Delta     uint64
	Operation Op
}

// opOf reads the operation from an entry's headers: KV-Operation, else a
// server limit marker's Nats-Marker-Reason. A KV-Operation other than DEL,
// PURGE or PUT is ErrUnknownOperation: such an entry is not a value.
func opOf(h *proto.Header) (Op, error) {
	if h.IsZero() {
		return OpPut, nil
	}
	op, hasOp := h.Lookup(opHeader)
	marker, hasMarker := h.Lookup(jsapi.HeaderMarkerReason)
	return opFrom(op, hasOp, marker, hasMarker)
}

// opFrom is opOf for the values of the KV-Operation and Nats-Marker-Reason
// fields (and whether each is present).
func opFrom(op string, hasOp bool, marker string, hasMarker bool) (Op, error) {
	if hasOp {
		switch op {
		case opDel:
			return OpDelete, nil
		case opPurge:
			return OpPurge, nil
		case opPut:
			return OpPut, nil
		}
		return OpPut, fmt.Errorf("%w: %q", ErrUnknownOperation, op)
	}
	if hasMarker {
		switch marker {
		case "MaxAge", "Purge":
			return OpPurge, nil
		case "Remove":
			return OpDelete, nil
		}
	}
	return OpPut, nil
}

// directFields are the fields of a direct get reply's header that a read
// uses, views of the reply: the sequence, time stamp and subject the last
// of their key, the operation and marker the first.
type directFields struct {
	seq, stamp, subject, op, marker string
	hasOp, hasMarker                bool
}

// directFieldsOf sets f to the fields of r a read uses, r having been
// parsed with opHeader and jsapi.HeaderMarkerReason as its also keys, in
// that order. The server appends
// Nats-Sequence, Nats-Time-Stamp and Nats-Subject after the headers the
// message was stored with, which may hold fields of the same names (any
// client can publish them), so those are read from the last field of
// their key; the stored KV-Operation and Nats-Marker-Reason from the
// first, as Lookup reads them.
func directFieldsOf(r *directget.Reply, f *directFields) {
	f.seq, _ = r.Last(directget.Sequence)
	f.stamp, _ = r.Last(directget.TimeStamp)
	f.subject, _ = r.Last(directget.Subject)
	f.op, f.hasOp = r.Also(0)
	f.marker, f.hasMarker = r.Also(1)
}

// scanDirect returns the directFields of h, a received header.
func scanDirect(h *proto.Header) (f directFields) {
	var r directget.Reply
	r.Parse(h.Block(), opHeader, jsapi.HeaderMarkerReason)
	directFieldsOf(&r, &f)
	return f
}

// buffers holds reusable subject buffers.
var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 128); return &b }}

// view returns b as a string without copying. The connection copies
// subjects into its write buffer before a publish or request returns, so a
// view of a pooled buffer is valid for the duration of the call.
//
// The connection's memo of the last publish subject it checked compares
// bytes, so a later subject built in the same
// buffer is checked on its own content.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Get returns the latest value of key. It fails with ErrKeyNotFound when
// the key has none, and with ErrKeyDeleted (which matches ErrKeyNotFound)
// when its latest entry is a delete or purge marker.
func (b *Bucket) Get(ctx context.Context, key string) (*Entry, error) {
	e, err := b.get(ctx, key, 0)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// GetRevision returns the entry of key at revision. It fails with
// ErrKeyNotFound when the bucket holds no such revision of key (never
// written, another key's, or no longer kept), and with ErrKeyDeleted when
// that revision is a delete or purge marker.
func (b *Bucket) GetRevision(ctx context.Context, key string, revision uint64) (*Entry, error) {
	if revision == 0 {
		return nil, fmt.Errorf("%w: revision 0", conn.ErrInvalidOption)
	}
	e, err := b.get(ctx, key, revision)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// get reads key's latest entry (revision 0) or a revision. A marker is
// returned with ErrKeyDeleted.
func (b *Bucket) get(ctx context.Context, key string, revision uint64) (*Entry, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	if ctx == nil {
		return nil, conn.ErrNilContext
	}
	if !b.direct {
		return b.getFromLeader(ctx, key, revision)
	}
	bp := buffers.Get().(*[]byte)
	buf := (*bp)[:0]
	var subj, body []byte
	if revision == 0 {
		buf = append(append(buf, b.directLast...), key...)
		subj = buf
	} else {
		buf = append(buf, b.directSeq...)
		n := len(buf)
		buf = strconv.AppendUint(append(buf, `{"seq":`...), revision, 10)
		buf = append(buf, '}')
		subj, body = buf[:n], buf[n:]
	}
	m, err := b.nc.Request(ctx, view(subj), body)
	*bp = buf
	buffers.Put(bp)
	if err != nil {
		if errors.Is(err, conn.ErrNoResponders) {
			// Nobody serves Direct Get for the bucket any more (deleted,
			// or no longer allowing it): the stream leader answers, or
			// says the bucket is gone (ErrBucketNotFound).
			return b.getFromLeader(ctx, key, revision)
		}
		return nil, err
	}
	// One server of the stream's direct-get queue group answers, once.
	b.nc.ReuseReply(m)
	// One pass over the reply's header: its status and the fields.
	var r directget.Reply
	r.Parse(m.Header.Block(), opHeader, jsapi.HeaderMarkerReason)
	if r.Status != 0 {
		if r.Status == 404 {
			return nil, ErrKeyNotFound
		}
		return nil, fmt.Errorf("kv: direct get: status %d %s", r.Status, r.Description)
	}
	var f directFields
	directFieldsOf(&r, &f)
	seq, ok := proto.ParseUint(f.seq)
	if !ok {
		return nil, fmt.Errorf("%w: direct get reply without sequence", jsapi.ErrBadResponse)
	}
	if revision != 0 {
		s := f.subject
		if len(s) != len(b.pre)+len(key) || !strings.HasPrefix(s, b.pre) || s[len(b.pre):] != key {
			return nil, ErrKeyNotFound
		}
	}
	// The reply belongs to us: views into it stay valid.
	created, err := stamp.Parse(f.stamp)
	if err != nil {
		return nil, fmt.Errorf("%w: direct get time stamp: %v", jsapi.ErrBadResponse, err)
	}
	op, err := opFrom(f.op, f.hasOp, f.marker, f.hasMarker)
	if err != nil {
		return nil, err
	}
	e := &Entry{Bucket: b.name, Key: key, Value: m.Data, Revision: seq, Created: created, Operation: op}
	if e.Operation != OpPut {
		return e, ErrKeyDeleted
	}
	return e, nil
}

// getFromLeader reads through the stream leader (buckets without Direct
// Get, created by very old clients).
func (b *Bucket) getFromLeader(ctx context.Context, key string, revision uint64) (*Entry, error) {
	var sm *jsapi.StoredMsg
	var err error
	if revision == 0 {
		sm, err = b.stream.GetLastMsgForSubject(ctx, b.pre+key)
	} else {
		sm, err = b.stream.GetMsg(ctx, revision)
		if err == nil && sm.Subject != b.pre+key {
			return nil, ErrKeyNotFound
		}
	}
	if err != nil {
		if errors.Is(err, jsapi.ErrMsgNotFound) {
			return nil, ErrKeyNotFound
		}
		if errors.Is(err, jsapi.ErrStreamNotFound) {
			err = wrap(ErrBucketNotFound, err)
		}
		return nil, err
	}
	op, err := opOf(&sm.Header)
	if err != nil {
		return nil, err
	}
	e := &Entry{Bucket: b.name, Key: key, Value: sm.Data, Revision: sm.Sequence, Created: sm.Time, Operation: op}
	if e.Operation != OpPut {
		return e, ErrKeyDeleted
	}
	return e, nil
}

// acks receive the PubAcks of puts.
var acks = sync.Pool{New: func() any { return new(jsapi.PubAck) }}

// headers holds reusable headers for puts with options.
var headers = sync.Pool{New: func() any { return new(proto.Header) }}

// kvHeaders are the headers of a write that are not publish options: the
// operation (KV-Operation, written first) and a TTL (Nats-TTL, written
// last, as a Go duration, as nats.go writes it; the server reads both that
// and jsapi.TTL's plain seconds, and keeps whole seconds, so checkTTL
// applies jsapi.TTL's rule). Zero ones are left out.
type kvHeaders struct {
	op  string
	ttl time.Duration
}

// publish writes to key's subject and returns the stream sequence. The
// first attempt goes straight to the connection (a context without
// deadline is bounded by the connection's request timeout without
// allocating one); when no stream answered or the server pushed back,
// which means the message was not stored, jsapi retries with its backoff.
func (b *Bucket) publish(ctx context.Context, key string, value []byte, kh kvHeaders, opts ...jsapi.PubOpt) (uint64, error) {
	if ctx == nil {
		return 0, conn.ErrNilContext
	}
	bp := buffers.Get().(*[]byte)
	subj := append(append((*bp)[:0], b.putPre...), key...)
	defer func() { *bp = subj; buffers.Put(bp) }()
	var h *proto.Header
	if kh != (kvHeaders{}) || len(opts) > 0 {
		h = headers.Get().(*proto.Header)
		defer func() { h.Reset(); headers.Put(h) }()
		if kh.op != "" {
			h.Add(opHeader, kh.op)
		}
		if err := b.js.ApplyPubOpts(ctx, h, opts...); err != nil {
			return 0, err
		}
		if kh.ttl != 0 {
			if err := b.js.Check(ctx, jsapi.FeatureMsgTTL); err != nil {
				return 0, err
			}
			h.Add(jsapi.HeaderTTL, kh.ttl.String())
		}
	}
	ap := acks.Get().(*jsapi.PubAck)
	defer func() { *ap = jsapi.PubAck{}; acks.Put(ap) }()
	var ack jsapi.PubAck
	if b.js.Observer() != nil { // jsapi reports the put to the Observer
		ack, err := b.js.PublishMsg(ctx, view(subj), h, value)
		if errors.Is(err, jsapi.ErrNoStreamResponse) {
			err = wrap(ErrBucketNotFound, err)
		}
		return ack.Sequence, err
	}
	m, err := b.nc.RequestMsg(ctx, view(subj), h, value)
	if err == nil {
		err = jsapi.ParsePubAck(m.Data, ap)
		ack = *ap
		// A PubAck or a JetStream error: the only reply to this subject.
		if _, api := errors.AsType[*jsapi.APIError](err); err == nil || api {
			b.nc.ReuseReply(m)
		}
	}
	if errors.Is(err, conn.ErrNoResponders) || errors.Is(err, jsapi.ErrTooManyRequests) {
		ack, err = b.js.PublishMsg(ctx, view(subj), h, value) // h holds the options' headers
	}
	if err != nil {
		if errors.Is(err, jsapi.ErrNoStreamResponse) {
			err = wrap(ErrBucketNotFound, err)
		}
		return 0, err
	}
	return ack.Sequence, nil
}

// Put stores value under key and returns its revision.
func (b *Bucket) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	if err := ValidateKey(key); err != nil {
		return 0, err
	}
	return b.publish(ctx, key, value, kvHeaders{})
}

// PutString stores a string value under key.
func (b *Bucket) PutString(ctx context.Context, key, value string) (uint64, error) {
	return b.Put(ctx, key, []byte(value))
}

// CreateOpt is an option of Create, made by KeyTTL. The zero CreateOpt
// is invalid: it fails Create with an error matching conn.ErrInvalidOption,
// before sending.
type CreateOpt struct {
	ttl time.Duration
	set bool
}

// KeyTTL makes the server remove the key (leaving a purge marker) d after
// it is created; d is a whole number of seconds, at least one (anything
// else fails Create with an error matching conn.ErrInvalidOption and
// jsapi.ErrInvalidTTL, before sending). The bucket needs LimitMarkerTTL.
func KeyTTL(d time.Duration) CreateOpt { return CreateOpt{ttl: d, set: true} }

// checkTTL validates a per-message TTL (see kvHeaders): the server keeps
// whole seconds, so a fraction is refused rather than dropped.
func checkTTL(d time.Duration) error {
	if d < time.Second {
		return fmt.Errorf("%w: %w: TTL %v is below one second", conn.ErrInvalidOption, jsapi.ErrInvalidTTL, d)
	}
	if d%time.Second != 0 {
		return fmt.Errorf("%w: %w: TTL %v is not a whole number of seconds", conn.ErrInvalidOption, jsapi.ErrInvalidTTL, d)
	}
	return nil
}

// Create stores value under key only if the key has no value: it was never
// written, or its latest entry is a delete or purge marker. It fails with
// ErrKeyExists otherwise.
func (b *Bucket) Create(ctx context.Context, key string, value []byte, opts ...CreateOpt) (uint64, error) {
	if err := ValidateKey(key); err != nil {
		return 0, err
	}
	var kh kvHeaders
	for _, o := range opts {
		if !o.set {
			return 0, fmt.Errorf("%w: zero CreateOpt", conn.ErrInvalidOption)
		}
		if err := checkTTL(o.ttl); err != nil {
			return 0, err
		}
		kh.ttl = o.ttl
	}
	var pub [1]jsapi.PubOpt
	pub[0] = jsapi.ExpectLastSubjectSeq(0)
	rev, err := b.publish(ctx, key, value, kh, pub[:]...)
	if err == nil || !isWrongLastSeq(err) {
		return rev, err
	}
	// The subject holds something: a marker may be replaced.
	e, gerr := b.get(ctx, key, 0)
	if errors.Is(gerr, ErrKeyDeleted) {
		pub[0] = jsapi.ExpectLastSubjectSeq(e.Revision)
		rev, err = b.publish(ctx, key, value, kh, pub[:]...)
		if err == nil || !isWrongLastSeq(err) {
			return rev, err
		}
	}
	return 0, wrap(ErrKeyExists, err)
}

// Update stores value under key only if the key's latest revision is
// revision (compare-and-set). A conflict fails with ErrRevisionMismatch.
func (b *Bucket) Update(ctx context.Context, key string, value []byte, revision uint64) (uint64, error) {
	if err := ValidateKey(key); err != nil {
		return 0, err
	}
	rev, err := b.publish(ctx, key, value, kvHeaders{}, jsapi.ExpectLastSubjectSeq(revision))
	if err != nil && isWrongLastSeq(err) {
		return 0, wrap(ErrRevisionMismatch, err)
	}
	return rev, err
}

// DeleteOpt is an option of Delete, made by LastRevision. The zero
// DeleteOpt is invalid: it fails Delete with an error matching
// conn.ErrInvalidOption, before sending.
type DeleteOpt struct {
	rev uint64
	set bool
}

// LastRevision makes Delete conditional: it fails with
// ErrRevisionMismatch unless the key's latest revision is revision.
func LastRevision(revision uint64) DeleteOpt { return DeleteOpt{rev: revision, set: true} }

// PurgeOpt is an option of Purge, made by PurgeLastRevision or PurgeTTL.
// The zero PurgeOpt is invalid: it fails Purge with an error matching
// conn.ErrInvalidOption, before sending.
type PurgeOpt struct {
	rev   uint64
	ttl   time.Duration
	isRev bool
	isTTL bool
}

// PurgeLastRevision makes Purge conditional: it fails with
// ErrRevisionMismatch unless the key's latest revision is revision.
func PurgeLastRevision(revision uint64) PurgeOpt { return PurgeOpt{rev: revision, isRev: true} }

// PurgeTTL makes the purge marker itself expire after d (a whole number of
// seconds, at least one, as KeyTTL), so the key disappears entirely; the
// bucket needs LimitMarkerTTL.
func PurgeTTL(d time.Duration) PurgeOpt { return PurgeOpt{ttl: d, isTTL: true} }

// Delete marks key deleted (a KV-Operation: DEL entry); its history is
// kept.
func (b *Bucket) Delete(ctx context.Context, key string, opts ...DeleteOpt) error {
	var po [1]PurgeOpt // at most one condition: the first
	n := 0
	for _, o := range opts {
		if !o.set {
			return fmt.Errorf("%w: zero DeleteOpt", conn.ErrInvalidOption)
		}
		if n == 0 {
			po[0], n = PurgeLastRevision(o.rev), 1
		}
	}
	return b.remove(ctx, key, false, po[:n])
}

// Purge replaces all revisions of key with a single purge marker
// (KV-Operation: PURGE with a subject rollup).
func (b *Bucket) Purge(ctx context.Context, key string, opts ...PurgeOpt) error {
	return b.remove(ctx, key, true, opts)
}

func (b *Bucket) remove(ctx context.Context, key string, purge bool, opts []PurgeOpt) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	var pub [2]jsapi.PubOpt
	n := 0
	kh := kvHeaders{op: opDel}
	if purge {
		kh.op, pub[0] = opPurge, jsapi.Rollup(jsapi.HeaderRollupValueSubject)
		n = 1
	}
	var hasRev, hasTTL bool
	for _, o := range opts {
		switch {
		case o.isRev:
			if !hasRev {
				pub[n] = jsapi.ExpectLastSubjectSeq(o.rev)
				n++
				hasRev = true
			}
		case o.isTTL:
			if err := checkTTL(o.ttl); err != nil {
				return err
			}
			if !hasTTL {
				kh.ttl = o.ttl
				hasTTL = true
			}
		default:
			return fmt.Errorf("%w: zero PurgeOpt", conn.ErrInvalidOption)
		}
	}
	_, err := b.publish(ctx, key, nil, kh, pub[:n]...)
	if err != nil && isWrongLastSeq(err) {
		return wrap(ErrRevisionMismatch, err)
	}
	return err
}

// Status fetches the bucket's configuration and state.
func (b *Bucket) Status(ctx context.Context) (*Status, error) {
	info, err := b.stream.Info(ctx)
	if err != nil {
		return nil, kind.Err(err)
	}
	return newStatus(b.name, info), nil
}
