package proto

import "iter"

// RawHeader is a header block as received in an HMSG, read in place.
//
// Deprecated: use Header, made from a block with HeaderFromBlock.
type RawHeader []byte

// Validate is ValidateHeaderBlock.
func (r RawHeader) Validate() error { return ValidateHeaderBlock(r) }

// Status returns the inline status code and description of the block, or
// 0 when it has none or is malformed. The description is a view into r.
func (r RawHeader) Status() (code int, description []byte) { return blockStatus(r) }

// Lookup returns the first value of key as a view into r, and whether key
// is present.
func (r RawHeader) Lookup(key string) ([]byte, bool) { return blockLookup(r, key) }

// Get returns the first value of key, or nil.
func (r RawHeader) Get(key string) []byte {
	v, _ := r.Lookup(key)
	return v
}

// All yields each key and value in order, as views into r.
func (r RawHeader) All() iter.Seq2[[]byte, []byte] { return blockFields(r) }

// Header copies the block's fields into a new Header. It returns an error
// matching ErrBadHeader when the block is malformed.
func (r RawHeader) Header() (*Header, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	h := HeaderFromBlock(r)
	c := h.Clone()
	c.materialise(0)
	return c, nil
}

// AppendHPubRaw is AppendHPub with a header block already encoded.
//
// Deprecated: use AppendHPub with a header from HeaderFromBlock.
func AppendHPubRaw(dst []byte, subject, reply string, block RawHeader, payload []byte) ([]byte, error) {
	if len(block) == 0 {
		return dst, ErrBadHeader
	}
	h := HeaderFromBlock(block)
	return AppendHPub(dst, subject, reply, &h, payload)
}
