package extra

import (
	"context"
	"fmt"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/pause"
)

// Limits and defaults.
const (
	// MaxAtomicBatch is the default largest atomic batch, checked before
	// anything is sent: the server's default limit (its
	// jetstream.limits.batch.max_msgs setting). MaxBatchSize raises it for
	// a server configured higher. The end-of-batch marker of CommitEOB
	// does not count.
	MaxAtomicBatch = 1000
	// MaxBatchIDLen is the longest batch ID the server accepts.
	MaxBatchIDLen = 64
	// MaxLastMsgsSubjects is the most subjects GetLastMsgsFor may match.
	MaxLastMsgsSubjects = 1024

	// DefaultAckTimeout bounds each acknowledgement a publisher waits for.
	DefaultAckTimeout = 5 * time.Second
	// DefaultFlow is the fast publisher's requested flow: a flow
	// acknowledgement every this many messages (the server may lower it).
	DefaultFlow = 100
	// MaxFlow is the largest flow the server honours.
	MaxFlow = 65535
	// DefaultMaxOutstandingAcks is how many flow intervals a fast
	// publisher may run ahead of the last acknowledgement.
	DefaultMaxOutstandingAcks = 2
	// DefaultPingInterval is how long a fast publisher waits in silence
	// before pinging the server for its flow state.
	DefaultPingInterval = time.Second
	// DefaultStartRetries and DefaultStartRetryWait: a first message that
	// finds no stream is sent again twice, after 250 ms then 500 ms, as
	// jsapi.Publish does (RetryStart).
	DefaultStartRetries   = 2
	DefaultStartRetryWait = 250 * time.Millisecond
)

// GapMode is what the server does when a fast batch has a hole in its
// sequence (a message lost on the way).
type GapMode uint8

const (
	// GapFail ends the batch at the gap; the publisher fails with a
	// *GapError.
	GapFail GapMode = iota
	// GapOK reports the gap (to OnError) and goes on.
	GapOK
)

func (g GapMode) String() string {
	if g == GapOK {
		return "ok"
	}
	return "fail"
}

type optKind uint8

const (
	optAckFirst optKind = iota + 1
	optAckEvery
	optAckTimeout
	optBatchID
	optFlow
	optMaxOutstanding
	optPingInterval
	optGapMode
	optOnError
	optRetryStart
	optMaxBatchSize
)

// AtomicOpt configures an atomic batch: NewBatchPublisher, PublishBatch
// and PublishBatchSeq. FastOpt configures a FastPublisher. The two are
// distinct types, so an option of one publisher given to the other does
// not compile; the options both publishers have (an ack timeout, retries
// of the first message) have a constructor for each. An out-of-range value
// is rejected with conn.ErrInvalidOption when the publisher is created,
// before anything is sent; so is the zero value.
type AtomicOpt struct{ o batchOpt }

// FastOpt configures a FastPublisher (see AtomicOpt).
type FastOpt struct{ o batchOpt }

// batchOpt is the value both option types carry.
type batchOpt struct {
	kind optKind
	n    int
	d    time.Duration
	s    string
	f    func(error)
}

// AckFirst sets whether the first message of an atomic batch waits for the
// server's acknowledgement, so that a stream that refuses the batch (not
// enabled, too many batches in flight) is found out at once (default on).
func AckFirst(on bool) AtomicOpt {
	n := 0
	if on {
		n = 1
	}
	return AtomicOpt{batchOpt{kind: optAckFirst, n: n}}
}

// AckEvery makes every n-th message of an atomic batch wait for the
// server's acknowledgement (0: none besides the first and the commit).
func AckEvery(n int) AtomicOpt { return AtomicOpt{batchOpt{kind: optAckEvery, n: n}} }

// AckTimeout bounds each acknowledgement an atomic batch waits for: the
// acks AckFirst and AckEvery ask for and the commit's (default 5 s).
func AckTimeout(d time.Duration) AtomicOpt {
	return AtomicOpt{batchOpt{kind: optAckTimeout, d: d}}
}

