package kv

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/streamstore"
	"github.com/natsio/natsio/jsapi"
)

// WatchOpt is an option of the watches, Keys, ListKeys and History.
type WatchOpt struct{ o streamstore.WatchOpt }

// IncludeHistory delivers every kept revision of the matching keys first,
// not only the latest. It excludes UpdatesOnly.
func IncludeHistory() WatchOpt { return WatchOpt{streamstore.IncludeHistory()} }

// IgnoreDeletes leaves out delete and purge entries.
func IgnoreDeletes() WatchOpt { return WatchOpt{streamstore.IgnoreDeletes()} }

// MetaOnly delivers entries without their values (the server sends
// headers only).
func MetaOnly() WatchOpt { return WatchOpt{streamstore.MetaOnly()} }

// UpdatesOnly skips the current values: only entries written after the
// watch started are delivered. It excludes IncludeHistory.
func UpdatesOnly() WatchOpt { return WatchOpt{streamstore.UpdatesOnly()} }

// ResumeFromRevision starts with the entries at and after revision (all of
// them, history included): the initial values are what was written since.
// A watcher that remembers the last revision it processed resumes with
// that revision + 1.
func ResumeFromRevision(revision uint64) WatchOpt {
	return WatchOpt{streamstore.Resume(revision)}
}

// WatchHeartbeat sets the idle heartbeat the watch's consumer asks of the
// server (default 5 s, ordered.DefaultHeartbeat). Two missed heartbeats
// make the watch recreate its consumer, so a shorter one notices a lost
// consumer (a server restart, a cluster node gone) sooner, at the price of
// a small message per interval while the bucket is idle. At least 100 ms.
func WatchHeartbeat(d time.Duration) WatchOpt { return WatchOpt{streamstore.Heartbeat(d)} }

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
	return streamstore.Watch(ctx, b.source(), b.prepare(filters, opts), b.entry)
}

// source is the bucket's stream as watches read it.
func (b *Bucket) source() *streamstore.Source {
	return &streamstore.Source{Kind: kind, JS: b.js, Stream: b.stream, OnSkip: b.countSkip}
}

// prepare checks a watch's filters and options and returns its subjects
// and spec.
func (b *Bucket) prepare(filters []string, opts []WatchOpt) streamstore.Prepare {
	return func() ([]string, streamstore.Spec, error) {
		var spec streamstore.Spec
		for _, o := range opts {
			if err := spec.Add(o.o); err != nil {
				return nil, spec, err
			}
		}
		if err := spec.Check(); err != nil {
			return nil, spec, err
		}
		subjects := make([]string, 0, max(len(filters), 1))
		for _, f := range filters {
			if err := validateFilter(f); err != nil {
				return nil, spec, fmt.Errorf("%w: filter %q", err, f)
			}
			subjects = append(subjects, b.pre+f)
		}
		if len(subjects) == 0 {
			subjects = append(subjects, b.pre+">")
		}
		return subjects, spec, nil
	}
}

// entry converts a consumer message; skip when it is not yielded. An
// entry with an unknown KV-Operation is skipped and counted
// (SkippedEntries): it is not a value, and one such entry, which any
// client allowed to publish to the bucket can store, must not end every
// reader's watch.
func (b *Bucket) entry(m *jsapi.Msg, md jsapi.Metadata, spec streamstore.Spec) (*Entry, bool) {
	if len(m.Subject) <= len(b.pre) {
		return nil, true
	}
	op, err := opOf(&m.Header)
	if err != nil {
		b.skipped.Add(1)
		return nil, true
	}
	if spec.IgnoreDeletes && op != OpPut {
		return nil, true
	}
	e := &Entry{
		Bucket:    b.name,
		Key:       m.Subject[len(b.pre):],
		Revision:  md.StreamSeq,
		Created:   md.Timestamp,
		Delta:     md.NumPending,
		Operation: op,
	}
	if !spec.MetaOnly {
		e.Value = m.Data
	}
	return e, false
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
	streamstore.Initial(ctx, b.source(), b.prepare(filters, opts), b.entry, yield)
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

// PurgeDeletesOpt is an option of PurgeDeletes, made by
// DeleteMarkersOlderThan. The zero PurgeDeletesOpt is invalid: it fails
// PurgeDeletes with an error matching conn.ErrInvalidOption, before
// anything is sent.
type PurgeDeletesOpt struct{ olderThan time.Duration }

// DefaultMarkerThreshold is how old a delete or purge marker must be for
// PurgeDeletes to remove it (younger markers are kept, only the revisions
// below them are removed).
const DefaultMarkerThreshold = 30 * time.Minute

// DeleteMarkersOlderThan sets the age beyond which PurgeDeletes removes
// markers (default DefaultMarkerThreshold); a negative d removes every
// marker. A d of 0 is invalid (conn.ErrInvalidOption).
func DeleteMarkersOlderThan(d time.Duration) PurgeDeletesOpt {
	return PurgeDeletesOpt{olderThan: d}
}

// PurgeDeletes removes the history of every deleted or purged key: keys
// whose latest entry is a marker keep at most that marker, and markers
// older than the threshold are removed as well.
func (b *Bucket) PurgeDeletes(ctx context.Context, opts ...PurgeDeletesOpt) error {
	olderThan := DefaultMarkerThreshold
	for _, o := range opts {
		if o.olderThan == 0 {
			return fmt.Errorf("%w: zero PurgeDeletesOpt", conn.ErrInvalidOption)
		}
		olderThan = o.olderThan
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
			return kind.Err(err)
		}
	}
	return nil
}
