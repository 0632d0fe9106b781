package proto

import (
	"encoding/json"
	"iter"
	"slices"
	"unsafe"
)

// HeaderField is one key and value of a Header.
type HeaderField struct {
	Key   string
	Value string
}

// Header is an ordered, multi-valued set of message headers, for both
// directions: a publisher builds one with Add and Set, and a received
// message's header is one read in place.
//
// Keys keep their case and are matched byte for byte: "Nats-TTL" and
// "Nats-Ttl" are different keys, as they are to the server. The zero value
// is an empty header ready to use; Reset empties it keeping its capacity,
// so a Header reused across publishes allocates nothing. Publishing a
// Header (AppendHPub) writes its fields in the order they were added.
//
// # Received headers
//
// A header made from a received block (HeaderFromBlock; every delivered
// message's header is one) keeps the block and reads it lazily: Get,
// Lookup, Values, All, Len and Status scan the block on each call, allocate
// nothing, and return strings that are views of the received bytes, with
// the blanks around each value removed. Reads stop at the first malformed
// line, which a block checked with ValidateHeaderBlock has none of. Such a
// view is valid as long as the message's memory is: for the messages a
// connection delivers, which it never reuses, that is for as long as the
// program keeps them; for a borrowed (lent) message, only as long as the
// message's other fields are, until its handler returns. Clone makes a copy
// that shares no memory with the message.
//
// The first call that modifies a received header (Set, Add, or a Del that
// removes something) turns it into fields: the values stay views of the
// received bytes, only the list of fields is allocated. The block is then
// dropped, and with it the status line, which no published header carries.
// A received header published again unmodified is written as the block it
// was received as, status line included.
//
// Assigning a Header value shares its storage with the original: modify
// only one of them, or Clone first.
type Header struct {
	// raw is the received block read in place; nil for a built header
	// and once a received one has been modified. fields is unused while
	// raw is set.
	raw    []byte
	fields []HeaderField
}

// HeaderOf returns a header with the values of m. Map iteration order is
// random, so the keys are taken in sorted (byte-wise) order, each key's
// values in the order of its slice: the same map always gives the same
// header, and the same block on the wire. A key with no values gives no
// field. The header is not validated; Validate it, or let the publish do.
func HeaderOf(m map[string][]string) Header {
	n := 0
	for _, vs := range m {
		n += len(vs)
	}
	if n == 0 {
		return Header{}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h := Header{fields: make([]HeaderField, 0, n)}
	for _, k := range keys {
		for _, v := range m[k] {
			h.fields = append(h.fields, HeaderField{k, v})
		}
	}
	return h
}

// NewHeader returns a header with the given keys and values, in order:
// NewHeader("Nats-Msg-Id", "1", "X-Tag", "a") has two fields. It panics
// when kv has an odd number of strings. The header is not validated.
func NewHeader(kv ...string) *Header {
	if len(kv)%2 != 0 {
		panic("proto: NewHeader with an odd number of strings")
	}
	h := &Header{fields: make([]HeaderField, 0, len(kv)/2)}
	for i := 0; i < len(kv); i += 2 {
		h.fields = append(h.fields, HeaderField{kv[i], kv[i+1]})
	}
	return h
}

// materialise turns a received header into fields that view its block,
// with room for extra more, and drops the block.
func (h *Header) materialise(extra int) {
	if h.raw == nil {
		return
	}
	n := 0
	for range blockFields(h.raw) {
		n++
	}
	fields := make([]HeaderField, 0, n+extra)
	for k, v := range blockFields(h.raw) {
		fields = append(fields, HeaderField{view(k), view(v)})
	}
	h.raw, h.fields = nil, fields
}

// Add appends a value for key, keeping earlier ones.
func (h *Header) Add(key, value string) {
	h.materialise(1)
	h.fields = append(h.fields, HeaderField{key, value})
}

// Set replaces every value of key with value: the first field of key
// keeps its place, the others are removed.
func (h *Header) Set(key, value string) {
	h.materialise(1)
	for i := range h.fields {
		if h.fields[i].Key == key {
			h.fields[i].Value = value
			h.delFrom(key, i+1)
			return
		}
	}
	h.Add(key, value)
}

// Del removes every value of key. A received header without key is left
// as it is.
func (h *Header) Del(key string) {
	if h.raw != nil {
		if _, ok := h.Lookup(key); !ok {
			return
		}
		h.materialise(0)
	}
	h.delFrom(key, 0)
}

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
	if h.raw != nil {
		v, ok := blockLookup(h.raw, key)
		return view(v), ok
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
		if h.raw != nil {
			for k, v := range blockFields(h.raw) {
				if string(k) == key && !yield(view(v)) {
					return
				}
			}
			return
		}
		for _, f := range h.fields {
			if f.Key == key && !yield(f.Value) {
				return
			}
		}
	}
}

// All yields every key and value in order (the order of the wire, for a
// received header).
func (h *Header) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		if h == nil {
			return
		}
		if h.raw != nil {
			for k, v := range blockFields(h.raw) {
				if !yield(view(k), view(v)) {
					return
				}
			}
			return
		}
		for _, f := range h.fields {
			if !yield(f.Key, f.Value) {
				return
			}
		}
	}
}

// Len reports the number of fields (values, not distinct keys). For a
// received header it counts the block's lines.
func (h *Header) Len() int {
	if h == nil {
		return 0
	}
	if h.raw != nil {
		n := 0
		for range blockFields(h.raw) {
			n++
		}
		return n
	}
	return len(h.fields)
}