// FastAckTimeout bounds each acknowledgement a fast publisher waits for:
// flow acks and the final ack, counted from the last sign of life of the
// server (default 5 s).
func FastAckTimeout(d time.Duration) FastOpt { return FastOpt{batchOpt{kind: optAckTimeout, d: d}} }

// BatchID sets the ID of an atomic batch (at most 64 characters without
// whitespace; default: a fresh NUID).
func BatchID(id string) AtomicOpt { return AtomicOpt{batchOpt{kind: optBatchID, s: id}} }

// Flow sets the flow a fast publisher asks for: a flow acknowledgement
// every n stored messages (1..65535, default 100). The server may lower it
// (at most 500, less while other fast batches share the stream).
func Flow(n int) FastOpt { return FastOpt{batchOpt{kind: optFlow, n: n}} }

// MaxOutstandingAcks sets how many flow intervals a fast publisher may run
// ahead of the last flow acknowledgement before Add waits (1..3, default 2).
func MaxOutstandingAcks(n int) FastOpt { return FastOpt{batchOpt{kind: optMaxOutstanding, n: n}} }

// PingInterval sets how long a waiting fast publisher stays silent before
// it pings the server to recover a lost flow acknowledgement (default 1 s,
// at most the ack timeout).
func PingInterval(d time.Duration) FastOpt { return FastOpt{batchOpt{kind: optPingInterval, d: d}} }

// Gap sets a fast publisher's gap mode (default GapFail).
func Gap(m GapMode) FastOpt { return FastOpt{batchOpt{kind: optGapMode, n: int(m)}} }

// OnError is told of each gap (*GapError) and failed message
// (*FastAPIError) of a fast batch as the publisher learns of it, in either
// gap mode: with GapOK the batch goes on; with GapFail (the default) the
// first one ends the batch, and the next Add, Commit or Close also
// returns it. Every error it is given matches ErrFastPublish. It runs on
// the goroutine calling the publisher, during Add, Commit or Close.
func OnError(f func(error)) FastOpt { return FastOpt{batchOpt{kind: optOnError, f: f}} }

// MaxBatchSize sets the most messages an atomic batch may hold, checked
// before each message is sent (default MaxAtomicBatch, n ≥ 1). Raise it
// only for a server whose jetstream.limits.batch.max_msgs allows more;
// the server enforces its own limit regardless, and a batch it finds too
// large fails as the local check does (ErrBatchTooLarge) and stores
// nothing.
func MaxBatchSize(n int) AtomicOpt { return AtomicOpt{batchOpt{kind: optMaxBatchSize, n: n}} }

// RetryStart sets how often an atomic batch sends its first message
// again when no stream answers it (no responders: a stream leader
// being elected, a stream not created yet), waiting wait, then twice as
// long each time (default 2 times, 250 ms). A message nobody received
// stored nothing, so sending it again cannot duplicate it. It applies
// when the first message waits for its acknowledgement (AckFirst, the
// default); attempts 0 fails at once with jsapi.ErrNoStreamResponse. A
// later message without responders still ends the batch: the server may
// have stored the ones before it.
func RetryStart(attempts int, wait time.Duration) AtomicOpt {
	return AtomicOpt{batchOpt{kind: optRetryStart, n: attempts, d: wait}}
}

// FastRetryStart is RetryStart for a fast publisher, whose first message
// always waits for its acknowledgement.
func FastRetryStart(attempts int, wait time.Duration) FastOpt {
	return FastOpt{batchOpt{kind: optRetryStart, n: attempts, d: wait}}
}

// startRetry is the resolved RetryStart.
type startRetry struct {
	attempts int
	wait     time.Duration
}

