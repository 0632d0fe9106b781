package conn

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/natsio/natsio/proto"
)

// Defaults for options left unset.
const (
	DefaultConnectTimeout      = 5 * time.Second
	DefaultReconnectWait       = 2 * time.Second
	DefaultMaxReconnectWait    = 30 * time.Second
	DefaultReconnectJitter     = 500 * time.Millisecond
	DefaultReconnectBuffer     = 8 << 20
	DefaultPingInterval        = 10 * time.Second
	DefaultMaxPingsOutstanding = 2
	DefaultPendingMsgs         = 512 * 1024
	DefaultPendingBytes        = 64 << 20
	DefaultConnPendingBytes    = 256 << 20
	DefaultDrainTimeout        = 30 * time.Second
	DefaultWriteTimeout        = 10 * time.Second
	DefaultRequestTimeout      = 5 * time.Second
	DefaultInboxPrefix         = "_INBOX"
	// DefaultMaxControlLine is nats-server's default max_control_line:
	// the longest protocol line, after its verb, a client may send.
	DefaultMaxControlLine = proto.DefaultMaxControlLine
)

// Option configures a connection; pass options to Connect.
type Option struct{ f func(*options) error }

// apply applies o to c; the zero Option is invalid.
func (o Option) apply(c *options) error {
	if o.f == nil {
		return invalid("zero Option")
	}
	return o.f(c)
}

// DialFunc dials a server address ("host:port"). The default is a
// net.Dialer's DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// NonceSigner signs the server's nonce for nkey or JWT authentication.
type NonceSigner func(nonce []byte) ([]byte, error)

type options struct {
	name             string
	user             string
	pass, token      secret // hidden from printing, see secret
	nkeyPub          string
	signer           NonceSigner
	userJWT          func() (string, error)
	secretFiles      []string // seed and creds files, checked by warnReadableSecrets
	tlsConfig        *tls.Config
	secure           bool
	tlsFirst         bool
	connectTimeout   time.Duration
	noReconnect      bool
	retryOnFailed    bool
	maxReconnects    int
	reconnectWait    time.Duration
	maxReconnectWait time.Duration
	reconnectJitter  time.Duration
	reconnectDelay   func(attempt int) time.Duration
	reconnectTo      ReconnectToServerHandler
	backoffAll       bool // ReconnectBackoff: every failure doubles the wait
	reconnectBuf     int
	pingInterval     time.Duration
	maxPingsOut      int
	noRandomize      bool
	ignoreDiscovered bool
	discoveredCreds  bool
	pinDiscovered    bool
	noEcho           bool
	inboxPrefix      string
	logger           *slog.Logger
	onEvent          func(Event)
	pendingMsgs      int
	pendingBytes     int
	connPendingBytes int64
	dial             DialFunc
	wsCompression    bool
	stdSocketIO      bool
	drainTimeout     time.Duration
	writeTimeout     time.Duration
	requestTimeout   time.Duration
	maxControlLine   int
	observer         Observer // observe.go
}

func defaultOptions() options {
	return options{
		connectTimeout:   DefaultConnectTimeout,
		maxReconnects:    -1,
		reconnectWait:    DefaultReconnectWait,
		maxReconnectWait: DefaultMaxReconnectWait,
		reconnectJitter:  DefaultReconnectJitter,
		reconnectBuf:     DefaultReconnectBuffer,
		pingInterval:     DefaultPingInterval,
		maxPingsOut:      DefaultMaxPingsOutstanding,
		inboxPrefix:      DefaultInboxPrefix,
		pendingMsgs:      DefaultPendingMsgs,
		pendingBytes:     DefaultPendingBytes,
		connPendingBytes: DefaultConnPendingBytes,
		drainTimeout:     DefaultDrainTimeout,
		writeTimeout:     DefaultWriteTimeout,
		requestTimeout:   DefaultRequestTimeout,
		maxControlLine:   DefaultMaxControlLine,
		logger:           slog.New(slog.DiscardHandler),
	}
}

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, a...)...)
}

// Name sets the client name the server shows in monitoring.
func Name(name string) Option {
	return Option{func(o *options) error { o.name = name; return nil }}
}

