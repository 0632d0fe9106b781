package proto

import "unicode/utf8"

// ValidatePublishSubject checks a subject a message is published to (also
// used for reply subjects): not empty, no empty token ("a..b", ".a", "a."),
// no whitespace, control byte or invalid UTF-8, and no wildcard token ("*"
// or ">"). It returns ErrBadSubject otherwise.
func ValidatePublishSubject(s string) error {
	if !validSubject(s, false) {
		return ErrBadSubject
	}
	return nil
}

// ValidateSubscribeSubject checks a subscription filter: like a publish
// subject, but "*" may stand as any whole token and ">" as the last one.
func ValidateSubscribeSubject(s string) error {
	if !validSubject(s, true) {
		return ErrBadSubject
	}
	return nil
}

// ValidateQueue checks a queue group name: not empty, no whitespace, control
// byte or invalid UTF-8.
func ValidateQueue(q string) error {
	if q == "" {
		return ErrBadQueue
	}
	for i := 0; i < len(q); i++ {
		if c := q[i]; c <= ' ' || c == 0x7f {
			return ErrBadQueue
		}
	}
	if !asciiOrUTF8(q) {
		return ErrBadQueue
	}
	return nil
}

// IsLiteral reports whether s has no wildcard token.
func IsLiteral(s string) bool {
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if i-start == 1 && (s[start] == '*' || s[start] == '>') {
				return false
			}
			start = i + 1
		}
	}
	return true
}

func validSubject(s string, wildcards bool) bool {
	if s == "" {
		return false
	}
	start := 0
	high := false
	for i := 0; i < len(s); i++ {
		// One table load per byte: almost every byte is plain.
		switch subjectClass[s[i]] {
		case classPlain:
			continue
		case classDot:
			if !validToken(s, start, i, wildcards, false) {
				return false
			}
			start = i + 1
		case classBad:
			return false
		default:
			high = true
		}
	}
	if !validToken(s, start, len(s), wildcards, true) {
		return false
	}
	return !high || utf8.ValidString(s)
}

// Byte classes of subjectClass.
const (
	classPlain = iota
	classDot
	classBad  // whitespace, control bytes and DEL
	classHigh // part of a multi-byte UTF-8 sequence
)

// subjectClass classifies every byte value for validSubject.
var subjectClass = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c == '.':
			t[c] = classDot
		case c <= ' ' || c == 0x7f:
			t[c] = classBad
		case c >= 0x80:
			t[c] = classHigh
		}
	}
	return t
}()

// validToken checks s[start:end], a token of a subject.
func validToken(s string, start, end int, wildcards, last bool) bool {
	if end == start {
		return false
	}
	if end-start == 1 {
		switch s[start] {
		case '*':
			return wildcards
		case '>':
			return wildcards && last
		}
	}
	return true
}

func asciiOrUTF8(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return utf8.ValidString(s)
		}
	}
	return true
}