func (r *startRetry) set(o batchOpt) error {
	if o.n < 0 || (o.n > 0 && o.d <= 0) {
		return fmt.Errorf("%w: RetryStart(%d, %v)", conn.ErrInvalidOption, o.n, o.d)
	}
	r.attempts, r.wait = o.n, o.d
	return nil
}

// pause waits before retry number attempt (0-based) of a first message,
// or until ctx ends, returning ctx's cause.
func (r startRetry) pause(ctx context.Context, attempt int) error {
	return pause.For(ctx, r.wait<<attempt)
}

// atomicSettings are the resolved options of an atomic batch.
type atomicSettings struct {
	ackFirst bool
	ackEvery int
	timeout  time.Duration
	id       string
	retry    startRetry
	max      int // MaxBatchSize
}

func atomicOptions(opts []AtomicOpt) (atomicSettings, error) {
	s := atomicSettings{ackFirst: true, timeout: DefaultAckTimeout,
		retry: startRetry{DefaultStartRetries, DefaultStartRetryWait}, max: MaxAtomicBatch}
	for _, ao := range opts {
		switch o := ao.o; o.kind {
		case optRetryStart:
			if err := s.retry.set(o); err != nil {
				return s, err
			}
		case optAckFirst:
			s.ackFirst = o.n == 1
		case optAckEvery:
			if o.n < 0 {
				return s, fmt.Errorf("%w: AckEvery %d", conn.ErrInvalidOption, o.n)
			}
			s.ackEvery = o.n
		case optAckTimeout:
			if o.d <= 0 {
				return s, fmt.Errorf("%w: AckTimeout %v", conn.ErrInvalidOption, o.d)
			}
			s.timeout = o.d
		case optBatchID:
			if err := validBatchID(o.s); err != nil {
				return s, err
			}
			s.id = o.s
		case optMaxBatchSize:
			if o.n < 1 {
				return s, fmt.Errorf("%w: MaxBatchSize %d", conn.ErrInvalidOption, o.n)
			}
			s.max = o.n
		default:
			return s, fmt.Errorf("%w: zero AtomicOpt", conn.ErrInvalidOption)
		}
	}
	return s, nil
}

// fastSettings are the resolved options of a fast batch.
type fastSettings struct {
	flow    int
	maxOut  int
	timeout time.Duration
	ping    time.Duration
	gap     GapMode
	onError func(error)
	pingSet bool
	retry   startRetry
}

func fastOptions(opts []FastOpt) (fastSettings, error) {
	s := fastSettings{flow: DefaultFlow, maxOut: DefaultMaxOutstandingAcks, timeout: DefaultAckTimeout, ping: DefaultPingInterval,
		retry: startRetry{DefaultStartRetries, DefaultStartRetryWait}}
	for _, fo := range opts {
		switch o := fo.o; o.kind {
		case optRetryStart:
			if err := s.retry.set(o); err != nil {
				return s, err
			}
		case optFlow:
			if o.n < 1 || o.n > MaxFlow {
				return s, fmt.Errorf("%w: Flow %d (1..%d)", conn.ErrInvalidOption, o.n, MaxFlow)
			}
			s.flow = o.n
		case optMaxOutstanding:
			if o.n < 1 || o.n > 3 {
				return s, fmt.Errorf("%w: MaxOutstandingAcks %d (1..3)", conn.ErrInvalidOption, o.n)
			}
			s.maxOut = o.n
		case optAckTimeout:
			if o.d <= 0 {
				return s, fmt.Errorf("%w: AckTimeout %v", conn.ErrInvalidOption, o.d)
			}
			s.timeout = o.d
		case optPingInterval:
			if o.d <= 0 {
				return s, fmt.Errorf("%w: PingInterval %v", conn.ErrInvalidOption, o.d)
			}
			s.ping, s.pingSet = o.d, true
		case optGapMode:
			if o.n != int(GapFail) && o.n != int(GapOK) {
				return s, fmt.Errorf("%w: gap mode %d", conn.ErrInvalidOption, o.n)
			}
			s.gap = GapMode(o.n)
		case optOnError:
			s.onError = o.f
		default:
			return s, fmt.Errorf("%w: zero FastOpt", conn.ErrInvalidOption)
		}
	}
	if !s.pingSet && s.ping > s.timeout {
		s.ping = s.timeout / 2
	}
	if s.ping > s.timeout {
		return s, fmt.Errorf("%w: PingInterval %v exceeds AckTimeout %v", conn.ErrInvalidOption, s.ping, s.timeout)
	}
	return s, nil
}