// UserInfo authenticates with a user name and password. It overrides
// credentials in the URL.
func UserInfo(user, password string) Option {
	return Option{func(o *options) error { o.user, o.pass = user, hide(password); return nil }}
}

// Token authenticates with a token. It overrides a token in the URL.
func Token(token string) Option {
	return Option{func(o *options) error { o.token = hide(token); return nil }}
}

// ConnectTimeout bounds each connection attempt as a whole: dial, TLS, the
// INFO/CONNECT handshake and the first PONG. Default 5 s.
func ConnectTimeout(d time.Duration) Option {
	return Option{func(o *options) error {
		if d <= 0 {
			return invalid("connect timeout %v", d)
		}
		o.connectTimeout = d
		return nil
	}}
}

// RetryOnFailedConnect makes Connect return a connection even when no
// server could be reached: after one failed attempt to each server, it
// goes on trying in the background as it would to reconnect (the same
// waits and MaxReconnects), and Connect returns it disconnected. Each
// failed attempt is reported as an EventAttemptFailed, and the first
// success as EventConnected. Meanwhile publishes go to the reconnect
// buffer (checked against a max payload of 1 MiB, the server's default,
// until a server says otherwise), subscriptions are registered and sent
// once connected, and requests and Flush wait or fail as while
// reconnecting. WaitConnected waits for the connection. Connect still
// fails at once for invalid options or when ctx ends first.
func RetryOnFailedConnect() Option {
	return Option{func(o *options) error { o.retryOnFailed = true; return nil }}
}

// NoReconnect closes the connection when it is lost instead of reconnecting.
func NoReconnect() Option {
	return Option{func(o *options) error { o.noReconnect = true; return nil }}
}

// MaxReconnects caps reconnect attempts per server, counted since its last
// successful connection: after n failed attempts the server leaves the
// pool, and with no server left the connection closes with ErrNoServers.
// 0 means no attempt at all (like NoReconnect); a negative value, the
// default, retries forever.
func MaxReconnects(n int) Option {
	return Option{func(o *options) error { o.maxReconnects = n; return nil }}
}

// ReconnectWait makes the delay before each attempt to reconnect to a
// server fixed at d, plus the jitter (ReconnectJitter), whatever the
// failure: servers that refuse the client are retried as often as servers
// that are down.
//
// The default policy waits DefaultReconnectWait (2 s) plus the jitter
// before each attempt to a server that could not be reached, so the client
// is back at most 2.5 s after its server is, however long the outage
// lasted; a server that refuses the client (an -ERR such as an
// authorization violation or a connection limit, a TLS failure) waits 2 s
// doubled after each further refusal, up to DefaultMaxReconnectWait (30 s).
func ReconnectWait(d time.Duration) Option {
	return Option{func(o *options) error {
		if d < 0 {
			return invalid("reconnect wait %v", d)
		}
		o.reconnectWait, o.maxReconnectWait, o.backoffAll = d, d, false
		return nil
	}}
}

// ReconnectBackoff sets the delay before the first attempt to reconnect to
// a server to base, doubling after each failed attempt of any kind up to
// max, plus the jitter (ReconnectJitter). Without it (see ReconnectWait)
// only refusals double the wait, from 2 s to 30 s.
func ReconnectBackoff(base, max time.Duration) Option {
	return Option{func(o *options) error {
		if base < 0 || max < base {
			return invalid("reconnect backoff %v to %v", base, max)
		}
		o.reconnectWait, o.maxReconnectWait, o.backoffAll = base, max, true
		return nil
	}}
}

// ReconnectJitter adds a random delay of up to j to each reconnect wait,
// so that many clients losing one server do not return at the same
// instant (default 500 ms; 0 for none).
func ReconnectJitter(j time.Duration) Option {
	return Option{func(o *options) error {
		if j < 0 {
			return invalid("reconnect jitter %v", j)
		}
		o.reconnectJitter = j
		return nil
	}}
}

