package jsapi

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/proto"
)

// DefaultTimeout bounds API requests whose context has no deadline.
const DefaultTimeout = 5 * time.Second

// JS is a JetStream view of a connection. It is safe for concurrent use and
// cheap to create.
type JS struct {
	nc      *conn.Conn
	prefix  string // "$JS.API." or "$JS.<domain>.API." or a custom prefix ending in "."
	domain  string
	timeout time.Duration
	// connTimeout is the connection's default request timeout: when it is
	// timeout, a request whose ctx has no deadline is bounded by the
	// connection, with no context derived.
	connTimeout time.Duration
	obs         Observer // the connection's, when it implements Observer (observe.go)
	// remoteLevel is the API level $JS.API.INFO reported, for a JS whose
	// requests the connected server does not answer itself (see
	// serverLevel); levelNotFetched until asked.
	remoteLevel atomic.Int32
	// remote: requests go through a domain or an API prefix, so the
	// connected server's INFO does not describe the server answering them.
	remote bool
	// retries and retryWait: how Publish retries a publish that finds no
	// stream listening or is pushed back (RetryOnNoResponders).
	retries   int
	retryWait time.Duration
}

// defaultPrefix is the API prefix of a JS without Domain or APIPrefix.
const defaultPrefix = "$JS.API."

// Option configures a JS.
type Option struct{ f func(*JS) error }

// apply applies o to c; the zero Option is invalid.
func (o Option) apply(c *JS) error {
	if o.f == nil {
		return fmt.Errorf("%w: zero Option", conn.ErrInvalidOption)
	}
	return o.f(c)
}

// Domain routes requests to the JetStream domain d ("$JS.<d>.API.").
func Domain(d string) Option {
	return Option{func(js *JS) error {
		if d == "" || strings.ContainsAny(d, ". *>\t\r\n") {
			return fmt.Errorf("%w: jsapi domain %q", conn.ErrInvalidOption, d)
		}
		js.domain = d
		js.prefix = "$JS." + d + ".API."
		return nil
	}}
}

// APIPrefix sends requests under prefix instead of "$JS.API" (an account
// import of another account's JetStream API, for example).
func APIPrefix(prefix string) Option {
	return Option{func(js *JS) error {
		prefix = strings.TrimSuffix(prefix, ".")
		if proto.ValidatePublishSubject(prefix) != nil {
			return fmt.Errorf("%w: jsapi API prefix %q", conn.ErrInvalidOption, prefix)
		}
		js.prefix = prefix + "."
		return nil
	}}
}

// Timeout sets the deadline applied to requests whose context has none
// (default 5 s, the connection's default request timeout too). A Timeout
// different from the connection's RequestTimeout costs each such request
// a derived context (a few allocations); pass a ctx with a deadline, or
// give both the same value, to keep requests free of allocations.
func Timeout(d time.Duration) Option {
	return Option{func(js *JS) error {
		if d <= 0 {
			return fmt.Errorf("%w: jsapi timeout %v", conn.ErrInvalidOption, d)
		}
		js.timeout = d
		return nil
	}}
}

// MaxPublishRetries is the most retries RetryOnNoResponders accepts.
const MaxPublishRetries = 32

// RetryOnNoResponders sets how often Publish and PublishMsg retry a
// publish that finds no stream listening (a leader election in progress,
// 503) or is pushed back (429), and the base wait between tries, doubled
// after each (default 2 retries from 250 ms). Such a message was not
// stored, so retrying cannot duplicate it. attempts is 0 (no retry) to
// MaxPublishRetries; wait is not negative, and positive when attempts is;
// wait doubled attempts times must fit a time.Duration. Otherwise New
// fails with an error matching conn.ErrInvalidOption. Publishers built on
// a JS (pubwin, extra) have retry options of their own and do not read
// this one.
func RetryOnNoResponders(attempts int, wait time.Duration) Option {
	return Option{func(js *JS) error {
		if attempts < 0 || attempts > MaxPublishRetries || wait < 0 || (attempts > 0 && wait == 0) ||
			(attempts > 0 && wait > time.Duration(math.MaxInt64)>>attempts) {
			return fmt.Errorf("%w: RetryOnNoResponders(%d, %v)", conn.ErrInvalidOption, attempts, wait)
		}
		js.retries, js.retryWait = attempts, wait
		return nil
	}}
}

// New returns a JetStream view of nc. It does not contact the server.
func New(nc *conn.Conn, opts ...Option) (*JS, error) {
	js := &JS{nc: nc, prefix: defaultPrefix, timeout: DefaultTimeout, retries: 2, retryWait: 250 * time.Millisecond}
	js.remoteLevel.Store(levelNotFetched)
	for _, o := range opts {
		if err := o.apply(js); err != nil {
			return nil, err
		}
	}
	js.connTimeout = nc.RequestTimeout()
	js.obs = observerOf(nc)
	js.remote = js.prefix != defaultPrefix
	return js, nil
}

// Conn returns the underlying connection.
func (js *JS) Conn() *conn.Conn { return js.nc }

// Prefix returns the API subject prefix, ending in ".".
func (js *JS) Prefix() string { return js.prefix }

// Timeout returns the deadline applied to requests whose context has none.
func (js *JS) Timeout() time.Duration { return js.timeout }

// Domain returns the configured domain, or "".
func (js *JS) Domain() string { return js.domain }
