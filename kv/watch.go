package kv

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync/atomic"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/deadline"
	"github.com/natsio/natsio/internal/watchx"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
)

// WatchOpt is an option of the watches, Keys, ListKeys and History.
type WatchOpt struct {
	kind watchKind
	rev  uint64
	d    time.Duration
}

type watchKind uint8

const (
	watchIncludeHistory watchKind = iota + 1
	watchIgnoreDeletes
	watchMetaOnly
	watchUpdatesOnly
	watchResume
	watchHeartbeat
)

// IncludeHistory delivers every kept revision of the matching keys first,
// not only the latest. It excludes UpdatesOnly.
func IncludeHistory() WatchOpt { return WatchOpt{kind: watchIncludeHistory} }

// IgnoreDeletes leaves out delete and purge entries.
func IgnoreDeletes() WatchOpt { return WatchOpt{kind: watchIgnoreDeletes} }

// MetaOnly delivers entries without their values (the server sends
// headers only).
func MetaOnly() WatchOpt { return WatchOpt{kind: watchMetaOnly} }

// UpdatesOnly skips the current values: only entries written after the
// watch started are delivered. It excludes IncludeHistory.
func UpdatesOnly() WatchOpt { return WatchOpt{kind: watchUpdatesOnly} }

// ResumeFromRevision starts with the entries at and after revision (all of
// them, history included): the initial values are what was written since.
// A watcher that remembers the last revision it processed resumes with
// that revision + 1.
func ResumeFromRevision(revision uint64) WatchOpt { return WatchOpt{kind: watchResume, rev: revision} }

// WatchHeartbeat sets the idle heartbeat the watch's consumer asks of the
// server (default 5 s, ordered.DefaultHeartbeat). Two missed heartbeats
// make the watch recreate its consumer, so a shorter one notices a lost
// consumer (a server restart, a cluster node gone) sooner, at the price of
// a small message per interval while the bucket is idle. At least 100 ms.
func WatchHeartbeat(d time.Duration) WatchOpt { return WatchOpt{kind: watchHeartbeat, d: d} }

type watchOpts struct {
	history, ignoreDeletes, metaOnly, updatesOnly bool
	resume                                        uint64
	heartbeat                                     time.Duration
}

func resolveWatch(opts []WatchOpt) (watchOpts, error) {
	var o watchOpts
	for _, opt := range opts {
		switch opt.kind {
		case watchIncludeHistory:
			o.history = true
		case watchIgnoreDeletes:
			o.ignoreDeletes = true
		case watchMetaOnly:
			o.metaOnly = true
		case watchUpdatesOnly:
			o.updatesOnly = true
		case watchResume:
			if opt.rev == 0 {
				return o, fmt.Errorf("%w: resume from revision 0", conn.ErrInvalidOption)
			}
			o.resume = opt.rev
		case watchHeartbeat:
			if opt.d < 100*time.Millisecond {
				return o, fmt.Errorf("%w: watch heartbeat %v below 100ms", conn.ErrInvalidOption, opt.d)
			}
			o.heartbeat = opt.d
		default:
			return o, fmt.Errorf("%w: zero WatchOpt", conn.ErrInvalidOption)
		}
	}
	if o.history && o.updatesOnly {
		return o, fmt.Errorf("%w: IncludeHistory with UpdatesOnly", conn.ErrInvalidOption)
	}
	if o.resume > 0 && o.updatesOnly {
		return o, fmt.Errorf("%w: ResumeFromRevision with UpdatesOnly", conn.ErrInvalidOption)
	}
	return o, nil
}

// Watch watches the keys matching filter, a key whose tokens may also be
// "*" (one token) or a final ">" (the rest); see WatchFiltered.
func (b *Bucket) Watch(ctx context.Context, filter string, opts ...WatchOpt) iter.Seq2[*Entry, error] {
	return b.WatchFiltered(ctx, []string{filter}, opts...)
}

// WatchAll watches every key of the bucket; see WatchFiltered.
func (b *Bucket) WatchAll(ctx context.Context, opts ...WatchOpt) iter.Seq2[*Entry, error] {
	return b.WatchFiltered(ctx, nil, opts...)
}

