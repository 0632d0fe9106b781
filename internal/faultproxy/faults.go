package faultproxy

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// Direction selects which half of a proxied connection a fault applies to.
type Direction int

const (
	// Up is the client → server direction.
	Up Direction = iota
	// Down is the server → client direction.
	Down
)

// String returns "up" or "down".
func (d Direction) String() string {
	switch d {
	case Up:
		return "up"
	case Down:
		return "down"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

func (d Direction) check() {
	if d != Up && d != Down {
		panic("faultproxy: invalid direction " + d.String())
	}
}

// faultConfig is the set of faults active in one direction.
type faultConfig struct {
	stalled bool
	rate    int // bytes per second, 0 = unlimited
	chunk   int // max bytes per write, 0 = unlimited
	corrupt func([]byte) []byte
}

// faultState holds the faults of one direction. Every change closes the
// current changed channel (a broadcast) so that pumps blocked in a stall or a
// throttle delay re-read the configuration at once.
type faultState struct {
	mu      sync.Mutex
	cfg     faultConfig
	changed chan struct{}
}

func (s *faultState) init() { s.changed = make(chan struct{}) }

// load returns the current configuration and a channel that is closed at the
// next change.
func (s *faultState) load() (faultConfig, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg, s.changed
}

func (s *faultState) update(f func(*faultConfig)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.cfg)
	close(s.changed)
	s.changed = make(chan struct{})
}

// Stall stops (on=true) or resumes (on=false) forwarding in direction dir on
// all connections, current and future. Stalled data is held, not dropped, and
// the connections stay open; once the stall is lifted the held data is
// delivered in order. Because the proxy stops reading while it holds data, TCP
// flow control eventually blocks the sender.
func (p *Proxy) Stall(dir Direction, on bool) {
	dir.check()
	p.faults[dir].update(func(c *faultConfig) { c.stalled = on })
}

// Throttle limits forwarding in direction dir to about bytesPerSecond bytes
// per second per connection, using a token bucket with a small burst (1/20 s
// worth of bytes, at least 1). A value <= 0 removes the limit.
func (p *Proxy) Throttle(dir Direction, bytesPerSecond int) {
	dir.check()
	bytesPerSecond = max(bytesPerSecond, 0)
	p.faults[dir].update(func(c *faultConfig) { c.rate = bytesPerSecond })
}

// Chunk makes the proxy forward data in direction dir in writes of at most n
// bytes (n=1 writes one byte at a time). A value <= 0 turns chunking off.
func (p *Proxy) Chunk(dir Direction, n int) {
	dir.check()
	n = max(n, 0)
	p.faults[dir].update(func(c *faultConfig) { c.chunk = n })
}

// Corrupt installs a hook that rewrites each chunk forwarded in direction dir;
// nil removes it. The hook receives the chunk about to be written (it may
// modify it in place) and returns the bytes to write instead, which may differ
// in length; an empty result drops the chunk. The hook is called from the
// proxy's goroutines, possibly concurrently for different connections, and
// runs after Chunk and Throttle have sized the chunk.
func (p *Proxy) Corrupt(dir Direction, f func(b []byte) []byte) {
	dir.check()
	p.faults[dir].update(func(c *faultConfig) { c.corrupt = f })
}

// burstFor returns the token bucket capacity for a rate: 50ms worth of bytes.
func burstFor(rate int) int { return max(rate/20, 1) }

// bucket is a token bucket owned by a single pump goroutine.
type bucket struct {
	rate   int
	tokens float64
	last   time.Time
}

// take tries to spend n tokens at the given rate. It returns 0 if the tokens
// were spent, or how long to wait before trying again. A change of rate
// restarts the bucket empty.
func (b *bucket) take(n, rate int, now time.Time) time.Duration {
	if b.rate != rate {
		b.rate, b.tokens, b.last = rate, 0, now
	}
	b.tokens += now.Sub(b.last).Seconds() * float64(rate)
	b.tokens = min(b.tokens, float64(burstFor(rate)))
	b.last = now
	if b.tokens >= float64(n) {
		b.tokens -= float64(n)
		return 0
	}
	need := (float64(n) - b.tokens) / float64(rate)
	return time.Duration(math.Ceil(need * float64(time.Second)))
}