// validBatchID checks an atomic batch ID as the server would, before I/O.
func validBatchID(id string) error {
	if id == "" || len(id) > MaxBatchIDLen {
		return fmt.Errorf("%w: batch ID %q must have 1..%d characters", errInvalidBatchID, id, MaxBatchIDLen)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c == 0x7f {
			return fmt.Errorf("%w: batch ID %q holds whitespace or a control character", errInvalidBatchID, id)
		}
	}
	return nil
}

type getKind uint8

const (
	getStartSeq getKind = iota + 1
	getStartTime
	getNextBySubject
	getMaxBytes
	getMaxMsgs
	getUpToSeq
	getUpToTime
)

// GetBatchOpt narrows GetBatch; GetLastMsgsOpt narrows GetLastMsgsFor.
// The two are distinct types, so an option of one call given to the other
// does not compile. A bad value, options that contradict each other, or
// the zero value are rejected with conn.ErrInvalidOption before any
// request.
type GetBatchOpt struct{ o getOpt }

// GetLastMsgsOpt narrows GetLastMsgsFor (see GetBatchOpt).
type GetLastMsgsOpt struct{ o getOpt }

// getOpt is the value both option types carry.
type getOpt struct {
	kind getKind
	n    uint64
	i    int
	t    time.Time
	s    string
}

// StartSeq starts GetBatch at stream sequence seq (default 1). It excludes
// StartTime.
func StartSeq(seq uint64) GetBatchOpt { return GetBatchOpt{getOpt{kind: getStartSeq, n: seq}} }

// StartTime starts GetBatch at the first message stored at or after t.
// It excludes StartSeq.
func StartTime(t time.Time) GetBatchOpt { return GetBatchOpt{getOpt{kind: getStartTime, t: t}} }

// NextBySubject keeps only messages whose subject matches subject
// (wildcards allowed) in GetBatch.
func NextBySubject(subject string) GetBatchOpt {
	return GetBatchOpt{getOpt{kind: getNextBySubject, s: subject}}
}

// MaxBytes makes the server stop GetBatch once it has sent about n bytes
// (default: the server's max pending, 64 MiB).
func MaxBytes(n int) GetBatchOpt { return GetBatchOpt{getOpt{kind: getMaxBytes, i: n}} }

// PageBytes sets the size of each page of GetLastMsgsFor, about n bytes
// (default: the server's max pending, 64 MiB): the iterator fetches the
// next page itself, so memory per reply stays bounded and nothing is left
// out.
func PageBytes(n int) GetLastMsgsOpt { return GetLastMsgsOpt{getOpt{kind: getMaxBytes, i: n}} }

// MaxMsgs caps how many messages GetLastMsgsFor returns.
func MaxMsgs(n int) GetLastMsgsOpt { return GetLastMsgsOpt{getOpt{kind: getMaxMsgs, i: n}} }

// UpToSeq makes GetLastMsgsFor return, per subject, the last message at or
// before stream sequence seq. It excludes UpToTime.
func UpToSeq(seq uint64) GetLastMsgsOpt { return GetLastMsgsOpt{getOpt{kind: getUpToSeq, n: seq}} }

// UpToTime makes GetLastMsgsFor return, per subject, the last message
// stored before t. It excludes UpToSeq.
func UpToTime(t time.Time) GetLastMsgsOpt {
	return GetLastMsgsOpt{getOpt{kind: getUpToTime, t: t}}
}
