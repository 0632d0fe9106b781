package streamstore

import (
	"context"
	"fmt"
	"iter"
	"sync/atomic"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/watchx"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
)

// WatchOpt is one watch option; kv and objstore wrap it in their own
// WatchOpt and offer the constructors that apply to them.
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

// IncludeHistory delivers every kept revision first.
func IncludeHistory() WatchOpt { return WatchOpt{kind: watchIncludeHistory} }

// IgnoreDeletes leaves out deletes.
func IgnoreDeletes() WatchOpt { return WatchOpt{kind: watchIgnoreDeletes} }

// MetaOnly reads headers only.
func MetaOnly() WatchOpt { return WatchOpt{kind: watchMetaOnly} }

// UpdatesOnly skips the initial values.
func UpdatesOnly() WatchOpt { return WatchOpt{kind: watchUpdatesOnly} }

// Resume starts at stream sequence rev.
func Resume(rev uint64) WatchOpt { return WatchOpt{kind: watchResume, rev: rev} }

// Heartbeat sets the consumer's idle heartbeat.
func Heartbeat(d time.Duration) WatchOpt { return WatchOpt{kind: watchHeartbeat, d: d} }

// Spec is a resolved watch.
type Spec struct {
	History, IgnoreDeletes, MetaOnly, UpdatesOnly bool
	Resume                                        uint64
	Heartbeat                                     time.Duration
}

// Add applies o to s; an invalid o (the zero value, resume from 0, a
// heartbeat under 100 ms) is conn.ErrInvalidOption.
func (s *Spec) Add(o WatchOpt) error {
	switch o.kind {
	case watchIncludeHistory:
		s.History = true
	case watchIgnoreDeletes:
		s.IgnoreDeletes = true
	case watchMetaOnly:
		s.MetaOnly = true
	case watchUpdatesOnly:
		s.UpdatesOnly = true
	case watchResume:
		if o.rev == 0 {
			return fmt.Errorf("%w: resume from revision 0", conn.ErrInvalidOption)
		}
		s.Resume = o.rev
	case watchHeartbeat:
		if o.d < 100*time.Millisecond {
			return fmt.Errorf("%w: watch heartbeat %v below 100ms", conn.ErrInvalidOption, o.d)
		}
		s.Heartbeat = o.d
	default:
		return fmt.Errorf("%w: zero WatchOpt", conn.ErrInvalidOption)
	}
	return nil
}

// Check reports options that exclude each other.
func (s *Spec) Check() error {
	if s.History && s.UpdatesOnly {
		return fmt.Errorf("%w: IncludeHistory with UpdatesOnly", conn.ErrInvalidOption)
	}
	if s.Resume > 0 && s.UpdatesOnly {
		return fmt.Errorf("%w: ResumeFromRevision with UpdatesOnly", conn.ErrInvalidOption)
	}
	return nil
}

// Source is a store's stream, read by watches.
type Source struct {
	Kind   *Kind
	JS     *jsapi.JS
	Stream *jsapi.Stream
	// OnSkip, when set, is told of each message a watch's consumer skips
	// (ordered.OnSkip).
	OnSkip func(error)
}

// consumer makes the ordered consumer of a watch over subjects as spec
// says: the latest message of each subject, every kept one (History),
// from a sequence (Resume) or only those stored after now (UpdatesOnly:
// a stream info first, and the consumer starts right after the last
// sequence, so that one recreated before its first message resumes there
// too, which DeliverNew would not). The consumer is created at the
// server: the first read uses it.
func (src *Source) consumer(ctx context.Context, subjects []string, spec Spec) (*ordered.Consumer, error) {
	cfg := ordered.Config{FilterSubjects: subjects, HeadersOnly: spec.MetaOnly}
	switch {
	case spec.Resume > 0:
		cfg.DeliverPolicy, cfg.OptStartSeq = jsapi.DeliverByStartSequence, spec.Resume
	case spec.UpdatesOnly:
		info, err := src.Stream.Info(ctx)
		if err != nil {
			return nil, src.Kind.Err(err)
		}
		cfg.DeliverPolicy, cfg.OptStartSeq = jsapi.DeliverByStartSequence, info.State.LastSeq+1
	case spec.History:
		cfg.DeliverPolicy = jsapi.DeliverAll
	default:
		cfg.DeliverPolicy = jsapi.DeliverLastPerSubject
	}
	oc, err := ordered.New(ctx, src.JS, src.Stream.Name(), cfg)
	if err != nil {
		return nil, src.Kind.Err(err)
	}
	return oc, nil
}

