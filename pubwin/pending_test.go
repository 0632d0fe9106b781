package pubwin

import (
	"math/rand/v2"
	"testing"
)

// TestPendingSetMatchesMap drives the ring with tokens handed out in order
// and completed out of order, some held far longer than the ring's size,
// and checks every operation against a map.
func TestPendingSetMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	p := newPendingSet(8) // a ring of 64
	ref := map[uint64]*Future{}
	var live []uint64
	next := uint64(0)
	for step := range 200000 {
		switch {
		case len(live) < 40 && rng.IntN(3) > 0:
			next++
			f := &Future{token: next}
			p.add(f)
			ref[next] = f
			live = append(live, next)
		case len(live) > 0:
			// Mostly the oldest, sometimes any: a few stay for long.
			i := 0
			if rng.IntN(4) == 0 {
				i = rng.IntN(len(live))
			}
			if rng.IntN(50) == 0 && len(live) > 1 {
				i = 1 + rng.IntN(len(live)-1) // leave the oldest behind
			}
			tok := live[i]
			live = append(live[:i], live[i+1:]...)
			if got := p.remove(tok); got != ref[tok] {
				t.Fatalf("step %d: remove(%d) = %v, want %v", step, tok, got, ref[tok])
			}
			delete(ref, tok)
			if p.remove(tok) != nil || p.get(tok) != nil {
				t.Fatalf("step %d: %d still present after removal", step, tok)
			}
		}
		if p.len() != len(ref) {
			t.Fatalf("step %d: len %d, want %d", step, p.len(), len(ref))
		}
		if len(live) > 0 {
			tok := live[rng.IntN(len(live))]
			if p.get(tok) != ref[tok] {
				t.Fatalf("step %d: get(%d) wrong", step, tok)
			}
		}
	}
	all := p.drain(nil)
	if len(all) != len(ref) || p.len() != 0 {
		t.Fatalf("drain returned %d of %d, left %d", len(all), len(ref), p.len())
	}
	for _, f := range all {
		if ref[f.token] != f {
			t.Fatalf("drain returned a stranger %d", f.token)
		}
	}
}

// TestPendingSetOverflow: a future outlives many ring sizes of newer ones.
func TestPendingSetOverflow(t *testing.T) {
	p := newPendingSet(8) // a ring of 64
	old := &Future{token: 1}
	p.add(old)
	for tok := uint64(2); tok < 1000; tok++ {
		f := &Future{token: tok}
		p.add(f)
		if p.get(tok) != f || p.get(1) != old {
			t.Fatalf("token %d: lookups failed", tok)
		}
		if tok%64 == 1 && len(p.overflow) == 0 {
			t.Fatalf("token %d shares the old future's slot but is not in overflow", tok)
		}
		if p.remove(tok) != f {
			t.Fatalf("token %d: remove failed", tok)
		}
	}
	if p.len() != 1 || p.remove(1) != old || p.len() != 0 || len(p.overflow) != 0 {
		t.Fatalf("the old future was not kept and removed exactly once")
	}
}
