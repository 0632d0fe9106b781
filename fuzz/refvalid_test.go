package fuzz

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/natsio/natsio/proto"
)

// Reference validators, written from proto's documentation.

// refValidSubject: not empty, valid UTF-8, no byte at or below ' ' and no
// DEL, no empty token; with wildcards "*" may be any whole token and ">"
// the last one, without them neither may appear as a token.
func refValidSubject(s string, wildcards bool) bool {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return false
	}
	tokens := strings.Split(s, ".")
	for i, tok := range tokens {
		switch tok {
		case "":
			return false
		case "*":
			if !wildcards {
				return false
			}
		case ">":
			if !wildcards || i != len(tokens)-1 {
				return false
			}
		}
	}
	return true
}

// refIsLiteral: no token is "*" or ">".
func refIsLiteral(s string) bool {
	for _, tok := range strings.Split(s, ".") {
		if tok == "*" || tok == ">" {
			return false
		}
	}
	return true
}

// refValidQueue: not empty, valid UTF-8, no byte at or below ' ', no DEL.
func refValidQueue(q string) bool {
	return q != "" && utf8.ValidString(q) &&
		!strings.ContainsFunc(q, func(r rune) bool { return r <= ' ' || r == 0x7f })
}

// refValidKey: a non-empty RFC 7230 token.
func refValidKey(k string) bool {
	const tchar = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if !strings.Contains(tchar, k[i:i+1]) {
			return false
		}
	}
	return true
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
	check("ValidatePublishSubject", subject, proto.ValidatePublishSubject(subject), refValidSubject(subject, false), proto.ErrBadSubject)
	check("ValidatePublishSubject", reply, proto.ValidatePublishSubject(reply), refValidSubject(reply, false), proto.ErrBadSubject)
	check("ValidateSubscribeSubject", subject, proto.ValidateSubscribeSubject(subject), refValidSubject(subject, true), proto.ErrBadSubject)
	check("ValidateQueue", queue, proto.ValidateQueue(queue), refValidQueue(queue), proto.ErrBadQueue)
	if proto.IsLiteral(subject) != refIsLiteral(subject) {
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

// refBlockLines splits a block that starts with "NATS/1.0" and ends with
// "\r\n\r\n" into its status line and header lines; ok is false otherwise.
func refBlockLines(b []byte) (status string, lines []string, ok bool) {
	s := string(b)
	if !strings.HasPrefix(s, "NATS/1.0") || !strings.HasSuffix(s, "\r\n\r\n") {
		return "", nil, false
	}
	all := strings.Split(strings.TrimSuffix(s, "\r\n\r\n"), "\r\n")
	return all[0], all[1:], true
}

// refStatusLine reads "NATS/1.0", "NATS/1.0 ddd" or "NATS/1.0 ddd text"
// (any number of spaces before the code). valid is false for anything else.
func refStatusLine(l string) (code int, desc string, valid bool) {
	rest, ok := strings.CutPrefix(l, "NATS/1.0")
	switch {
	case !ok || strings.Contains(rest, "\n"):
		return 0, "", false
	case rest == "":
		return 0, "", true
	case rest[0] != ' ':
		return 0, "", false
	}
	rest = strings.TrimLeft(rest, " ")
	if len(rest) < 3 || (len(rest) > 3 && rest[3] != ' ') {
		return 0, "", false
	}
	code, err := strconv.Atoi(rest[:3])
	if err != nil || strings.ContainsAny(rest[:3], "+-") {
		return 0, "", false
	}
	return code, strings.TrimSpace(rest[3:]), true
}

// refValidBlock: empty, or the status line, "Key: Value" lines with token
// keys and values without CR or LF, and the empty line at the very end.
func refValidBlock(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	status, lines, ok := refBlockLines(b)
	if !ok {
		return false
	}
	if _, _, ok := refStatusLine(status); !ok {
		return false
	}
	for _, l := range lines {
		k, v, found := strings.Cut(l, ":")
		if !found || !refValidKey(k) || strings.ContainsAny(v, "\r\n") {
			return false
		}
	}
	return true
}

// refStatus: the code and trimmed description of the block's first line
// (up to the first CRLF) when that is a status line with a code; 0 and ""
// otherwise.
func refStatus(b []byte) (int, string) {
	first, _, ok := strings.Cut(string(b), "\r\n")
	if !ok {
		return 0, ""
	}
	code, desc, _ := refStatusLine(first)
	return code, desc
}

// refFields: the keys and values (trimmed of spaces and tabs) of a valid
// block.
func refFields(b []byte) [][2]string {
	_, lines, _ := refBlockLines(b)
	var out [][2]string
	for _, l := range lines {
		k, v, _ := strings.Cut(l, ":")
		out = append(out, [2]string{k, strings.Trim(v, " \t")})
	}
	return out
}
