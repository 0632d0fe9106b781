package proto

import (
	"errors"
	"strconv"
)

// Sentinel errors of the parser. A *Error returned by Parser.Next matches
// exactly one of them with errors.Is.
var (
	// ErrUnknownOp: the bytes at the start of an operation name no known op.
	ErrUnknownOp = errors.New("proto: unknown operation")
	// ErrControlLine: a control line is longer than the configured limit.
	ErrControlLine = errors.New("proto: control line too long")
	// ErrArgs: an operation has the wrong number or form of arguments.
	ErrArgs = errors.New("proto: malformed arguments")
	// ErrSize: a size or sid is empty, signed, not decimal, or overflows.
	ErrSize = errors.New("proto: invalid number")
	// ErrPayloadTooLarge: a stated size exceeds Limits.MaxPayload.
	ErrPayloadTooLarge = errors.New("proto: payload size exceeds limit")
	// ErrHeaderSize: hdr_size is larger than total_size, or too small to
	// hold a header block.
	ErrHeaderSize = errors.New("proto: invalid header size")
	// ErrMissingCRLF: a payload is not followed by exactly "\r\n".
	ErrMissingCRLF = errors.New("proto: payload not followed by CRLF")
)

// Sentinel errors of encoders and validation; they are returned before any
// byte is written.
var (
	// ErrBadSubject: a subject is empty, has an empty token, whitespace,
	// control bytes or invalid UTF-8, or a wildcard where none is allowed.
	ErrBadSubject = errors.New("proto: invalid subject")
	// ErrBadQueue: a queue group name is empty or contains whitespace or
	// control bytes.
	ErrBadQueue = errors.New("proto: invalid queue name")
	// ErrBadHeader: a header key is not an RFC 7230 token, a value contains
	// CR, LF or NUL, or a received header block is malformed.
	ErrBadHeader = errors.New("proto: invalid header")
)

// Error is a protocol violation found by the Parser. It says what was wrong
// (Err, one of the parser sentinels), where (Offset: the number of stream
// bytes the parser had consumed when it found the fault, counted from the
// last Reset), and shows a short, escaped excerpt of the offending bytes.
type Error struct {
	Err    error
	Offset int64
	Near   string
}

func (e *Error) Error() string {
	s := e.Err.Error() + " at byte " + strconv.FormatInt(e.Offset, 10)
	if e.Near != "" {
		s += " near " + e.Near
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// maxExcerpt bounds how many bytes of a bad frame an Error quotes.
const maxExcerpt = 48

// Excerpt returns b as a quoted, escaped string of at most maxExcerpt source
// bytes, safe to put in a log line.
func Excerpt(b []byte) string {
	cut := len(b) > maxExcerpt
	if cut {
		b = b[:maxExcerpt]
	}
	s := strconv.QuoteToASCII(string(b))
	if cut {
		s += "…"
	}
	return s
}