// IsZero reports whether h holds neither a received block nor a field: it
// is the zero value, or was Reset, or all its fields were deleted. A
// message delivered without headers has a zero Header; one delivered with
// a header block has not, even when the block holds only a status line or
// nothing at all ("NATS/1.0\r\n\r\n").
func (h *Header) IsZero() bool {
	return h == nil || (h.raw == nil && len(h.fields) == 0)
}

// Status returns the status code and description of a received header's
// status line ("NATS/1.0 503" gives 503 and ""), or 0 and "" when it has
// none or it is malformed, and for a header that was built or modified.
// The description is a view of the received bytes (see Header).
func (h *Header) Status() (code int, description string) {
	if h == nil || h.raw == nil {
		return 0, ""
	}
	code, d := blockStatus(h.raw)
	return code, view(d)
}

// Block returns the received block h reads, or nil when h was built or
// has been modified. The bytes are the message's memory, with the
// message's lifetime (see Header): writing to them changes h, and the
// caller must not do so unless the message is its own.
func (h *Header) Block() []byte {
	if h == nil {
		return nil
	}
	return h.raw
}

// Reset removes every field and any received block, keeping the capacity
// of the fields for reuse.
func (h *Header) Reset() {
	h.raw = nil
	clear(h.fields)
	h.fields = h.fields[:0]
}

// Clone returns a deep copy of h, nil for a nil h. The copy shares no
// memory with h or with the message h was received in: it stays valid
// after a borrowed message's handler returns. A received header's copy is
// still a received header (its block copied), with its status line.
func (h *Header) Clone() *Header {
	if h == nil {
		return nil
	}
	if h.raw != nil {
		return &Header{raw: append([]byte(nil), h.raw...)}
	}
	if len(h.fields) == 0 {
		return &Header{}
	}
	// One buffer for every key and value: the strings may be views of a
	// received block.
	n := 0
	for _, f := range h.fields {
		n += len(f.Key) + len(f.Value)
	}
	buf := make([]byte, 0, n)
	fields := make([]HeaderField, len(h.fields))
	for i, f := range h.fields {
		start := len(buf)
		buf = append(buf, f.Key...)
		buf = append(buf, f.Value...)
		b := buf[start:]
		fields[i] = HeaderField{view(b[:len(f.Key)]), view(b[len(f.Key):])}
	}
	return &Header{fields: fields}
}

// Validate checks every key is an RFC 7230 token and no value holds CR, LF
// or NUL; for an unmodified received header, it checks the block as
// ValidateHeaderBlock does (which lets a NUL in a value through, as the
// server does). It returns an error matching ErrBadHeader otherwise.
func (h *Header) Validate() error {
	if h == nil {
		return nil
	}
	if h.raw != nil {
		return ValidateHeaderBlock(h.raw)
	}
	for _, f := range h.fields {
		if !validKey(f.Key) || !validValue(f.Value) {
			return ErrBadHeader
		}
	}
	return nil
}

// EncodedLen reports the size of h's header block on the wire, including
// the "NATS/1.0\r\n" line and the final empty line; for an unmodified
// received header, the size of its block.
func (h *Header) EncodedLen() int {
	if h != nil && h.raw != nil {
		return len(h.raw)
	}
	n := len(headerVersion) + 4
	if h != nil {
		for _, f := range h.fields {
			n += len(f.Key) + 2 + len(f.Value) + 2
		}
	}
	return n
}

// String returns h's header block as text, unvalidated (what AppendHeaderBlock
// writes for a valid header), for logs and debugging.
func (h Header) String() string {
	return string(appendHeaderBlock(nil, &h))
}

// MarshalJSON encodes h as a JSON object of each key to the list of its
// values, {"Key":["v1","v2"]}, the shape of nats.go's header maps: keys
// sorted, each key's values in order. The status line of a received header
// is not encoded; a header without fields is {}.
func (h Header) MarshalJSON() ([]byte, error) {
	m := make(map[string][]string)
	for k, v := range h.All() {
		m[k] = append(m[k], v)
	}
	return json.Marshal(m) // encoding/json sorts map keys
}

// UnmarshalJSON replaces h's contents with a JSON object of each key to
// the list of its values (or null for none), in HeaderOf's order: keys
// sorted. Keys and values are not validated. On error h is unchanged.
func (h *Header) UnmarshalJSON(b []byte) error {
	var m map[string][]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*h = HeaderOf(m)
	return nil
}

const headerVersion = "NATS/1.0"

// minHeaderLen is the size of the smallest header block, "NATS/1.0\r\n\r\n".
const minHeaderLen = len(headerVersion) + 4

// AppendHeaderBlock appends h as a header block ("NATS/1.0\r\n", one
// "Key: Value\r\n" line per field, "\r\n"); an unmodified received header
// is appended as the block it was received as. It validates h first and
// returns dst unchanged with ErrBadHeader when a key or value (or the
// received block) is invalid.
func AppendHeaderBlock(dst []byte, h *Header) ([]byte, error) {
	if err := h.Validate(); err != nil {
		return dst, err
	}
	return appendHeaderBlock(dst, h), nil
}

func appendHeaderBlock(dst []byte, h *Header) []byte {
	if h != nil && h.raw != nil {
		return append(dst, h.raw...)
	}
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

// view returns b as a string without copying; b must never change while
// the string is in use.
func view(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
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
