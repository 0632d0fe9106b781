package conn

import (
	"sync"
	"unsafe"

	"github.com/natsio/natsio/proto"
)

// Borrowed batches.
//
// A message the connection delivers is normally a copy the receiver owns:
// its subject, reply and body are copied out of the read buffer into slabs
// the garbage collector frees. For a consumer that reads the socket itself
// (nextBatch with readInline) and finishes with each batch before asking for the next,
// that copy, the Msg allocated for it and the collection afterwards are a
// large part of what receiving costs (a fifth to a third of the client CPU
// of an ordered read-through). borrowBatches lets such a consumer take
// views instead:
//
//   - While the nextBatch caller reads the socket for its subscription
//     (readForSub with lending on, reader.lendSub), each message for that
//     subscription lying wholly in the read buffer is delivered as a view
//     of it, in a Msg the subscription reuses from batch to batch
//     (lender.next). Messages the parser had to assemble across reads, and
//     messages read by anyone else, are ordinary owned copies.
//   - The reader remembers that its buffer is lent (lentTo, lentSeq). Before
//     the next read into it (reader.fill, keepLent), the buffer is handed to
//     the subscription and the link reads into a spare, unless the reader
//     is that subscription's own nextBatch caller and the batch those views
//     belonged to is over (the caller asked for the next one). In a steady
//     loop the consumer reads again into the same buffer: nothing moves.
//   - nextBatch starts a new batch (lender.newBatch): the Msgs are reused
//     from the start, and the buffers handed over for the previous batch
//     become spares.
//
// A borrowed message thus stays intact until its subscription's next
// nextBatch call, whoever reads the socket meanwhile. Its memory is never
// freed under it (the collector frees what nobody references), so a
// caller that keeps a message too long sees other bytes, never faults.

// lender is the state of a subscription whose batches are borrowed.
type lender struct {
	shell func(reuse *Msg) *Msg

	// Used only by the nextBatch caller (and by deliver while that caller
	// reads the socket inline).
	shells []*Msg
	used   int
	seq    uint64 // number of the batch being filled

	// mu guards the buffers: a link's role holder hands one over from any
	// goroutine.
	mu    sync.Mutex
	lent  [][]byte // buffers messages of the current batch may alias
	spare [][]byte
}

func newShell(reuse *Msg) *Msg {
	if reuse != nil {
		return reuse
	}
	return new(Msg)
}

// borrowBatches makes nextBatch lend messages instead of handing over
// copies, when its caller reads them from the socket itself
// (readInline): their Subject, Reply, Header and Data are views of the
// connection's read buffer and the Msg values are reused, so a message is
// valid only until the next nextBatch call on s. A caller that keeps any
// of it longer must copy it (strings.Clone, bytes.Clone); acknowledgements
// and replies published before then are safe (publishing copies). In
// exchange a lent message costs no copy and no allocation. Messages read
// by anyone else (the reader goroutine, a requester reading inline) and
// messages that spanned two socket reads are still copies; the batch mixes
// both, and Stats.BorrowedMsgs counts the lent ones.
//
// shell supplies the Msgs that hold lent messages: called with nil it
// returns a new one, called with a Msg of an earlier batch it prepares
// that one for reuse and returns it. nil means plain Msgs; a subscription
// made with its own allocator (subscribeBatches) passes a supplier of the same kind of Msg
// (the JetStream consumers' slab shells). Call borrowBatches once, before the first
// nextBatch; it cannot be undone. nextBatch must then be called from one
// goroutine at a time.
func (s *Subscription) borrowBatches(shell func(reuse *Msg) *Msg) {
	if shell == nil {
		shell = newShell
	}
	if s.lend.CompareAndSwap(nil, &lender{shell: shell}) {
		s.mode.CompareAndSwap(deliverQueue, deliverLent)
	}
}

// newBatch starts the next batch: the previous one is over.
func (ld *lender) newBatch() {
	ld.seq++
	ld.used = 0
	ld.mu.Lock()
	for _, b := range ld.lent {
		if len(ld.spare) < maxSpares {
			ld.spare = append(ld.spare, b)
		}
	}
	clear(ld.lent)
	ld.lent = ld.lent[:0]
	ld.mu.Unlock()
}

// next returns a Msg for the next lent message of the batch.
func (ld *lender) next() *Msg {
	if ld.used < len(ld.shells) {
		m := ld.shell(ld.shells[ld.used])
		ld.shells[ld.used] = m
		ld.used++
		return m
	}
	m := ld.shell(nil)
	if len(ld.shells) < maxShells {
		ld.shells = append(ld.shells, m)
		ld.used++
	}
	return m
}

// keep takes buf, which messages of the current batch may alias, and
// returns a buffer for the link to read into instead.
func (ld *lender) keep(buf []byte) []byte {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	ld.lent = append(ld.lent, buf)
	if n := len(ld.spare); n > 0 {
		b := ld.spare[n-1]
		ld.spare[n-1] = nil
		ld.spare = ld.spare[:n-1]
		return b
	}
	return make([]byte, readBufSize)
}

// lendMsg delivers op to s, the subscription whose nextBatch caller is
// reading, as a view of the read buffer.
func (r *reader) lendMsg(op *proto.Op, s *Subscription) *Msg {
	ld := s.lend.Load()
	m := ld.next()
	fillView(m, op, s)
	r.lentTo, r.lentSeq = ld, ld.seq
	r.lentMsgs++
	return m
}

// keepLent runs before each read into r.buf: if lent messages may still
// alias it, it goes to their subscription and the reader reads into a
// spare.
func (r *reader) keepLent() {
	ld := r.lentTo
	if ld == nil {
		return
	}
	r.lentTo = nil
	if r.lendSub != nil && r.lendSub.lend.Load() == ld && ld.seq != r.lentSeq {
		// The reader is that subscription's own consumer, past the batch
		// those messages belonged to (ld.seq is its own field).
		return
	}
	r.buf = ld.keep(r.buf)
	r.lentBufs++
}

// inBuf reports whether op lies wholly in buf: no part of it was copied by
// the parser into memory of its own (a control line or a body that
// spanned two reads).
func inBuf(op *proto.Op, buf []byte) bool {
	if op.Owned || len(buf) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	hi := lo + uintptr(len(buf))
	return within(op.Subject, lo, hi) && within(op.Reply, lo, hi) && within(op.Body, lo, hi)
}

func within(b []byte, lo, hi uintptr) bool {
	if len(b) == 0 {
		return true
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= lo && p+uintptr(len(b)) <= hi
}
