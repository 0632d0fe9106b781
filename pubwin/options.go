package pubwin

import (
	"fmt"
	"math"
	"time"

	"github.com/natsio/natsio/conn"
)

// Defaults of the options.
const (
	DefaultMaxPending = 4000
	DefaultStallWait  = 200 * time.Millisecond
	DefaultAckTimeout = 5 * time.Second
)

// Bounds of the options.
const (
	maxMaxPending    = 1 << 20
	maxRetryAttempts = 32
)

// Option configures a Window; pass options to New. Options apply in order,
// so a later one replaces an earlier one of the same kind. An invalid value
// makes New fail with an error matching conn.ErrInvalidOption.
type Option struct{ f func(*options) error }

// apply applies o to c; the zero Option is invalid.
func (o Option) apply(c *options) error {
	if o.f == nil {
		return fmt.Errorf("%w: zero Option", conn.ErrInvalidOption)
	}
	return o.f(c)
}

type options struct {
	maxPending    int
	stallWait     time.Duration
	ackTimeout    time.Duration
	retryAttempts int
	retryWait     time.Duration
}

func defaultOptions() options {
	return options{
		maxPending: DefaultMaxPending,
		stallWait:  DefaultStallWait,
		ackTimeout: DefaultAckTimeout,
	}
}

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: pubwin: "+format, append([]any{conn.ErrInvalidOption}, a...)...)
}

// MaxPending bounds how many publishes await their acks at once (default
// DefaultMaxPending, 4000). A Publish that finds the window full waits for
// a slot (see StallWait). n must be between 1 and 1<<20; the window
// allocates room for 2n futures up front.
func MaxPending(n int) Option {
	return Option{func(o *options) error {
		if n < 1 || n > maxMaxPending {
			return invalid("MaxPending %d is outside 1..%d", n, maxMaxPending)
		}
		o.maxPending = n
		return nil
	}}
}

// StallWait is how long a Publish that finds the window full waits for a
// free slot before it fails with ErrTooManyStalled (default
// DefaultStallWait, 200 ms); the Publish's context ends the wait too. 0
// fails such a Publish at once. d must not be negative.
func StallWait(d time.Duration) Option {
	return Option{func(o *options) error {
		if d < 0 {
			return invalid("negative StallWait %v", d)
		}
		o.stallWait = d
		return nil
	}}
}

// AckTimeout is how long a future waits for its ack, counted from its
// Publish and bounding all its retries, before it fails with
// ErrAckTimeout (default DefaultAckTimeout, 5 s). d must be positive.
func AckTimeout(d time.Duration) Option {
	return Option{func(o *options) error {
		if d <= 0 {
			return invalid("AckTimeout %v must be positive", d)
		}
		o.ackTimeout = d
		return nil
	}}
}

// RetryOnNoResponders sends a message again when its reply says that no
// stream is listening (a 503 no-responders status: a leader election, a
// stream not created yet) or that the stream is pushing back (429,
// jsapi.ErrTooManyRequests; err_code 10167, its ingest queue is full).
// Neither reply means the message was stored, and a retry sends the very
// same message (subject, headers with the Nats-Msg-Id, data), so a retry
// cannot store it twice.
//
// attempts is how many times a message is sent again, at most 32; wait is
// the wait before the first retry, doubling for each further one, and must
// be positive when attempts is. RetryOnNoResponders(0, 0), the default,
// sends nothing again: such a future fails at once with the reply's error.
// RetryOnNoResponders(2, 250*time.Millisecond) retries as jsapi.Publish
// does.
//
// A retried future keeps its slot and ends with the PubAck of the attempt
// that was stored, or with the last reply's error
// (jsapi.ErrNoStreamResponse, jsapi.ErrTooManyRequests) once the attempts
// are used up or the next one could not be sent before AckTimeout. Close
// (ErrClosed) and a disconnect (ErrAckLost) end a waiting retry like any
// pending publish. With retries on, each pending message's data is copied
// into a pooled buffer (no allocation once warm), released when its future
// ends; this costs client CPU, which is why retries are off by default.
// jsapi.RetryOnNoResponders passed to Publish has no effect.
func RetryOnNoResponders(attempts int, wait time.Duration) Option {
	return Option{func(o *options) error {
		switch {
		case attempts < 0 || attempts > maxRetryAttempts:
			return invalid("retry attempts %d is outside 0..%d", attempts, maxRetryAttempts)
		case attempts > 0 && wait <= 0:
			return invalid("retry wait %v must be positive", wait)
		case attempts > 0 && wait > math.MaxInt64>>(attempts-1):
			return invalid("retry wait %v doubled %d times overflows", wait, attempts-1)
		case attempts == 0 && wait < 0:
			return invalid("negative retry wait %v", wait)
		}
		o.retryAttempts, o.retryWait = attempts, wait
		return nil
	}}
}