// ReconnectDelay replaces the backoff with f, given the number of the
// attempt to the chosen server that it delays: 1 for the first attempt
// after the connection was lost, k+1 after k failed attempts.
func ReconnectDelay(f func(attempt int) time.Duration) Option {
	return Option{func(o *options) error {
		if f == nil {
			return invalid("nil reconnect delay")
		}
		o.reconnectDelay = f
		return nil
	}}
}

// ReconnectBuffer bounds the bytes of publishes buffered while
// disconnected (default 8 MiB). Beyond it Publish fails at once with
// ErrReconnectBuffer. A negative size disables buffering: every publish
// while disconnected fails.
func ReconnectBuffer(size int) Option {
	return Option{func(o *options) error { o.reconnectBuf = size; return nil }}
}

// PingInterval sets how often the client pings the server (default 10 s).
// With MaxPingsOutstanding it bounds how long a dead link goes unnoticed:
// interval × (max + 1), 30 s by default.
func PingInterval(interval time.Duration) Option {
	return Option{func(o *options) error {
		if interval <= 0 {
			return invalid("ping interval %v", interval)
		}
		o.pingInterval = interval
		return nil
	}}
}

// MaxPingsOutstanding sets how many pings may go unanswered before the
// link is declared dead and the client reconnects (default 2).
func MaxPingsOutstanding(n int) Option {
	return Option{func(o *options) error {
		if n < 1 {
			return invalid("max pings outstanding %d", n)
		}
		o.maxPingsOut = n
		return nil
	}}
}

// DontRandomize keeps the server list in the given order.
func DontRandomize() Option {
	return Option{func(o *options) error { o.noRandomize = true; return nil }}
}

// IgnoreDiscoveredServers ignores the servers a cluster gossips in INFO.
func IgnoreDiscoveredServers() Option {
	return Option{func(o *options) error { o.ignoreDiscovered = true; return nil }}
}

// SendCredentialsToDiscovered allows credentials to be sent to gossiped
// servers over plaintext connections. By default none is sent to a
// discovered server without TLS: no user, password or token, no JWT, no
// nkey and no nonce signature (a gossiped server could relay a signature
// of its own nonce to another).
func SendCredentialsToDiscovered() Option {
	return Option{func(o *options) error { o.discoveredCreds = true; return nil }}
}

// PinDiscoveredServers verifies the TLS certificate of every gossiped
// server against the name of the first server named in the URL (the first
// one with a host name), the name the user trusts. By default a gossiped
// host name is verified against itself, so any certificate a trusted CA
// issued for that name is accepted (and receives the credentials), and a
// gossiped IP address against the first named server's name.
func PinDiscoveredServers() Option {
	return Option{func(o *options) error { o.pinDiscovered = true; return nil }}
}

// NoEcho stops the server from delivering this connection's own publishes
// to its subscriptions.
func NoEcho() Option {
	return Option{func(o *options) error { o.noEcho = true; return nil }}
}

// InboxPrefix sets the prefix of request inboxes (default "_INBOX"). It must
// be a valid subject without wildcards.
func InboxPrefix(prefix string) Option {
	return Option{func(o *options) error {
		if err := validateInboxPrefix(prefix); err != nil {
			return err
		}
		o.inboxPrefix = prefix
		return nil
	}}
}

// Logger sets the logger for connection state changes (never per message).
// Default: discard.
func Logger(l *slog.Logger) Option {
	return Option{func(o *options) error {
		if l == nil {
			return invalid("nil logger")
		}
		o.logger = l
		return nil
	}}
}

// OnEvent registers f for connection events. Events are delivered in order
// from one goroutine; f should return quickly. Events that find the queue
// full are dropped and counted (Stats.EventsDropped).
func OnEvent(f func(Event)) Option {
	return Option{func(o *options) error {
		if f == nil {
			return invalid("nil event handler")
		}
		o.onEvent = f
		return nil
	}}
}

