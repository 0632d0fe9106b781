package directget

import (
	"bytes"
	"time"

	"github.com/natsio/natsio/internal/stamp"
	"github.com/natsio/natsio/proto"
)

// Msg is the stored message a Direct Get reply carries, but for its data
// (the reply's payload). Subject and Header are views of the reply's
// header block (see the package doc).
type Msg struct {
	Subject  string
	Sequence uint64
	// Time is when the stream stored the message; zero when the reply
	// has no Nats-Time-Stamp.
	Time time.Time
	// Header is the header the message was stored with: the block
	// without the server's fields; zero when no field remains.
	Header proto.Header
	// NumPending and LastSequence are read by Batch only: see Key.
	NumPending, LastSequence uint64
	// HasPending reports whether a batch reply had Nats-Num-Pending (a
	// server before 2.11 answers a batch request with a one-message
	// reply, without it).
	HasPending bool
}

// headerStart is the shortest block: the version line and the final empty
// line.
const headerStart = "NATS/1.0"

// hasBlock reports whether r was read from a header block at all.
func (r *Reply) hasBlock() bool {
	return len(r.block) >= len(headerStart)+4 && bytes.HasPrefix(r.block, []byte(headerStart))
}

// Single reads the reply to a one-message Direct Get (by sequence, last or
// next by subject) the way the package doc's Single rule says: the last
// Nats-Subject (required, possibly empty), Nats-Sequence (required) and
// Nats-Time-Stamp (optional) fields, and the stored header without the
// last field of each of the four keys the server appends. Other fields,
// Nats-Num-Pending and Nats-Last-Sequence among them, stay in the header.
//
// It fails with ErrNoHeader for a reply without a header block and with an
// *Error for a missing subject or sequence, or a sequence or time stamp
// the server would not write. It may rewrite the block (see the package
// doc): call it once, on a reply whose Status is 0.
func (r *Reply) Single() (Msg, error) {
	if !r.hasBlock() {
		return Msg{}, ErrNoHeader
	}
	subj, ok := r.Last(Subject)
	if !ok {
		return Msg{}, missing(Subject)
	}
	seq, ok := r.Last(Sequence)
	if !ok {
		return Msg{}, missing(Sequence)
	}
	m := Msg{Subject: subj}
	if m.Sequence, ok = proto.ParseUint(seq); !ok {
		return Msg{}, bad(Sequence, seq)
	}
	if ts, ok := r.Last(TimeStamp); ok {
		var err error
		if m.Time, err = stamp.Parse(ts); err != nil {
			return Msg{}, bad(TimeStamp, ts)
		}
	}
	m.Header = r.singleHeader()
	return m, nil
}

// Batch reads one reply of a batch Direct Get (GetBatch, GetLastMsgsFor)
// the way the package doc's Batch rule says: within the final run of
// server fields, the last Nats-Subject (required, not empty),
// Nats-Sequence (required), Nats-Time-Stamp, Nats-Num-Pending and
// Nats-Last-Sequence (optional) fields, and the stored header: the fields
// before that run.
//
// It fails with ErrNoHeader for a reply without a header block and with an
// *Error for a missing subject or sequence, or a field the server would
// not write. It rewrites the block (see the package doc): call it once, on
// a reply whose Status is 0.
func (r *Reply) Batch() (Msg, error) {
	if !r.hasBlock() {
		return Msg{}, ErrNoHeader
	}
	var m Msg
	var ok bool
	subj, hasSubj := r.InTail(Subject)
	seq, hasSeq := r.InTail(Sequence)
	if hasSeq {
		if m.Sequence, ok = proto.ParseUint(seq); !ok {
			return Msg{}, bad(Sequence, seq)
		}
	}
	if ts, has := r.InTail(TimeStamp); has {
		var err error
		if m.Time, err = stamp.Parse(ts); err != nil {
			return Msg{}, bad(TimeStamp, ts)
		}
	}
	var pending string
	if pending, m.HasPending = r.InTail(NumPending); m.HasPending {
		if m.NumPending, ok = proto.ParseUint(pending); !ok {
			return Msg{}, bad(NumPending, pending)
		}
	}
	if last, has := r.InTail(LastSequence); has {
		if m.LastSequence, ok = proto.ParseUint(last); !ok {
			return Msg{}, bad(LastSequence, last)
		}
	}
	switch {
	case !hasSubj || subj == "":
		return Msg{}, missing(Subject)
	case !hasSeq:
		return Msg{}, missing(Sequence)
	}
	m.Subject = subj
	m.Header = r.cut(r.tail)
	return m, nil
}
