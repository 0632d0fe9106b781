package objstore

import (
	"context"
	"encoding/base64"
	"iter"
	"strings"

	"github.com/natsio/natsio/internal/streamstore"
	"github.com/natsio/natsio/jsapi"
)

// WatchOpt is an option of Watch.
type WatchOpt struct{ o streamstore.WatchOpt }

// IncludeHistory delivers every stored meta revision first, not only the
// latest of each object. It excludes UpdatesOnly.
func IncludeHistory() WatchOpt { return WatchOpt{streamstore.IncludeHistory()} }

// IgnoreDeletes leaves out deleted objects.
func IgnoreDeletes() WatchOpt { return WatchOpt{streamstore.IgnoreDeletes()} }

// UpdatesOnly skips the current objects: only changes made after the
// watch started are delivered.
func UpdatesOnly() WatchOpt { return WatchOpt{streamstore.UpdatesOnly()} }

// Watch returns a single-use iterator over the store's objects and their
// changes (puts, meta updates, links, deletes), like kv's watch: first the
// current info of every object (in the order they were last changed), then
// one (nil, nil) marking the end of the initial values — also when there
// are none — then every change as it is stored. The watch begins when
// Watch returns, not when the loop starts: the call creates the watch's
// consumer at the server and starts reading it, so the initial values are
// the objects as they were then, and a change made between the call and
// the loop comes after the marker. Until the loop starts, what is read
// waits in a bounded queue; an iterator never ranged over stops reading
// once it is garbage collected or ctx ends. Ranging over the iterator
// again starts a new watch, which begins when that loop starts.
//
// It survives reconnects and server restarts without gap or duplicate,
// and ends with a final (nil, err) only for ctx's error,
// ErrBucketNotFound, conn.ErrClosed or an invalid option. ModTime is the
// time the meta was stored. Meta messages that GetInfo would refuse
// (invalid JSON, ErrMetaMismatch) are skipped: they describe no object of
// this store.
func (s *Store) Watch(ctx context.Context, opts ...WatchOpt) iter.Seq2[*Info, error] {
	return streamstore.Watch(ctx, s.source(), s.prepare(opts), s.watchInfo)
}

// source is the store's stream as watches read it.
func (s *Store) source() *streamstore.Source {
	return &streamstore.Source{Kind: kind, JS: s.js, Stream: s.stream}
}

// prepare checks a watch's options and returns its subjects (the meta)
// and spec.
func (s *Store) prepare(opts []WatchOpt) streamstore.Prepare {
	return func() ([]string, streamstore.Spec, error) {
		var spec streamstore.Spec
		for _, o := range opts {
			if err := spec.Add(o.o); err != nil {
				return nil, spec, err
			}
		}
		return []string{s.metaPre + ">"}, spec, spec.Check()
	}
}

// watchInfo decodes a meta message; skip when it is not yielded. Meta that GetInfo
// would refuse is skipped: not valid JSON, or not belonging on its subject
// (another object's name, another store, a NUID that is not a plain NUID).
func (s *Store) watchInfo(m *jsapi.Msg, md jsapi.Metadata, spec streamstore.Spec) (*Info, bool) {
	enc, ok := strings.CutPrefix(m.Subject, s.metaPre)
	if !ok {
		return nil, true
	}
	name, err := base64.URLEncoding.DecodeString(enc)
	if err != nil {
		return nil, true
	}
	info, err := s.decodeMeta(m.Data, string(name))
	if err != nil || s.metaSubject(info.Name) != m.Subject {
		return nil, true // the second: a name encoded some other way
	}
	if spec.IgnoreDeletes && info.Deleted {
		return nil, true
	}
	info.ModTime = md.Timestamp
	return info, false
}

// List yields the info of every object in the store (deleted ones too
// with ShowDeleted), in the order they were last changed, and ends. A
// failure is yielded as a final (nil, err); an empty store yields nothing.
func (s *Store) List(ctx context.Context, opts ...Opt) iter.Seq2[*Info, error] {
	show, err := showDeleted(opts)
	var wo []WatchOpt
	if !show {
		wo = append(wo, IgnoreDeletes())
	}
	return func(yield func(*Info, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		streamstore.Initial(ctx, s.source(), s.prepare(wo), s.watchInfo, yield)
	}
}
