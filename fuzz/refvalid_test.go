package fuzz

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/natsio/natsio/internal/fuzzref"
	"github.com/natsio/natsio/proto"
)

// Reference validators, written from proto's documentation.

// refValidQueue: not empty, valid UTF-8, no byte at or below ' ', no DEL.
func refValidQueue(q string) bool {
	return q != "" && utf8.ValidString(q) &&
		!strings.ContainsFunc(q, func(r rune) bool { return r <= ' ' || r == 0x7f })
}

// refValidValue: no CR, LF or NUL.
func refValidValue(v string) bool { return !strings.ContainsAny(v, "\r\n\x00") }

// checkValidators compares proto's validators with the references.
func checkValidators(t *testing.T, subject, reply, queue string) {
	t.Helper()
	check := func(name, arg string, err error, valid bool, sentinel error) {
		t.Helper()
		if (err == nil) != valid || (err != nil && !errors.Is(err, sentinel)) {
			t.Fatalf("%s(%q) = %v, reference says valid=%v", name, arg, err, valid)
		}
	}
	check("ValidatePublishSubject", subject, proto.ValidatePublishSubject(subject), fuzzref.ValidSubject(subject, false), proto.ErrBadSubject)
	check("ValidatePublishSubject", reply, proto.ValidatePublishSubject(reply), fuzzref.ValidSubject(reply, false), proto.ErrBadSubject)
	check("ValidateSubscribeSubject", subject, proto.ValidateSubscribeSubject(subject), fuzzref.ValidSubject(subject, true), proto.ErrBadSubject)
	check("ValidateQueue", queue, proto.ValidateQueue(queue), refValidQueue(queue), proto.ErrBadQueue)
	if proto.IsLiteral(subject) != fuzzref.IsLiteral(subject) {
		t.Fatalf("IsLiteral(%q) = %v", subject, proto.IsLiteral(subject))
	}
}

// refHeaderBlock encodes fields as AppendHeaderBlock documents it.
func refHeaderBlock(fields [][2]string) string {
	s := "NATS/1.0\r\n"
	for _, f := range fields {
		s += f[0] + ": " + f[1] + "\r\n"
	}
	return s + "\r\n"
}