// WatchFiltered returns a single-use iterator over the entries of the keys
// matching any of filters (all keys when there is none).
//
// The watch begins when WatchFiltered returns, not when the loop starts:
// the call creates the watch's consumer at the server (one request; with
// UpdatesOnly, a stream info first). It first yields the initial values
// — the latest entry of each matching key as it was when the watch began,
// in revision order (every kept revision with IncludeHistory; what was
// written since a revision with ResumeFromRevision; nothing with
// UpdatesOnly) — then one (nil, nil): the end-of-initial-values marker.
// It comes exactly once, also when there are no initial values, and from
// then on every entry written to a matching key is yielded as it is
// stored, starting with those written between the call and the loop. The
// marker is the point after which no write can be missed. A failure of
// the call (an invalid filter or option, a missing bucket) is the
// iterator's first and only yield. An iterator never ranged over leaves
// its consumer to the server, which removes it after
// ordered.DefaultInactiveThreshold.
//
// The watch runs until the loop breaks or ctx ends. It reads through an
// ordered consumer that is recreated after a reconnect, a server restart
// or missed heartbeats and resumes after the last revision yielded, so
// every entry is yielded once, in revision order, with no gap. An entry
// whose KV-Operation is neither PUT, DEL nor PURGE is not a value: it is
// skipped, not yielded, and counted by SkippedEntries, as is a message on
// the watch's pull inbox that the server did not deliver (another client
// published it; see ordered.OnSkip). The watch ends
// with a final (nil, err) only for what it cannot recover from: ctx's
// error, ErrBucketNotFound (the bucket was deleted), conn.ErrClosed, or
// an invalid filter or option (ErrInvalidKey, conn.ErrInvalidOption, before any
// I/O). Ranging over the iterator again starts a new watch, which begins
// when that loop starts.
func (b *Bucket) WatchFiltered(ctx context.Context, filters []string, opts ...WatchOpt) iter.Seq2[*Entry, error] {
	first := b.begin(ctx, filters, opts)
	var ranged atomic.Bool
	return func(yield func(*Entry, error) bool) {
		w := first
		if ranged.Swap(true) {
			w = b.begin(ctx, filters, opts)
		}
		b.read(w, yield)
	}
}

// watch is a watch that has begun, or the failure to begin it.
type watch struct {
	live *watchx.Live
	o    watchOpts
	err  error
}

// begin begins a watch: it validates it, creates its consumer and starts
// reading it (watchx.Start).
func (b *Bucket) begin(ctx context.Context, filters []string, opts []WatchOpt) watch {
	cfg, o, err := b.watcher(ctx, filters, opts)
	if err != nil {
		return watch{err: err}
	}
	oc, err := b.newWatch(ctx, cfg)
	if err != nil {
		return watch{err: err}
	}
	live, err := watchx.Start(ctx, oc, b.readOpts(o))
	if err != nil {
		return watch{err: b.watchErr(err)}
	}
	return watch{live: live, o: o}
}

// readOpts are the options of a watch's reads.
func (b *Bucket) readOpts(o watchOpts) []ordered.Opt {
	opts := []ordered.Opt{ordered.OnSkip(b.countSkip)}
	if o.heartbeat > 0 {
		opts = append(opts, ordered.Heartbeat(o.heartbeat))
	}
	return opts
}

