package pubwin

import "math/bits"

// pendingSet holds the futures awaiting acks, keyed by token. Tokens are
// handed out in sequence and most acks come back in order, so a ring
// indexed by token does the work of a map with no hashing: a future whose
// slot is still held by an older one (an ack that is very late, behind more
// than the ring's size of newer publishes) waits in a small overflow map.
// It is guarded by the window's mutex.
type pendingSet struct {
	ring     []*Future
	mask     uint64
	n        int
	overflow map[uint64]*Future
}

func newPendingSet(maxPending int) pendingSet {
	size := 1 << bits.Len(uint(max(2*maxPending, 64)-1))
	return pendingSet{ring: make([]*Future, size), mask: uint64(size - 1)}
}

func (p *pendingSet) len() int { return p.n }

func (p *pendingSet) add(f *Future) {
	p.n++
	slot := &p.ring[f.token&p.mask]
	if *slot == nil {
		*slot = f
		return
	}
	if p.overflow == nil {
		p.overflow = make(map[uint64]*Future)
	}
	p.overflow[f.token] = f
}

func (p *pendingSet) get(tok uint64) *Future {
	if f := p.ring[tok&p.mask]; f != nil && f.token == tok {
		return f
	}
	if len(p.overflow) > 0 {
		return p.overflow[tok]
	}
	return nil
}

// remove takes the future of tok out of the set, returning nil when it is
// not there (already completed, timed out or failed).
func (p *pendingSet) remove(tok uint64) *Future {
	slot := &p.ring[tok&p.mask]
	if f := *slot; f != nil && f.token == tok {
		*slot = nil
		p.n--
		return f
	}
	if f, ok := p.overflow[tok]; ok {
		delete(p.overflow, tok)
		p.n--
		return f
	}
	return nil
}

// drain removes every future, appending them to dst.
func (p *pendingSet) drain(dst []*Future) []*Future {
	if p.n == 0 {
		return dst
	}
	for i, f := range p.ring {
		if f != nil {
			dst = append(dst, f)
			p.ring[i] = nil
		}
	}
	for tok, f := range p.overflow {
		dst = append(dst, f)
		delete(p.overflow, tok)
	}
	p.n = 0
	return dst
}
