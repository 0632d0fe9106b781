package pull

import (
	"context"
	"errors"
	"strings"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

// Errors of pull consumers. A status reply of the server is a *jsapi.StatusError
// that matches one of them with errors.Is.
var (
	// ErrNoMessages: Next found no message: a no-wait pull found none
	// (404), or the wait ended (ErrFetchTimeout matches it). (Fetch returns
	// an empty batch instead.) It is jsapi.ErrNoMessages, the one value
	// that ordered.ErrNoMessages (an ordered read's IdleTimeout) and
	// extra.ErrNoMessages (a batch get that matched nothing) are too.
	ErrNoMessages = jsapi.ErrNoMessages
	// ErrFetchTimeout: Next waited until its context's deadline
	// (DefaultFetchWait without one) and no message came, or a Fetch or
	// Next was called with a deadline already past. It matches
	// ErrNoMessages, conn.ErrTimeout and context.DeadlineExceeded.
	ErrFetchTimeout error = fetchTimeout{}
	// ErrConsumerDeleted: the consumer was deleted (409 Consumer Deleted,
	// or no consumer answers pulls any more), as consumer info confirmed.
	// Terminal.
	ErrConsumerDeleted = errors.New("pull: consumer deleted")
	// ErrPushConsumer: the consumer is a push consumer (a "409 Consumer is
	// push based", as consumer info confirmed). Terminal.
	ErrPushConsumer = errors.New("pull: consumer is push based")
	// ErrBadPull: the server rejected the pull request (400, 412, or a
	// limit of the consumer exceeded), and consumer info confirmed that
	// the consumer's configuration refuses such a pull. Terminal.
	ErrBadPull = errors.New("pull: pull request rejected")
	// ErrRequestExpired: a pull expired (408) — normal, not terminal.
	ErrRequestExpired = errors.New("pull: pull request expired")
	// ErrLeadershipChange: the consumer moved to another server (409);
	// pending pulls are gone and are sent again. Not terminal.
	ErrLeadershipChange = errors.New("pull: consumer leadership changed")
	// ErrPinMismatch: another client holds the pin of the priority group
	// (423); the pin id is dropped and pulling continues. Not terminal.
	ErrPinMismatch = errors.New("pull: priority group pin id mismatch")
	// ErrNoHeartbeat: two idle heartbeats were missed; pending pulls are
	// sent again. Not terminal.
	ErrNoHeartbeat = errors.New("pull: missed idle heartbeats")
	// ErrReconnected: the connection was lost and made again; the pulls
	// sent before are gone with the old link and Messages sends them
	// again. Not terminal: reported to OnError once per reconnect.
	ErrReconnected = errors.New("pull: reconnected, pulls sent again")
	// ErrMaxWaiting: the consumer has too many waiting pulls (409). Not
	// terminal: Messages pulls again after a pause.
	ErrMaxWaiting = errors.New("pull: consumer has too many waiting pulls")
	// ErrMessageTooLarge: the next message is larger than what is left of
	// the pull's MaxBytes (409 Message Size Exceeds MaxBytes). It ends that
	// pull only. Fetch returns it when nothing arrived; Messages reports it
	// to OnError and pulls again after a pause (each time, while such a
	// message stays next: raise MaxBytes).
	ErrMessageTooLarge = errors.New("pull: next message is larger than MaxBytes")
	// ErrUnconfirmedStatus: a status claiming a terminal condition (409
	// Consumer Deleted, 409 Consumer is push based, 400, 412, 409 Exceeded
	// MaxRequest…, 503) arrived on a pull's reply subject, but consumer
	// info does not confirm it: the consumer exists and its configuration
	// accepts the pull (or the question got no answer). Another client
	// that learned the reply subject may have published it. Not terminal:
	// the status is ignored and the pulls stand; Messages reports it to
	// OnError, and both count it (Stats.Unconfirmed).
	ErrUnconfirmedStatus = errors.New("pull: status not confirmed by the server")
	// ErrStrayMessage: a message arrived on a pull's reply subject that
	// the server did not deliver for the consumer: not a status, and its
	// own reply is not a readable $JS.ACK subject. The server sends no
	// such message; another client that learned the reply subject can
	// publish one. Not terminal: Messages and Fetch skip it, count it
	// (Stats.Skipped), and Messages reports it to OnError. A message whose
	// reply is a well-formed $JS.ACK subject cannot be told from a real
	// delivery and is not checked further.
	ErrStrayMessage = errors.New("pull: message not delivered by the server skipped")
	// ErrUnknownStatus: a pull got a status this client does not know (a
	// code such as 418, or a 409 whose text it does not know: a newer
	// server). It ends that pull only and is counted
	// (Stats.UnknownStatuses): Messages reports it and pulls again after
	// a pause; Fetch returns it.
	ErrUnknownStatus = errors.New("pull: unknown pull status")
)

// fetchTimeout is ErrFetchTimeout.
type fetchTimeout struct{}

func (fetchTimeout) Error() string { return "pull: no messages before the deadline" }

// Is reports whether target is one of the errors ErrFetchTimeout matches.
func (fetchTimeout) Is(target error) bool {
	return target == ErrNoMessages || target == conn.ErrTimeout || target == context.DeadlineExceeded
}

// Timeout reports true, as context.DeadlineExceeded does.
func (fetchTimeout) Timeout() bool { return true }

// claimsEnd reports whether a status of kind claims a condition that ends
// a read: reads confirm it with consumer info (Consumer.confirm) before
// they trust it. 503 (conn.ErrNoResponders) is one: the consumer or the
// stream may be gone.
func claimsEnd(kind error) bool {
	switch kind {
	case ErrConsumerDeleted, ErrPushConsumer, ErrBadPull:
		return true
	}
	return false
}

// status is a decoded status message of a pull. desc is a view of the
// message.
type status struct {
	code         int
	desc         string
	pendingMsgs  int
	pendingBytes int
	hasPending   bool
}

// err maps a status to its error (nil for heartbeats and 204).
func (s *status) err() error {
	var kind error
	d := strings.ToLower(s.desc)
	switch s.code {
	case 100, 204:
		return nil
	case 404:
		kind = ErrNoMessages
	case 408:
		kind = ErrRequestExpired
	case 409:
		switch {
		case strings.HasPrefix(d, "consumer deleted"):
			kind = ErrConsumerDeleted
		case strings.Contains(d, "push based"):
			kind = ErrPushConsumer
		case strings.HasPrefix(d, "leadership change"):
			kind = ErrLeadershipChange
		case strings.HasPrefix(d, "exceeded maxwaiting"):
			kind = ErrMaxWaiting
		case strings.HasPrefix(d, "exceeded max"):
			kind = ErrBadPull
		case strings.HasPrefix(d, "message size exceeds maxbytes"):
			kind = ErrMessageTooLarge
		case strings.HasPrefix(d, "batch completed"), strings.HasPrefix(d, "server shutdown"):
			// The request ended; pull again.
			kind = ErrRequestExpired
		default:
			kind = ErrUnknownStatus
		}
	case 400, 412:
		kind = ErrBadPull
	case 423:
		kind = ErrPinMismatch
	case 503:
		kind = conn.ErrNoResponders
	default:
		kind = ErrUnknownStatus
	}
	return &jsapi.StatusError{Code: s.code, Description: strings.Clone(s.desc), Kind: kind}
}

// delivered reports whether m, which is not a status, can be a message
// the server delivered for a pull: its reply is a readable $JS.ACK subject
// (jsapi.ParseAckSubject). It allocates nothing.
func delivered(m *conn.Msg) bool {
	_, err := jsapi.ParseAckSubject(m.Reply)
	return err == nil
}

// isStatus reports whether m is a status message (no payload, a header
// with a status code), without decoding it.
func isStatus(m *conn.Msg) bool {
	return len(m.Data) == 0 && m.Status() != 0
}

// parseStatus reads a status message: an empty-payload message whose header
// block has a status line. It reports false for an ordinary message.
func parseStatus(m *conn.Msg) (status, bool) {
	if len(m.Data) != 0 {
		return status{}, false
	}
	code, desc := m.Header.Status()
	if code == 0 {
		return status{}, false
	}
	// desc is a view of m, which may be lent: err copies it.
	st := status{code: code, desc: desc}
	if v, ok := m.Header.Lookup("Nats-Pending-Messages"); ok {
		if n, ok := proto.ParseUint(v); ok && n < 1<<31 {
			st.pendingMsgs, st.hasPending = int(n), true
		}
	}
	if v, ok := m.Header.Lookup("Nats-Pending-Bytes"); ok {
		if n, ok := proto.ParseUint(v); ok && n < 1<<62 {
			st.pendingBytes = int(n)
		}
	}
	return st, true
}
