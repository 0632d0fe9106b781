package jsapi

import (
	"errors"
	"strconv"
)

// ErrNoMessages: a read of stored messages found none — a pull's Next or
// no-wait Fetch (package pull), an ordered consumer's idle timeout
// (package ordered), a batch get that matched nothing (package extra).
// pull.ErrNoMessages, ordered.ErrNoMessages and extra.ErrNoMessages are
// this value.
var ErrNoMessages = errors.New("jsapi: no messages")

// StatusError is a status the server sent in reply to a read instead of a
// message: a pull's (package pull: 404, 408, 409, 423…) or a batch get's
// (package extra: 404, 408, 413…). Code and Description are the status
// line as sent. Kind is the condition it reports, one of the sentinels of
// the package that read it (pull.ErrConsumerDeleted, ErrNoMessages,
// extra.ErrTooManyResults, conn.ErrNoResponders…), or nil for a code
// that package does not know; errors.Is matches it through Unwrap.
type StatusError struct {
	Code        int
	Description string
	Kind        error
}

func (e *StatusError) Error() string {
	prefix := "jsapi: status"
	if e.Kind != nil {
		prefix = e.Kind.Error() + ":"
	}
	if e.Description == "" {
		return prefix + " " + strconv.Itoa(e.Code)
	}
	return prefix + " " + strconv.Itoa(e.Code) + " " + e.Description
}

// Unwrap returns Kind.
func (e *StatusError) Unwrap() error { return e.Kind }