// watcher validates a watch and returns the configuration of its ordered
// consumer.
func (b *Bucket) watcher(ctx context.Context, filters []string, opts []WatchOpt) (ordered.Config, watchOpts, error) {
	if ctx == nil {
		return ordered.Config{}, watchOpts{}, conn.ErrNilContext
	}
	o, err := resolveWatch(opts)
	if err != nil {
		return ordered.Config{}, o, err
	}
	subjects := make([]string, 0, max(len(filters), 1))
	for _, f := range filters {
		if err := validateFilter(f); err != nil {
			return ordered.Config{}, o, fmt.Errorf("%w: filter %q", err, f)
		}
		subjects = append(subjects, b.pre+f)
	}
	if len(subjects) == 0 {
		subjects = append(subjects, b.pre+">")
	}
	cfg := ordered.Config{FilterSubjects: subjects, HeadersOnly: o.metaOnly}
	switch {
	case o.resume > 0:
		cfg.DeliverPolicy, cfg.OptStartSeq = jsapi.DeliverByStartSequence, o.resume
	case o.updatesOnly:
		// Everything stored after this point is an update: start right
		// after the stream's last sequence (a consumer recreated before
		// its first message resumes there too, which DeliverNew would
		// not).
		info, err := b.stream.Info(ctx)
		if err != nil {
			return ordered.Config{}, o, b.watchErr(err)
		}
		cfg.DeliverPolicy, cfg.OptStartSeq = jsapi.DeliverByStartSequence, info.State.LastSeq+1
	case o.history:
		cfg.DeliverPolicy = jsapi.DeliverAll
	default:
		cfg.DeliverPolicy = jsapi.DeliverLastPerSubject
	}
	return cfg, o, nil
}

// newWatch makes the watch's ordered consumer. New creates the
// server-side consumer the first read then uses: no more requests than a
// read that creates it.
func (b *Bucket) newWatch(ctx context.Context, cfg ordered.Config) (*ordered.Consumer, error) {
	oc, err := ordered.New(ctx, b.js, b.stream.Name(), cfg)
	if err != nil {
		return nil, b.watchErr(err)
	}
	return oc, nil
}

// read yields the entries of a watch that has begun, with the marker
// after its initial values.
func (b *Bucket) read(w watch, yield func(*Entry, error) bool) {
	if w.err != nil {
		yield(nil, w.err)
		return
	}
	err := w.live.Read(func(m *jsapi.Msg, md jsapi.Metadata) bool {
		e := b.entry(m, md, w.o)
		return e == nil || yield(e, nil)
	}, func() bool { return yield(nil, nil) })
	if err != nil {
		yield(nil, b.watchErr(err))
	}
}

// watchErr is the error a watch or listing yields for err: a missing
// stream is ErrBucketNotFound, a passed deadline also matches
// conn.ErrTimeout.
func (b *Bucket) watchErr(err error) error {
	if errors.Is(err, jsapi.ErrStreamNotFound) {
		return wrap(ErrBucketNotFound, err)
	}
	return deadline.Err(err)
}

// entry converts a consumer message; nil when it is skipped. An entry
// with an unknown KV-Operation is skipped and counted (SkippedEntries):
// it is not a value, and one such entry, which any client allowed to
// publish to the bucket can store, must not end every reader's watch.
func (b *Bucket) entry(m *jsapi.Msg, md jsapi.Metadata, o watchOpts) *Entry {
	if len(m.Subject) <= len(b.pre) {
		return nil
	}
	op, err := opOf(&m.Header)
	if err != nil {
		b.skipped.Add(1)
		return nil
	}
	if o.ignoreDeletes && op != OpPut {
		return nil
	}
	e := &Entry{
		Bucket:    b.name,
		Key:       m.Subject[len(b.pre):],
		Revision:  md.StreamSeq,
		Created:   md.Timestamp,
		Delta:     md.NumPending,
		Operation: op,
	}
	if !o.metaOnly {
		e.Value = m.Data
	}
	return e
}

// SkippedEntries returns how many entries the watches, ListKeys, Keys,
// History and PurgeDeletes of this handle have skipped because their
// KV-Operation header is neither PUT, DEL nor PURGE (ErrUnknownOperation):
// entries no KV client wrote. Each is counted every time a read meets it.
// It also counts the messages those reads skipped because the server did
// not deliver them (pull.ErrStrayMessage): another client published them
// to the read's pull inbox.
func (b *Bucket) SkippedEntries() uint64 { return b.skipped.Load() }

// countSkip counts a message a read's ordered consumer skipped
// (ordered.OnSkip).
func (b *Bucket) countSkip(error) { b.skipped.Add(1) }

