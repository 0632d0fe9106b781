package conn

import (
	"errors"
	"strings"

	"github.com/natsio/natsio/proto"
)

// Errors returned by Conn methods. Match them with errors.Is.
var (
	ErrClosed             = errors.New("nats: connection closed")
	ErrDraining           = errors.New("nats: connection draining")
	ErrDisconnected       = errors.New("nats: disconnected before completion")
	ErrTimeout            = errors.New("nats: timeout")
	ErrNoServers          = errors.New("nats: no servers available")
	ErrNoResponders       = errors.New("nats: no responders available for request")
	ErrMaxPayload         = errors.New("nats: message exceeds server max_payload")
	ErrHeadersUnsupported = errors.New("nats: server does not support headers")
	ErrReconnectBuffer    = errors.New("nats: reconnect buffer full")
	ErrSlowConsumer       = errors.New("nats: slow consumer, messages dropped")
	ErrBadSubscription    = errors.New("nats: invalid or closed subscription")
	ErrSubscriptionActive = errors.New("nats: subscription already has a consumer")
	ErrStaleConnection    = errors.New("nats: stale connection")
	ErrTLSRequired        = errors.New("nats: secure connection required")
	ErrNilContext         = errors.New("nats: nil context")
	ErrInvalidOption      = errors.New("nats: invalid option")
	ErrBadSubject         = proto.ErrBadSubject
	ErrBadQueue           = proto.ErrBadQueue
	ErrBadHeader          = proto.ErrBadHeader
	// ErrSubjectTooLong: a subject, with the reply subject or queue group
	// sent on the same protocol line, would make the line longer than the
	// server's max_control_line (MaxControlLine), for which the server
	// closes the connection. Nothing was sent. It also matches
	// ErrBadSubject.
	ErrSubjectTooLong error = subjectTooLong{}
)

type subjectTooLong struct{}

func (subjectTooLong) Error() string     { return "nats: subject too long for the server's control line" }
func (subjectTooLong) Is(err error) bool { return err == ErrBadSubject }

// Server -ERR classes. A *ServerError matches one of these with errors.Is.
var (
	ErrAuthorization      = errors.New("nats: authorization violation")
	ErrAuthExpired        = errors.New("nats: authentication expired")
	ErrAuthRevoked        = errors.New("nats: authentication revoked")
	ErrAccountExpired     = errors.New("nats: account authentication expired")
	ErrPermissions        = errors.New("nats: permissions violation")
	ErrMaxConnections     = errors.New("nats: maximum connections exceeded")
	ErrMaxSubscriptions   = errors.New("nats: maximum subscriptions exceeded")
	ErrServerMaxPayload   = errors.New("nats: maximum payload violation")
	ErrServerSecureNeeded = errors.New("nats: server requires TLS")
	ErrServerOther        = errors.New("nats: server error")
)

// ServerError is an -ERR the server sent. Text is the server's message,
// escaped and truncated so it is safe to log.
type ServerError struct {
	Kind error // one of the ErrXxx server classes above, or ErrStaleConnection
	Text string
}

func (e *ServerError) Error() string { return e.Kind.Error() + ": " + e.Text }
func (e *ServerError) Unwrap() error { return e.Kind }

// Fatal reports whether the server closes the connection after sending it.
// Permission violations leave the connection up.
func (e *ServerError) Fatal() bool { return e.Kind != ErrPermissions }

// classifyErr maps -ERR text to a *ServerError.
func classifyErr(text []byte) *ServerError {
	t := string(text)
	if len(t) > 256 {
		t = t[:256]
	}
	l := strings.ToLower(t)
	var kind error
	switch {
	case strings.HasPrefix(l, "stale connection"):
		kind = ErrStaleConnection
	case strings.HasPrefix(l, "authorization violation"), strings.HasPrefix(l, "authentication timeout"):
		kind = ErrAuthorization
	case strings.Contains(l, "account authentication expired"):
		kind = ErrAccountExpired
	case strings.Contains(l, "authentication expired"):
		kind = ErrAuthExpired
	case strings.Contains(l, "authentication revoked"):
		kind = ErrAuthRevoked
	case strings.HasPrefix(l, "permissions violation"):
		kind = ErrPermissions
	case strings.HasPrefix(l, "maximum connections exceeded"):
		kind = ErrMaxConnections
	case strings.HasPrefix(l, "maximum subscriptions exceeded"):
		kind = ErrMaxSubscriptions
	case strings.HasPrefix(l, "maximum payload violation"):
		kind = ErrServerMaxPayload
	case strings.HasPrefix(l, "secure connection - tls required"):
		kind = ErrServerSecureNeeded
	default:
		kind = ErrServerOther
	}
	return &ServerError{Kind: kind, Text: sanitize(t)}
}

// sanitize makes server text safe for logs: printable ASCII only.
func sanitize(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f {
			b.WriteByte('?')
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
