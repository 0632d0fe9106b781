package proto

import (
	"bytes"
	"iter"
	"strings"
)

// A header block, as received in an HMSG (and sent in an HPUB):
//
//	NATS/1.0[ <3-digit status>[ <description>]]\r\n
//	Key: Value\r\n ...
//	\r\n
//
// The functions below read a block in place and never modify it. Keys are
// matched byte for byte. The status line is not a field.

// HeaderFromBlock returns a header that reads block in place (see Header):
// no copy is made, block must not change while the header is in use, and
// nothing is validated — check a block from the network with
// ValidateHeaderBlock first. An empty block gives the zero Header.
func HeaderFromBlock(block []byte) Header {
	if len(block) == 0 {
		return Header{}
	}
	return Header{raw: block}
}

// ValidateHeaderBlock checks a block's structure: the NATS/1.0 line with
// an optional 3-digit status, "Key: Value" lines whose keys are RFC 7230
// tokens, and the final empty line at the very end. It returns an error
// matching ErrBadHeader otherwise. An empty block (no block) is valid. It
// allocates nothing.
func ValidateHeaderBlock(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if len(b) < minHeaderLen || !bytes.HasPrefix(b, []byte(headerVersion)) ||
		!bytes.HasSuffix(b, []byte("\r\n\r\n")) {
		return ErrBadHeader
	}
	first, rest, ok := cutLine(b)
	if !ok || !validStatusLine(first) {
		return ErrBadHeader
	}
	// One pass per line: the key over a table up to ':', then the value
	// up to the line's CRLF; a value holds neither CR nor LF, so the first
	// LF must follow a CR that is the value's first. The final empty line
	// ends the block exactly.
	for {
		i := 0
		for i < len(rest) && tokenChar[rest[i]] {
			i++
		}
		if i == 0 {
			if len(rest) == 2 && rest[0] == '\r' && rest[1] == '\n' {
				return nil
			}
			return ErrBadHeader
		}
		if i == len(rest) || rest[i] != ':' {
			return ErrBadHeader
		}
		v := rest[i+1:]
		j := bytes.IndexByte(v, '\n')
		if j < 1 || v[j-1] != '\r' || bytes.IndexByte(v[:j-1], '\r') >= 0 {
			return ErrBadHeader
		}
		rest = v[j+1:]
	}
}

// validStatusLine checks "NATS/1.0", "NATS/1.0 ddd" or "NATS/1.0 ddd text".
func validStatusLine(l []byte) bool {
	if !bytes.HasPrefix(l, []byte(headerVersion)) {
		return false
	}
	l = l[len(headerVersion):]
	if len(l) == 0 {
		return true
	}
	if l[0] != ' ' {
		return false
	}
	l = bytes.TrimLeft(l, " ")
	if len(l) < 3 || !isDigit(l[0]) || !isDigit(l[1]) || !isDigit(l[2]) {
		return false
	}
	return len(l) == 3 || l[3] == ' '
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// cutLine splits b at the first "\r\n"; ok is false when there is none or a
// bare '\n' comes first.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 1 || b[i-1] != '\r' {
		return nil, nil, false
	}
	return b[:i-1], b[i+1:], true
}

// blockStatus returns the inline status code and description of a block
// ("NATS/1.0 503" gives 503 and ""), or 0 when it has none or is malformed.
// The description is a view into b.
func blockStatus(b []byte) (code int, description []byte) {
	first, _, ok := cutLine(b)
	if !ok || !bytes.HasPrefix(first, []byte(headerVersion)) {
		return 0, nil
	}
	l := first[len(headerVersion):]
	if len(l) == 0 || l[0] != ' ' {
		return 0, nil
	}
	l = bytes.TrimLeft(l, " ")
	if len(l) < 3 || !isDigit(l[0]) || !isDigit(l[1]) || !isDigit(l[2]) || (len(l) > 3 && l[3] != ' ') {
		return 0, nil
	}
	code = int(l[0]-'0')*100 + int(l[1]-'0')*10 + int(l[2]-'0')
	return code, bytes.TrimSpace(l[3:])
}

// blockLookup returns the first value of key in b, with surrounding blanks
// removed, as a view into b, and whether key is present. Like blockFields,
// it stops at the first malformed line. It compares each line's key before
// it touches the value, so a miss costs a scan of the lines and nothing
// more.
func blockLookup(b []byte, key string) ([]byte, bool) {
	if strings.IndexByte(key, ':') >= 0 {
		return nil, false // no field's key holds one
	}
	_, rest, ok := cutLine(b)
	for ok {
		var line []byte
		line, rest, ok = cutLine(rest)
		if !ok || len(line) == 0 {
			return nil, false
		}
		// A field's key is what precedes the line's first ':', and key
		// holds none: a line that starts with key and then ':' has
		// exactly that key.
		if len(line) > len(key) && line[len(key)] == ':' && string(line[:len(key)]) == key {
			return trimBlanks(line[len(key)+1:]), true
		}
		if bytes.IndexByte(line, ':') < 0 {
			return nil, false
		}
	}
	return nil, false
}

// blockFields yields each key and value (blanks trimmed) of b in order, as
// views into b; it stops at the first malformed line.
func blockFields(b []byte) iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) {
		_, rest, ok := cutLine(b)
		for ok {
			var line []byte
			line, rest, ok = cutLine(rest)
			if !ok || len(line) == 0 {
				return
			}
			k, v, found := bytes.Cut(line, []byte{':'})
			if !found {
				return
			}
			if !yield(k, trimBlanks(v)) {
				return
			}
		}
	}
}

// trimBlanks removes leading and trailing spaces and tabs.
func trimBlanks(v []byte) []byte {
	i, j := 0, len(v)
	for i < j && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	for j > i && (v[j-1] == ' ' || v[j-1] == '\t') {
		j--
	}
	return v[i:j]
}
