package conn

import (
	"unsafe"

	"github.com/natsio/natsio/proto"
)

// subjectMemo remembers the last subject that passed its Check, so that a
// publisher repeating one subject (the usual loop) skips the validation.
// The zero value is ready to use; it is not safe for concurrent use (a
// connection keeps one under its lock).
//
// The memo keeps its own copy of the subject and compares bytes, never
// memory: a string that is a view of memory written again later (a lent
// message's reply, a view of a reused buffer) is checked on its content, so
// other bytes at the same address and of the same length are validated
// afresh. Keeping the copy allocates only when a longer subject than any
// before is accepted.
type subjectMemo struct {
	buf  []byte
	last string // a view of buf
}

// Check is proto.ValidatePublishSubject, answered without validating when s has
// the bytes of the subject last accepted.
func (m *subjectMemo) Check(s string) error {
	if len(s) == len(m.last) && s == m.last && s != "" {
		return nil
	}
	if err := proto.ValidatePublishSubject(s); err != nil {
		return err
	}
	m.buf = append(m.buf[:0], s...)
	m.last = unsafe.String(unsafe.SliceData(m.buf), len(m.buf))
	return nil
}
