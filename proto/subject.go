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
	if len(s) >= 8 && plainSubject(s) {
		return true
	}
	return checkSubject(s, wildcards)
}

// checkSubject is validSubject one byte at a time: the reference for
// plainSubject, and the answer for subjects it does not decide.
func checkSubject(s string, wildcards bool) bool {
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

// Word masks for plainSubject: a byte repeated in every lane, and the high
// bit of every lane.
const (
	lanes1   = 0x0101010101010101
	lanesHi  = 0x8080808080808080
	lanesLo7 = 0x7f7f7f7f7f7f7f7f
)

// plainSubject is validSubject's fast path for subjects of at least 8 bytes,
// 8 bytes at a time: it reports true when s is printable ASCII without
// wildcard bytes ('*', '>'), does not start or end with '.', and has no
// "..". Such a subject is valid for publishing and subscribing alike. false
// means "look closer": the byte loop decides.
func plainSubject(s string) bool {
	n := len(s)
	if s[0] == '.' || s[n-1] == '.' {
		return false
	}
	var bad, prevDot uint64
	for i := 0; ; i += 8 {
		last := i+8 >= n
		if last && i != n-8 {
			// The final word overlaps the previous one so that it is whole.
			// Bytes seen twice change none of the checks, and every pair of
			// neighbours in the overlap was seen in the previous word.
			i = n - 8
			prevDot = 0
		}
		w := load64(s, i)
		// Any byte below 0x21 (space, control) or above 0x7e (DEL, non-ASCII).
		bad |= (w - lanes1*0x21) &^ w
		bad |= (w + lanes1*1) | w
		// Any '*' or '>'.
		bad |= zeroLanes(w ^ (lanes1 * '*'))
		bad |= zeroLanes(w ^ (lanes1 * '>'))
		// "..": a dot right after a dot, also across words.
		d := zeroLanes(w ^ (lanes1 * '.'))
		bad |= d & (d<<8 | prevDot)
		if last {
			return bad&lanesHi == 0
		}
		prevDot = d >> 56
	}
}

// zeroLanes returns the high bit set in exactly the bytes of w that are 0.
func zeroLanes(w uint64) uint64 {
	return ^((w&lanesLo7 + lanesLo7) | w | lanesLo7)
}

// load64 reads s[i:i+8] as a little-endian word.
func load64(s string, i int) uint64 {
	b := s[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
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
