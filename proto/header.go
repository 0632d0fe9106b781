package proto

import "iter"

// HeaderField is one key and value of a Header.
type HeaderField struct {
	Key   string
	Value string
}

// Header is an ordered, multi-valued set of message headers. Keys keep their
// case and are matched byte for byte: "Nats-TTL" and "Nats-Ttl" are
// different keys, as they are to the server. The zero value is an empty
// header ready to use; Reset empties it keeping its capacity, so a Header
// reused across publishes allocates nothing.
type Header struct {
	fields []HeaderField
}

// Add appends a value for key, keeping earlier ones.
func (h *Header) Add(key, value string) {
	h.fields = append(h.fields, HeaderField{key, value})
}

// Set replaces every value of key with value.
func (h *Header) Set(key, value string) {
	for i := range h.fields {
		if h.fields[i].Key == key {
			h.fields[i].Value = value
			h.delFrom(key, i+1)
			return
		}
	}
	h.Add(key, value)
}

// Del removes every value of key.
func (h *Header) Del(key string) { h.delFrom(key, 0) }

func (h *Header) delFrom(key string, from int) {
	out := h.fields[:from]
	for _, f := range h.fields[from:] {
		if f.Key != key {
			out = append(out, f)
		}
	}
	clear(h.fields[len(out):])
	h.fields = out
}

// Get returns the first value of key, or "" when it has none.
func (h *Header) Get(key string) string {
	v, _ := h.Lookup(key)
	return v
}

// Lookup returns the first value of key and whether there is one.
func (h *Header) Lookup(key string) (string, bool) {
	if h == nil {
		return "", false
	}
	for _, f := range h.fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

// Values returns every value of key in order, as a single-use iterator.
func (h *Header) Values(key string) iter.Seq[string] {
	return func(yield func(string) bool) {
		if h == nil {
			return
		}
		for _, f := range h.fields {
			if f.Key == key && !yield(f.Value) {
				return
			}
		}
	}
}

// All yields every key and value in order.
func (h *Header) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		if h == nil {
			return
		}
		for _, f := range h.fields {
			if !yield(f.Key, f.Value) {
				return
			}
		}
	}
}

// Len reports the number of fields (values, not distinct keys).
func (h *Header) Len() int {
	if h == nil {
		return 0
	}
	return len(h.fields)
}

// Reset removes every field, keeping the capacity for reuse.
func (h *Header) Reset() {
	clear(h.fields)
	h.fields = h.fields[:0]
}

// Clone returns a deep copy of h.
func (h *Header) Clone() *Header {
	if h == nil {
		return nil
	}
	return &Header{fields: append([]HeaderField(nil), h.fields...)}
}

// Validate checks every key is an RFC 7230 token and no value holds CR, LF
// or NUL; it returns an error matching ErrBadHeader otherwise.
func (h *Header) Validate() error {
	if h == nil {
		return nil
	}
	for _, f := range h.fields {
		if !validKey(f.Key) || !validValue(f.Value) {
			return ErrBadHeader
		}
	}
	return nil
}

// EncodedLen reports the size of h's header block on the wire, including
// the "NATS/1.0\r\n" line and the final empty line.
func (h *Header) EncodedLen() int {
	n := len(headerVersion) + 4
	if h != nil {
		for _, f := range h.fields {
			n += len(f.Key) + 2 + len(f.Value) + 2
		}
	}
	return n
}

const headerVersion = "NATS/1.0"

// minHeaderLen is the size of the smallest header block, "NATS/1.0\r\n\r\n".
const minHeaderLen = len(headerVersion) + 4

// AppendHeaderBlock appends h as a header block ("NATS/1.0\r\n", one
// "Key: Value\r\n" line per field, "\r\n"). It validates h first and
// returns dst unchanged with ErrBadHeader when a key or value is invalid.
func AppendHeaderBlock(dst []byte, h *Header) ([]byte, error) {
	if err := h.Validate(); err != nil {
		return dst, err
	}
	return appendHeaderBlock(dst, h), nil
}

func appendHeaderBlock(dst []byte, h *Header) []byte {
	dst = append(dst, headerVersion+"\r\n"...)
	if h != nil {
		for _, f := range h.fields {
			dst = append(dst, f.Key...)
			dst = append(dst, ": "...)
			dst = append(dst, f.Value...)
			dst = append(dst, "\r\n"...)
		}
	}
	return append(dst, "\r\n"...)
}

// validKey reports whether k is a non-empty RFC 7230 token.
func validKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if !isTokenChar(k[i]) {
			return false
		}
	}
	return true
}

// tokenChar is isTokenChar as a table, for loops over received headers.
var tokenChar = func() (t [256]bool) {
	for c := range t {
		t[c] = isTokenChar(byte(c))
	}
	return t
}()

func isTokenChar(c byte) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// validValue reports whether v holds no CR, LF or NUL.
func validValue(v string) bool {
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\r', '\n', 0:
			return false
		}
	}
	return true
}
