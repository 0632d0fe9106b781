package proto

import (
	"bytes"
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
	return Header{raw: view(block)}
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
func blockStatus(b string) (code int, description string) {
	i := strings.IndexByte(b, '\n')
	if i < 1 || b[i-1] != '\r' || !strings.HasPrefix(b, headerVersion) {
		return 0, ""
	}
	l := b[len(headerVersion) : i-1]
	if len(l) == 0 || l[0] != ' ' {
		return 0, ""
	}
	l = strings.TrimLeft(l, " ")
	if len(l) < 3 || !isDigit(l[0]) || !isDigit(l[1]) || !isDigit(l[2]) || (len(l) > 3 && l[3] != ' ') {
		return 0, ""
	}
	code = int(l[0]-'0')*100 + int(l[1]-'0')*10 + int(l[2]-'0')
	return code, strings.TrimSpace(l[3:])
}

// blockLookup returns the first value of key in b, with surrounding blanks
// removed, as a view into b, and whether key is present. Like nextField,
// it stops at the first malformed line. It compares each line's key before
// it touches the value, so a miss costs a scan of the lines and nothing
// more.
func blockLookup(b string, key string) (string, bool) {
	if strings.IndexByte(key, ':') >= 0 {
		return "", false // no field's key holds one
	}
	rest, ok := fieldsStart(b)
	for ok {
		i := strings.IndexByte(rest, '\n')
		if i < 2 || rest[i-1] != '\r' {
			return "", false // no line, a bare LF, or the empty line
		}
		line := rest[:i-1]
		rest = rest[i+1:]
		// A field's key is what precedes the line's first ':', and key
		// holds none: a line that starts with key and then ':' has
		// exactly that key.
		if len(line) > len(key) && line[len(key)] == ':' && line[:len(key)] == key {
			return trimBlanks(line[len(key)+1:]), true
		}
		if strings.IndexByte(line, ':') < 0 {
			return "", false
		}
	}
	return "", false
}

// fieldsStart returns the lines of block b after its status line, and
// false when b has no complete first line. With nextField it reads a
// block's fields in a plain loop, as Header's iterators do:
//
//	for rest, ok := fieldsStart(b); ok; {
//		k, v, rest, ok = nextField(rest)
//		...
//	}
func fieldsStart(b string) (rest string, ok bool) {
	i := strings.IndexByte(b, '\n')
	if i < 1 || b[i-1] != '\r' {
		return "", false
	}
	return b[i+1:], true
}

// nextField cuts the first field line off rest and returns its key and
// its value (blanks trimmed), views into rest, and the lines after it; ok
// is false at the final empty line and at the first malformed line.
func nextField(rest string) (key, value, next string, ok bool) {
	i := strings.IndexByte(rest, '\n')
	if i < 2 || rest[i-1] != '\r' {
		return "", "", "", false // no line, a bare LF, or the empty line
	}
	k, v, found := strings.Cut(rest[:i-1], ":")
	if !found {
		return "", "", "", false
	}
	return k, trimBlanks(v), rest[i+1:], true
}

// trimBlanks removes leading and trailing spaces and tabs.
func trimBlanks(v string) string {
	i, j := 0, len(v)
	for i < j && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	for j > i && (v[j-1] == ' ' || v[j-1] == '\t') {
		j--
	}
	return v[i:j]
}
