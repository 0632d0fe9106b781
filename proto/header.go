package proto

import (
	"encoding/json"
	"iter"
	"slices"
	"strings"
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
// is an empty header ready to use; Reset empties it keeping its storage,
// so a Header reused across publishes allocates nothing. The first Add or
// Set allocates room for four fields at once: building a header of up to
// four fields costs one allocation. Publishing a Header (AppendHPub) writes
// its fields in the order they were added.
//
// A Header refers to its fields as a map does: a copy made by assignment
// shares them, and a change made through one copy (Add, Set, Del, Reset)
// is seen through the other. Use Clone for an independent copy. (A
// received header, until it is first modified, and the zero Header have
// no fields to share: modifying a copy of one leaves the original as it
// was.)
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
type Header struct {
	// raw is the received block read in place, a view of the message's
	// bytes; "" for a built header and once a received one has been
	// modified. f holds the fields of a built or modified header, nil
	// until the first Add or Set; it is unused while raw is set. A Header
	// is kept to three words because every delivered message holds one.
	raw string
	f   *headerFields
}

// headerFields is the storage of a built header's fields: s starts as
// buf[:0], so that a header of up to len(buf) fields costs one allocation.
type headerFields struct {
	s   []HeaderField
	buf [4]HeaderField
}

// newHeaderFields returns storage with room for n fields.
func newHeaderFields(n int) *headerFields {
	f := new(headerFields)
	f.init(n)
	return f
}

func (f *headerFields) init(n int) {
	if n <= len(f.buf) {
		f.s = f.buf[:0]
	} else {
		f.s = make([]HeaderField, 0, n)
	}
}

// headerAndFields is a Header allocated with its fields, for the
// functions that return a *Header (NewHeader, Clone): one allocation.
type headerAndFields struct {
	h Header
	f headerFields
}

// newHeaderPtr returns a new Header with room for n fields.
func newHeaderPtr(n int) *Header {
	p := new(headerAndFields)
	p.f.init(n)
	p.h.f = &p.f
	return &p.h
}

// list returns the fields of a built or modified header.
func (h *Header) list() []HeaderField {
	if h.f == nil {
		return nil
	}
	return h.f.s
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
	f := newHeaderFields(n)
	for _, k := range keys {
		for _, v := range m[k] {
			f.s = append(f.s, HeaderField{k, v})
		}
	}
	return Header{f: f}
}

// NewHeader returns a header with the given keys and values, in order:
// NewHeader("Nats-Msg-Id", "1", "X-Tag", "a") has two fields. It panics
// when kv has an odd number of strings. The header is not validated.
func NewHeader(kv ...string) *Header {
	if len(kv)%2 != 0 {
		panic("proto: NewHeader with an odd number of strings")
	}
	h := newHeaderPtr(len(kv) / 2)
	for i := 0; i < len(kv); i += 2 {
		h.f.s = append(h.f.s, HeaderField{kv[i], kv[i+1]})
	}
	return h
}

// fields returns h's field storage for a modification, with room for
// extra more fields: allocated on the first call, and for a received
// header filled with views of its block, which is dropped.
func (h *Header) fields(extra int) *headerFields {
	if h.raw == "" {
		if h.f == nil {
			h.f = newHeaderFields(extra)
		}
		return h.f
	}
	n := 0
	for rest, ok := fieldsStart(h.raw); ok; {
		_, _, rest, ok = nextField(rest)
		if ok {
			n++
		}
	}
	f := h.f
	if f == nil {
		f = newHeaderFields(n + extra)
	} else {
		clear(f.s)
		f.s = f.s[:0]
	}
	for rest, ok := fieldsStart(h.raw); ok; {
		var k, v string
		if k, v, rest, ok = nextField(rest); ok {
			f.s = append(f.s, HeaderField{k, v})
		}
	}
	h.raw, h.f = "", f
	return f
}

// Add appends a value for key, keeping earlier ones.
func (h *Header) Add(key, value string) {
	f := h.fields(1)
	f.s = append(f.s, HeaderField{key, value})
}

// Set replaces every value of key with value: the first field of key
// keeps its place, the others are removed.
func (h *Header) Set(key, value string) {
	f := h.fields(1)
	for i := range f.s {
		if f.s[i].Key == key {
			f.s[i].Value = value
			f.delFrom(key, i+1)
			return
		}
	}
	f.s = append(f.s, HeaderField{key, value})
}

// Del removes every value of key. A received header without key is left
// as it is.
func (h *Header) Del(key string) {
	if h.raw != "" {
		if _, ok := h.Lookup(key); !ok {
			return
		}
		h.fields(0)
	}
	if h.f != nil {
		h.f.delFrom(key, 0)
	}
}

func (f *headerFields) delFrom(key string, from int) {
	out := f.s[:from]
	for _, fl := range f.s[from:] {
		if fl.Key != key {
			out = append(out, fl)
		}
	}
	clear(f.s[len(out):])
	f.s = out
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
	if h.raw != "" {
		return blockLookup(h.raw, key)
	}
	for _, f := range h.list() {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

// Values returns every value of key in order, as a single-use iterator.
func (h *Header) Values(key string) iter.Seq[string] {
	// The block is scanned here rather than through another iterator:
	// nested iterators make the compiler move the range state of the
	// caller's loop to the heap.
	return func(yield func(string) bool) {
		if h == nil {
			return
		}
		if h.raw != "" {
			for rest, ok := fieldsStart(h.raw); ok; {
				var k, v string
				if k, v, rest, ok = nextField(rest); ok && k == key && !yield(v) {
					return
				}
			}
			return
		}
		for _, f := range h.list() {
			if f.Key == key && !yield(f.Value) {
				return
			}
		}
	}
}

// All yields every key and value in order (the order of the wire, for a
// received header).
func (h *Header) All() iter.Seq2[string, string] {
	// As in Values, the block is scanned in place, not through another
	// iterator.
	return func(yield func(string, string) bool) {
		if h == nil {
			return
		}
		if h.raw != "" {
			for rest, ok := fieldsStart(h.raw); ok; {
				var k, v string
				if k, v, rest, ok = nextField(rest); ok && !yield(k, v) {
					return
				}
			}
			return
		}
		for _, f := range h.list() {
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
	if h.raw != "" {
		n := 0
		for rest, ok := fieldsStart(h.raw); ok; {
			if _, _, rest, ok = nextField(rest); ok {
				n++
			}
		}
		return n
	}
	return len(h.list())
}

// IsZero reports whether h holds neither a received block nor a field: it
// is the zero value, or was Reset, or all its fields were deleted. A
// message delivered without headers has a zero Header; one delivered with
// a header block has not, even when the block holds only a status line or
// nothing at all ("NATS/1.0\r\n\r\n").
func (h *Header) IsZero() bool {
	return h == nil || (h.raw == "" && len(h.list()) == 0)
}

// Status returns the status code and description of a received header's
// status line ("NATS/1.0 503" gives 503 and ""), or 0 and "" when it has
// none or it is malformed, and for a header that was built or modified.
// The description is a view of the received bytes (see Header).
func (h *Header) Status() (code int, description string) {
	if h == nil || h.raw == "" {
		return 0, ""
	}
	return blockStatus(h.raw)
}

// Block returns the received block h reads, or nil when h was built or
// has been modified. The bytes are the message's memory, with the
// message's lifetime (see Header): writing to them changes h, and the
// caller must not do so unless the message is its own.
func (h *Header) Block() []byte {
	if h == nil || h.raw == "" {
		return nil
	}
	return h.block()
}

// block is the received block as bytes: the memory HeaderFromBlock was
// given, not a copy.
func (h *Header) block() []byte {
	return unsafe.Slice(unsafe.StringData(h.raw), len(h.raw))
}

// Reset removes every field and any received block, keeping the storage
// of the fields for reuse.
func (h *Header) Reset() {
	h.raw = ""
	if h.f != nil {
		clear(h.f.s)
		h.f.s = h.f.s[:0]
	}
}

// Clone returns a deep copy of h, nil for a nil h. The copy shares no
// memory with h or with the message h was received in: it stays valid
// after a borrowed message's handler returns. A received header's copy is
// still a received header (its block copied), with its status line.
func (h *Header) Clone() *Header {
	if h == nil {
		return nil
	}
	if h.raw != "" {
		return &Header{raw: strings.Clone(h.raw)}
	}
	fs := h.list()
	if len(fs) == 0 {
		return &Header{}
	}
	// One buffer for every key and value: the strings may be views of a
	// received block.
	n := 0
	for _, f := range fs {
		n += len(f.Key) + len(f.Value)
	}
	buf := make([]byte, 0, n)
	c := newHeaderPtr(len(fs))
	for _, f := range fs {
		start := len(buf)
		buf = append(buf, f.Key...)
		buf = append(buf, f.Value...)
		b := buf[start:]
		c.f.s = append(c.f.s, HeaderField{view(b[:len(f.Key)]), view(b[len(f.Key):])})
	}
	return c
}

// Validate checks every key is an RFC 7230 token and no value holds CR, LF
// or NUL; for an unmodified received header, it checks the block as
// ValidateHeaderBlock does (which lets a NUL in a value through, as the
// server does). It returns an error matching ErrBadHeader otherwise.
func (h *Header) Validate() error {
	if h == nil {
		return nil
	}
	if h.raw != "" {
		return ValidateHeaderBlock(h.block())
	}
	for _, f := range h.list() {
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
	if h != nil && h.raw != "" {
		return len(h.raw)
	}
	n := len(headerVersion) + 4
	if h != nil {
		for _, f := range h.list() {
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
	if h != nil && h.raw != "" {
		return append(dst, h.raw...)
	}
	dst = append(dst, headerVersion+"\r\n"...)
	if h != nil {
		for _, f := range h.list() {
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
