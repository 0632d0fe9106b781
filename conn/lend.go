package conn

import (
	"sync"

	"github.com/natsio/natsio/proto"
)

// Borrowed delivery.
//
// A message the connection delivers is normally a copy the receiver owns,
// carved from memory the garbage collector frees once nothing refers to
// it. A Borrowed subscription's consumer promises instead to be done with
// each message when it asks for its next batch (the handler or loop body
// returned, the next NextBatch call). The reader goroutine then copies its
// messages into memory it recycles: each lent subscription has arenas (a
// slab for the bytes, Msg shells for the messages), the reader fills one
// at a time, and an arena goes back to the reader once every message it
// holds was taken by the consumer in an earlier batch. In a steady loop a
// delivered message costs one copy and no allocation, and it pins nothing
// but its own arena, which holds only that subscription's messages, in
// queue order.
//
// The order of events makes recycling safe without per-message
// bookkeeping: an arena is retired by the reader only after the messages
// staged from it are queued, with upto set to the subscription's count of
// queued messages then (delivered); the consumer counts what it took
// (taken), and at the start of each batch frees the arenas whose messages
// all lie in the batches before (upto ≤ taken).

// lender is the recycled memory of a Borrowed subscription.
type lender struct {
	// shell prepares a Msg for reuse (or makes one, given nil); nil for
	// plain Msgs, carved from plain. Fixed.
	shell func(reuse *Msg) *Msg

	// cur is the arena being filled, plain the plain Msgs not handed out
	// yet. Owned by the reader goroutine.
	cur   *arena
	plain []Msg

	// mu guards retired and free: the reader goroutine retires arenas
	// and takes free ones, the consumer frees retired ones (newBatch).
	mu      sync.Mutex
	retired []*arena
	free    []*arena
}

// arena is one slab of lent bytes and the Msg shells that refer to it.
type arena struct {
	slab []byte
	used int
	msgs []*Msg
	n    int
	upto uint64 // the subscription's queued count when retired
}

// borrowBatches makes s's messages lent (deliverLent) from now on: each is
// valid until its consumer asks for its next batch (take). shell supplies
// the Msgs (nil: plain ones, carved msgChunk at a time); a subscription
// whose messages live in the caller's structs (SubscribeBatchesOf) passes
// a supplier of those. It cannot be undone.
func (s *Subscription) borrowBatches(shell func(reuse *Msg) *Msg) {
	if s.lend.CompareAndSwap(nil, &lender{shell: shell}) {
		s.mode.CompareAndSwap(deliverQueue, deliverLent)
	}
}

// newBatch runs at the start of each batch of s's consumer: the arenas
// whose messages were all taken in earlier batches are free again.
func (ld *lender) newBatch(taken uint64) {
	ld.mu.Lock()
	kept := ld.retired[:0]
	for _, a := range ld.retired {
		switch {
		case a.upto > taken:
			kept = append(kept, a)
		case len(ld.free) < maxSpares:
			ld.free = append(ld.free, a)
		}
	}
	clear(ld.retired[len(kept):])
	ld.retired = kept
	ld.mu.Unlock()
}

// lendMsg copies op into s's current arena and returns it, or nil when
// op's bytes do not fit an arena (the caller builds an owned copy). The
// reader goroutine calls it for a message already admitted to s's queue.
func (r *reader) lendMsg(op *proto.Op, s *Subscription, ld *lender) *Msg {
	n := len(op.Reply) + len(op.Body)
	if !s.literal {
		n += len(op.Subject)
	}
	if n > slabBytes/4 || ownedBody(op) {
		return nil
	}
	a := ld.cur
	if a == nil || len(a.slab)-a.used < n {
		a = r.nextArena(s, ld)
	}
	var m *Msg
	switch {
	case a.n < len(a.msgs) && ld.shell == nil:
		m = a.msgs[a.n]
		*m = Msg{}
	case a.n < len(a.msgs):
		m = ld.shell(a.msgs[a.n])
	default:
		m = ld.newMsg()
		a.msgs = append(a.msgs, m)
	}
	a.n++
	m.sub = s
	if s.literal {
		m.Subject = s.Subject
	} else {
		m.Subject = unsafeString(a.carve(op.Subject))
	}
	m.Reply = unsafeString(a.carve(op.Reply))
	body := a.carve(op.Body)
	h := len(op.Header)
	m.Header = proto.HeaderFromBlock(body[:h:h])
	m.Data = body[h:len(body):len(body)]
	r.lentMsgs++
	return m
}

// newMsg returns a Msg for a new shell: plain Msgs are carved msgChunk at
// a time.
func (ld *lender) newMsg() *Msg {
	if ld.shell != nil {
		return ld.shell(nil)
	}
	if len(ld.plain) == 0 {
		ld.plain = make([]Msg, msgChunk)
	}
	m := &ld.plain[0]
	ld.plain = ld.plain[1:]
	return m
}

// carve copies b into the arena.
func (a *arena) carve(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	c := a.slab[a.used : a.used+len(b) : a.used+len(b)]
	a.used += len(b)
	copy(c, b)
	return c
}

// nextArena retires s's current arena and returns a free one.
func (r *reader) nextArena(s *Subscription, ld *lender) *arena {
	if a := ld.cur; a != nil {
		// Its messages must be queued before its upto is read.
		if r.stageSub == s {
			r.flushStage()
			r.stageSub = s
		}
		s.mu.Lock()
		a.upto = s.delivered
		s.mu.Unlock()
	}
	ld.mu.Lock()
	if ld.cur != nil {
		ld.retired = append(ld.retired, ld.cur)
	}
	var a *arena
	if n := len(ld.free); n > 0 {
		a = ld.free[n-1]
		ld.free[n-1] = nil
		ld.free = ld.free[:n-1]
	}
	ld.mu.Unlock()
	if a == nil {
		a = &arena{slab: make([]byte, slabBytes), msgs: make([]*Msg, 0, slabBytes/128)}
		if r.stats != nil {
			r.stats.lentBufs.Add(1)
		}
	}
	a.used, a.n = 0, 0
	ld.cur = a
	return a
}
