package extra

// Test hooks: they break the protocol on purpose.

// SkipFastSeq makes the next message of p skip a batch sequence, as if one
// message had been lost on the way.
func SkipFastSeq(p *FastPublisher) { p.seq++ }

// SkipAtomicSeq makes the next message of p skip a batch sequence.
func SkipAtomicSeq(p *BatchPublisher) { p.seq++ }

// FastPings reports how many pings p has sent.
func FastPings(p *FastPublisher) uint64 { return p.pings }