// PendingLimits sets the default per-subscription bounds of messages held
// for a slow consumer (default 524288 messages and 64 MiB). A message counts
// its subject, reply, header and data plus 128 bytes. Beyond them
// messages are dropped, counted and reported as a slow consumer.
func PendingLimits(msgs, bytes int) Option {
	return Option{func(o *options) error {
		if msgs <= 0 || bytes <= 0 {
			return invalid("pending limits %d msgs, %d bytes", msgs, bytes)
		}
		o.pendingMsgs, o.pendingBytes = msgs, bytes
		return nil
	}}
}

// ConnectionPendingLimit bounds the bytes queued in all subscriptions of
// the connection together (default 256 MiB; counted as PendingLimits
// counts), so that many slow
// subscriptions cannot exhaust memory. Beyond it messages are dropped,
// counted and reported like a full subscription queue.
func ConnectionPendingLimit(bytes int) Option {
	return Option{func(o *options) error {
		if bytes <= 0 {
			return invalid("connection pending limit %d", bytes)
		}
		o.connPendingBytes = int64(bytes)
		return nil
	}}
}

// Dialer replaces how TCP connections are dialed (tests use it to insert
// proxies or pipes).
func Dialer(f DialFunc) Option {
	return Option{func(o *options) error {
		if f == nil {
			return invalid("nil dialer")
		}
		o.dial = f
		return nil
	}}
}

// stdSocketIO makes the connection read and write its TCP socket through
// net.TCPConn's own calls. By default, on Linux, it makes the same
// non-blocking calls without the runtime's per-call bookkeeping
// (docs/core.md, "Socket I/O on Linux"); this option is the way back, for
// comparison in tests and benchmarks. Other systems always use
// net.TCPConn's calls.
func stdSocketIO() Option {
	return Option{func(o *options) error { o.stdSocketIO = true; return nil }}
}

// WebSocketCompression offers permessage-deflate on ws:// and wss://
// connections.
func WebSocketCompression() Option {
	return Option{func(o *options) error { o.wsCompression = true; return nil }}
}

// DrainTimeout bounds Drain when its context has no deadline (default 30 s).
func DrainTimeout(d time.Duration) Option {
	return Option{func(o *options) error {
		if d <= 0 {
			return invalid("drain timeout %v", d)
		}
		o.drainTimeout = d
		return nil
	}}
}

// WriteTimeout bounds one socket write; a write that cannot complete in
// time drops the connection (default 10 s). The deadline is renewed only
// when less than three quarters of it remain, so a blocked write fails
// after between ¾·d and d.
func WriteTimeout(d time.Duration) Option {
	return Option{func(o *options) error {
		if d <= 0 {
			return invalid("write timeout %v", d)
		}
		o.writeTimeout = d
		return nil
	}}
}

// RequestTimeout bounds Request and Flush calls whose context has no
// deadline (default 5 s).
func RequestTimeout(d time.Duration) Option {
	return Option{func(o *options) error {
		if d <= 0 {
			return invalid("request timeout %v", d)
		}
		o.requestTimeout = d
		return nil
	}}
}

// MaxControlLine sets the server's max_control_line, which INFO does not
// announce (default DefaultMaxControlLine, 4096, the server's default).
// A server closes the connection of a client whose protocol line, after
// its verb, is longer: "PUB <subject> [reply] <size>", "HPUB …" and
// "SUB <subject> [queue] <sid>". Publish, PublishMsg, Request and the
// subscribe calls therefore refuse, before anything is sent and leaving
// the connection as it is, a subject that with its reply subject or queue
// group would make the line longer (ErrSubjectTooLong). Set n to the
// server's value when it is configured otherwise; n must be at least 64.
// Lines from the server are accepted up to n plus 4096 bytes, for what a
// delivery adds (subscription IDs, reply subjects the server composes).
func MaxControlLine(n int) Option {
	return Option{func(o *options) error {
		if n < 64 {
			return invalid("max control line %d", n)
		}
		o.maxControlLine = n
		return nil
	}}
}

// validateInboxPrefix checks an inbox prefix: a valid subject without
// wildcards and without a trailing dot.
func validateInboxPrefix(p string) error {
	if err := proto.ValidatePublishSubject(p); err != nil {
		return fmt.Errorf("%w: inbox prefix %q", ErrInvalidOption, p)
	}
	return nil
}
