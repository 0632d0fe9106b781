package directget

import (
	"errors"

	"github.com/natsio/natsio/proto"
)

// ErrNoHeader: the reply has no header block, so no server field: no
// server sends a message that way.
var ErrNoHeader = errors.New("direct get reply without header")

// Error is a server field of a Direct Get reply that is missing or does
// not hold what the server writes there. Callers wrap it in their
// bad-response error.
type Error struct {
	// Key is the field at fault.
	Key Key
	// Missing is set when the reply has no such field (or an empty
	// subject, which no stored message has).
	Missing bool
	// Value is the field's value, quoted and cut to a short excerpt
	// (proto.Excerpt); empty when Missing.
	Value string
}

func (e *Error) Error() string {
	if e.Missing {
		return "direct get reply without " + e.Key.String()
	}
	return "direct get " + e.Key.String() + " " + e.Value
}

// missing returns the *Error of a missing field.
func missing(k Key) error { return &Error{Key: k, Missing: true} }

// bad returns the *Error of a field whose value v could not be read.
func bad(k Key, v string) error { return &Error{Key: k, Value: proto.Excerpt([]byte(v))} }
