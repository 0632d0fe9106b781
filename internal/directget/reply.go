package directget

import "github.com/natsio/natsio/proto"

// Key is one of the fields the server appends to a Direct Get reply, in
// the order it appends them.
type Key uint8

const (
	// Stream is Nats-Stream, the stream's name.
	Stream Key = iota
	// Subject is Nats-Subject, the message's subject.
	Subject
	// Sequence is Nats-Sequence, its stream sequence in decimal.
	Sequence
	// TimeStamp is Nats-Time-Stamp, when the stream stored it (RFC 3339,
	// UTC, nanoseconds).
	TimeStamp
	// NumPending is Nats-Num-Pending, in replies to batch requests: how
	// many matching messages remain after this one.
	NumPending
	// LastSequence is Nats-Last-Sequence, in replies to batch requests:
	// the sequence of the previous message of the batch, 0 for the first.
	LastSequence

	numKeys
)

// singleKeys is how many keys, the first ones, the server appends to the
// reply of a one-message request.
const singleKeys = 4

// names are the header keys of the Keys.
var names = [numKeys]string{"Nats-Stream", "Nats-Subject", "Nats-Sequence", "Nats-Time-Stamp", "Nats-Num-Pending", "Nats-Last-Sequence"}

// String returns k's header key ("Nats-Sequence").
func (k Key) String() string {
	if k < numKeys {
		return names[k]
	}
	return "directget.Key(?)"
}

// keyOf returns the Key of a header key, or numKeys for any other.
func keyOf(k string) Key {
	switch k {
	case "Nats-Stream":
		return Stream
	case "Nats-Subject":
		return Subject
	case "Nats-Sequence":
		return Sequence
	case "Nats-Time-Stamp":
		return TimeStamp
	case "Nats-Num-Pending":
		return NumPending
	case "Nats-Last-Sequence":
		return LastSequence
	}
	return numKeys
}

// MaxAlso is how many keys besides the server's Parse reads on request.
const MaxAlso = 2

// Reply is a Direct Get reply's header block as Parse read it. Its strings
// are views of the block (see the package doc for their lifetime). The
// zero Reply is that of a reply without header block.
type Reply struct {
	// Status and Description are those of the block's status line
	// ("NATS/1.0 404 Message Not Found": 404, "Message Not Found"); 0 and
	// "" for a reply that carries a message.
	Status      int
	Description string

	block []byte
	// fields is how many fields were read; tail the index of the first
	// field of the final run of server keys (fields when the last field
	// is not one).
	fields, tail int
	// at is one more than the index of the last field of each Key (0:
	// none), value that field's value.
	at    [numKeys]int
	value [numKeys]string
	// also and hasAlso are the first value of each key passed to Parse.
	also    [MaxAlso]string
	hasAlso [MaxAlso]bool
}

// Parse reads block, the header block of a Direct Get reply (nil or empty
// for a reply without one), into r, in one pass: the status line, the
// last field of each Key and where the final run of server fields starts,
// and the first field of each of the keys in also (at most MaxAlso, which
// must not be server keys; more panic), as proto.Header.Lookup reads it.
// Values have their surrounding blanks removed. What r held before is
// forgotten. Parse allocates nothing and never fails; block is expected to
// have passed proto.ValidateHeaderBlock, and on other bytes the fields end
// at the first malformed line.
func (r *Reply) Parse(block []byte, also ...string) {
	if len(also) > MaxAlso {
		panic("directget: Parse given more than MaxAlso keys")
	}
	*r = Reply{block: block}
	h := proto.HeaderFromBlock(block)
	r.Status, r.Description = h.Status()
	n, run := 0, -1 // run: index of the first field of the current run of server keys
	for k, v := range h.All() {
		if key := keyOf(k); key < numKeys {
			if run < 0 {
				run = n
			}
			r.at[key], r.value[key] = n+1, v
		} else {
			run = -1
			for i, a := range also {
				if k == a && !r.hasAlso[i] {
					r.also[i], r.hasAlso[i] = v, true
				}
			}
		}
		n++
	}
	if run < 0 {
		run = n
	}
	r.fields, r.tail = n, run
}

// Last returns the value of the last field of key k in the block and
// whether there is one: the server's field in the reply to a one-message
// request (see the package doc).
func (r *Reply) Last(k Key) (string, bool) {
	return r.value[k], r.at[k] > 0
}

// InTail returns the value of the last field of key k within the block's
// final run of server fields and whether there is one: the server's field
// in a reply to a batch request (see the package doc).
func (r *Reply) InTail(k Key) (string, bool) {
	if r.at[k] <= r.tail {
		return "", false
	}
	return r.value[k], true
}

// Also returns the value of the first field of the i-th key passed to
// Parse, and whether there is one.
func (r *Reply) Also(i int) (string, bool) {
	return r.also[i], r.hasAlso[i]
}
