package directget

import (
	"bytes"

	"github.com/natsio/natsio/proto"
)

// singleHeader returns the stored header under the Single rule: the block
// without the last field of each of the first singleKeys keys. When those
// fields are the block's last ones, as in every reply a server sends, the
// block is cut in place before them; otherwise the remaining fields are
// copied into a new block.
func (r *Reply) singleHeader() proto.Header {
	drop, first := 0, r.fields
	for _, at := range r.at[:singleKeys] {
		if at > 0 {
			drop++
			first = min(first, at-1)
		}
	}
	if first == r.fields-drop {
		return r.cut(first)
	}
	return r.without(r.at[:singleKeys])
}

// fieldOffset returns the offset in the block of the line of field i (the
// block's line i+1), or of the end of the fields when i is r.fields.
func (r *Reply) fieldOffset(i int) int {
	off := bytes.IndexByte(r.block, '\n') + 1
	for ; i > 0; i-- {
		off += bytes.IndexByte(r.block[off:], '\n') + 1
	}
	return off
}

// cut returns the header of the fields before field i, cutting the block
// in place: the first two bytes of field i's line (the start of its key)
// become the block's final empty line. It returns the zero Header when i
// is 0.
func (r *Reply) cut(i int) proto.Header {
	if i == 0 {
		return proto.Header{}
	}
	off := r.fieldOffset(i)
	r.block[off], r.block[off+1] = '\r', '\n'
	return proto.HeaderFromBlock(r.block[:off+2])
}

// without returns a new block holding the fields of r's block but those
// whose index+1 is in drop (0 entries are ignored), byte for byte, or the
// zero Header when none remains.
func (r *Reply) without(drop []int) proto.Header {
	kept := r.fields
	for _, at := range drop {
		if at > 0 {
			kept--
		}
	}
	if kept <= 0 {
		return proto.Header{}
	}
	out := make([]byte, 0, len(r.block))
	out = append(out, headerStart+"\r\n"...)
	off := bytes.IndexByte(r.block, '\n') + 1
	for i := range r.fields {
		end := off + bytes.IndexByte(r.block[off:], '\n') + 1
		skip := false
		for _, at := range drop {
			if at == i+1 {
				skip = true
				break
			}
		}
		if !skip {
			out = append(out, r.block[off:end]...)
		}
		off = end
	}
	return proto.HeaderFromBlock(append(out, "\r\n"...))
}