// initial yields the initial values of a watch that begins now, and
// ends.
func (b *Bucket) initial(ctx context.Context, filters []string, opts []WatchOpt, yield func(*Entry, error) bool) {
	cfg, o, err := b.watcher(ctx, filters, opts)
	if err != nil {
		yield(nil, err)
		return
	}
	oc, err := b.newWatch(ctx, cfg)
	if err != nil {
		yield(nil, err)
		return
	}
	err = watchx.ReadInitial(ctx, oc, b.readOpts(o), func(m *jsapi.Msg, md jsapi.Metadata) bool {
		e := b.entry(m, md, o)
		return e == nil || yield(e, nil)
	})
	if err != nil {
		yield(nil, b.watchErr(err))
	}
}

// ListKeys yields the keys that have a value (deleted and purged keys are
// left out) among those matching filters (all keys when there is none),
// each once, in the order of their latest revision. It reads headers only
// and ends when it has seen every key that existed when it started; a
// failure is yielded as a final ("", err).
func (b *Bucket) ListKeys(ctx context.Context, filters ...string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		seen := make(map[string]struct{})
		b.initial(ctx, filters, []WatchOpt{IgnoreDeletes(), MetaOnly()}, func(e *Entry, err error) bool {
			if err != nil {
				return yield("", err)
			}
			if _, dup := seen[e.Key]; dup {
				return true
			}
			seen[e.Key] = struct{}{}
			return yield(e.Key, nil)
		})
	}
}

// Keys returns the sorted keys that have a value among those matching
// filters (all keys when there is none); see ListKeys. No key is an empty
// slice, not an error.
func (b *Bucket) Keys(ctx context.Context, filters ...string) ([]string, error) {
	keys := []string{}
	for k, err := range b.ListKeys(ctx, filters...) {
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, nil
}

// History returns every kept revision of the keys matching filter (a key,
// or a filter as in Watch), oldest first, markers included. It fails with
// ErrKeyNotFound when there is none. opts may add IgnoreDeletes or
// MetaOnly.
func (b *Bucket) History(ctx context.Context, filter string, opts ...WatchOpt) ([]*Entry, error) {
	var out []*Entry
	var ferr error
	b.initial(ctx, []string{filter}, append(slices.Clip(opts), IncludeHistory()), func(e *Entry, err error) bool {
		if err != nil {
			ferr = err
			return false
		}
		out = append(out, e)
		return true
	})
	if ferr != nil {
		return nil, ferr
	}
	if len(out) == 0 {
		return nil, ErrKeyNotFound
	}
	return out, nil
}

// PurgeDeletesOpt is an option of PurgeDeletes.
type PurgeDeletesOpt struct{ olderThan time.Duration }

// DefaultMarkerThreshold is how old a delete or purge marker must be for
// PurgeDeletes to remove it (younger markers are kept, only the revisions
// below them are removed).
const DefaultMarkerThreshold = 30 * time.Minute

// DeleteMarkersOlderThan sets the age beyond which PurgeDeletes removes
// markers (default DefaultMarkerThreshold); a negative d removes every
// marker.
func DeleteMarkersOlderThan(d time.Duration) PurgeDeletesOpt {
	return PurgeDeletesOpt{olderThan: d}
}

// PurgeDeletes removes the history of every deleted or purged key: keys
// whose latest entry is a marker keep at most that marker, and markers
// older than the threshold are removed as well.
func (b *Bucket) PurgeDeletes(ctx context.Context, opts ...PurgeDeletesOpt) error {
	olderThan := DefaultMarkerThreshold
	for _, o := range opts {
		if o.olderThan != 0 {
			olderThan = o.olderThan
		}
	}
	var limit time.Time
	if olderThan > 0 {
		limit = time.Now().Add(-olderThan)
	}
	var markers []*Entry
	var ferr error
	b.initial(ctx, nil, []WatchOpt{MetaOnly()}, func(e *Entry, err error) bool {
		if err != nil {
			ferr = err
			return false
		}
		if e.Operation != OpPut {
			markers = append(markers, e)
		}
		return true
	})
	if ferr != nil {
		return ferr
	}
	for _, e := range markers {
		popts := []jsapi.PurgeOpt{jsapi.PurgeSubject(b.pre + e.Key)}
		if olderThan > 0 && e.Created.After(limit) {
			popts = append(popts, jsapi.PurgeKeep(1))
		}
		if _, err := b.stream.Purge(ctx, popts...); err != nil {
			return b.watchErr(err)
		}
	}
	return nil
}