// readOpts are the options of a watch's reads.
func (src *Source) readOpts(spec Spec) []ordered.Opt {
	var opts []ordered.Opt
	if src.OnSkip != nil {
		opts = append(opts, ordered.OnSkip(src.OnSkip))
	}
	if spec.Heartbeat > 0 {
		opts = append(opts, ordered.Heartbeat(spec.Heartbeat))
	}
	return opts
}

// Each converts a watch's message; skip is true when it is not yielded.
// spec is the watch's.
type Each[T any] func(m *jsapi.Msg, md jsapi.Metadata, spec Spec) (v T, skip bool)

// Prepare checks a watch and returns its subjects and spec.
type Prepare func() ([]string, Spec, error)

// Watch returns a watch over subjects that begins now (watchx.Start) and
// again each time its iterator is ranged over after the first: it yields
// each message as each converts it, a zero T with a nil error after the
// initial values, and a final (zero, err) for what ends it. A nil ctx or
// prepare's error is the iterator's only yield.
func Watch[T any](ctx context.Context, src *Source, prepare Prepare, each Each[T]) iter.Seq2[T, error] {
	type begun struct {
		live *watchx.Live
		spec Spec
		err  error
	}
	begin := func() begun {
		oc, spec, err := src.open(ctx, prepare)
		if err != nil {
			return begun{err: err}
		}
		live, err := watchx.Start(ctx, oc, src.readOpts(spec))
		if err != nil {
			return begun{err: src.Kind.Err(err)}
		}
		return begun{live: live, spec: spec}
	}
	first := begin()
	var ranged atomic.Bool
	return func(yield func(T, error) bool) {
		var zero T
		w := first
		if ranged.Swap(true) {
			w = begin()
		}
		if w.err != nil {
			yield(zero, w.err)
			return
		}
		err := w.live.Read(func(m *jsapi.Msg, md jsapi.Metadata) bool {
			v, skip := each(m, md, w.spec)
			return skip || yield(v, nil)
		}, func() bool { return yield(zero, nil) })
		if err != nil {
			yield(zero, src.Kind.Err(err))
		}
	}
}

// open checks a watch and makes its consumer.
func (src *Source) open(ctx context.Context, prepare Prepare) (*ordered.Consumer, Spec, error) {
	if ctx == nil {
		return nil, Spec{}, conn.ErrNilContext
	}
	subjects, spec, err := prepare()
	if err != nil {
		return nil, spec, err
	}
	oc, err := src.consumer(ctx, subjects, spec)
	return oc, spec, err
}

// Initial yields the initial values of a watch that begins now, as each
// converts them, and ends; a failure is a final (zero, err).
func Initial[T any](ctx context.Context, src *Source, prepare Prepare, each Each[T], yield func(T, error) bool) {
	var zero T
	oc, spec, err := src.open(ctx, prepare)
	if err != nil {
		yield(zero, err)
		return
	}
	err = watchx.ReadInitial(ctx, oc, src.readOpts(spec), func(m *jsapi.Msg, md jsapi.Metadata) bool {
		v, skip := each(m, md, spec)
		return skip || yield(v, nil)
	})
	if err != nil {
		yield(zero, src.Kind.Err(err))
	}
}
