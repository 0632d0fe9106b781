package objstore

import (
	"context"
	"encoding/base64"
	"fmt"
	"iter"
	"strings"
	"sync/atomic"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/watchx"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
)

// WatchOpt is an option of Watch.
type WatchOpt struct{ kind uint8 }

const (
	watchIncludeHistory = iota + 1
	watchIgnoreDeletes
	watchUpdatesOnly
)

// IncludeHistory delivers every stored meta revision first, not only the
// latest of each object. It excludes UpdatesOnly.
func IncludeHistory() WatchOpt { return WatchOpt{watchIncludeHistory} }

// IgnoreDeletes leaves out deleted objects.
func IgnoreDeletes() WatchOpt { return WatchOpt{watchIgnoreDeletes} }

// UpdatesOnly skips the current objects: only changes made after the
// watch started are delivered.
func UpdatesOnly() WatchOpt { return WatchOpt{watchUpdatesOnly} }

type watchOpts struct{ history, ignoreDeletes, updatesOnly bool }

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
	first := s.begin(ctx, opts)
	var ranged atomic.Bool
	return func(yield func(*Info, error) bool) {
		w := first
		if ranged.Swap(true) {
			w = s.begin(ctx, opts)
		}
		if w.err != nil {
			yield(nil, w.err)
			return
		}
		err := w.live.Read(func(m *jsapi.Msg, _ jsapi.Metadata) bool {
			info := s.infoOf(m, w.o)
			return info == nil || yield(info, nil)
		}, func() bool { return yield(nil, nil) })
		if err != nil {
			yield(nil, s.streamErr(err))
		}
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
func (s *Store) begin(ctx context.Context, opts []WatchOpt) watch {
	cfg, o, err := s.watcher(ctx, opts)
	if err != nil {
		return watch{err: err}
	}
	oc, err := s.newWatch(ctx, cfg)
	if err != nil {
		return watch{err: err}
	}
	live, err := watchx.Start(ctx, oc, nil)
	if err != nil {
		return watch{err: s.streamErr(err)}
	}
	return watch{live: live, o: o}
}

func (s *Store) watcher(ctx context.Context, opts []WatchOpt) (ordered.Config, watchOpts, error) {
	var o watchOpts
	if ctx == nil {
		return ordered.Config{}, o, conn.ErrNilContext
	}
	for _, opt := range opts {
		switch opt.kind {
		case watchIncludeHistory:
			o.history = true
		case watchIgnoreDeletes:
			o.ignoreDeletes = true
		case watchUpdatesOnly:
			o.updatesOnly = true
		default:
			return ordered.Config{}, o, fmt.Errorf("%w: zero WatchOpt", conn.ErrInvalidOption)
		}
	}
	if o.history && o.updatesOnly {
		return ordered.Config{}, o, fmt.Errorf("%w: IncludeHistory with UpdatesOnly", conn.ErrInvalidOption)
	}
	cfg := ordered.Config{FilterSubjects: []string{s.metaPre + ">"}}
	switch {
	case o.updatesOnly:
		info, err := s.stream.Info(ctx)
		if err != nil {
			return ordered.Config{}, o, s.streamErr(err)
		}
		cfg.DeliverPolicy, cfg.OptStartSeq = jsapi.DeliverByStartSequence, info.State.LastSeq+1
	case o.history:
		cfg.DeliverPolicy = jsapi.DeliverAll
	default:
		cfg.DeliverPolicy = jsapi.DeliverLastPerSubject
	}
	return cfg, o, nil
}

// newWatch makes a watch's ordered consumer; the first read uses the
// server-side consumer New creates.
func (s *Store) newWatch(ctx context.Context, cfg ordered.Config) (*ordered.Consumer, error) {
	oc, err := ordered.New(ctx, s.js, s.stream.Name(), cfg)
	if err != nil {
		return nil, s.streamErr(err)
	}
	return oc, nil
}

// infoOf decodes a meta message; nil when skipped. Meta that GetInfo
// would refuse is skipped: not valid JSON, or not belonging on its subject
// (another object's name, another store, a NUID that is not a plain NUID).
func (s *Store) infoOf(m *jsapi.Msg, o watchOpts) *Info {
	enc, ok := strings.CutPrefix(m.Subject, s.metaPre)
	if !ok {
		return nil
	}
	name, err := base64.URLEncoding.DecodeString(enc)
	if err != nil {
		return nil
	}
	info, err := s.decodeMeta(m.Data, string(name))
	if err != nil || s.metaSubject(info.Name) != m.Subject {
		return nil // the second: a name encoded some other way
	}
	if o.ignoreDeletes && info.Deleted {
		return nil
	}
	if md, err := m.Metadata(); err == nil {
		info.ModTime = md.Timestamp
	}
	return info
}

// List yields the info of every object in the store (deleted ones too
// with ShowDeleted), in the order they were last changed, and ends. A
// failure is yielded as a final (nil, err); an empty store yields nothing.
func (s *Store) List(ctx context.Context, opts ...Opt) iter.Seq2[*Info, error] {
	return func(yield func(*Info, error) bool) {
		var wo []WatchOpt
		if !showDeleted(opts) {
			wo = append(wo, IgnoreDeletes())
		}
		cfg, o, err := s.watcher(ctx, wo)
		if err != nil {
			yield(nil, err)
			return
		}
		oc, err := s.newWatch(ctx, cfg)
		if err != nil {
			yield(nil, err)
			return
		}
		err = watchx.ReadInitial(ctx, oc, nil, func(m *jsapi.Msg, _ jsapi.Metadata) bool {
			info := s.infoOf(m, o)
			return info == nil || yield(info, nil)
		})
		if err != nil {
			yield(nil, s.streamErr(err))
		}
	}
}
