package natstest

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/natsio/natsio/internal/faultproxy"
)

// Direction selects one half of a proxied connection.
type Direction int

const (
	// ToServer is the client → server direction.
	ToServer Direction = iota
	// ToClient is the server → client direction.
	ToClient
)

// Proxy is a TCP proxy between clients and a server that injects network
// faults: cuts, stalls, throttling, refused connections and corrupted
// bytes. Its address stays the same while faults come and go, so a client
// connected to URL reconnects to it like to a real server. Faults apply to
// current and future connections at once. It is safe for concurrent use.
// Make it with NewProxy in a test or StartProxy elsewhere.
type Proxy struct {
	p *faultproxy.Proxy

	mu      sync.Mutex
	corrupt [2]int // bytes still to corrupt, per direction
}

// NewProxy starts a proxy to upstream (a nats:// URL or host:port, such as
// Server.URL) and closes it when tb's test ends. A failure ends the test
// with tb.Fatalf.
func NewProxy(tb testing.TB, upstream string) *Proxy {
	tb.Helper()
	p, err := StartProxy(upstream)
	if err != nil {
		tb.Fatalf("natstest: %v", err)
	}
	tb.Cleanup(func() { _ = p.Close() })
	return p
}

// StartProxy starts a proxy listening on a free loopback port and
// forwarding each connection it accepts to upstream (a nats:// URL or
// host:port). Call Close when done.
func StartProxy(upstream string) (*Proxy, error) {
	target := upstream
	if _, hp, ok := strings.Cut(upstream, "://"); ok {
		target = hp
	}
	if i := strings.LastIndexByte(target, '@'); i >= 0 {
		target = target[i+1:] // credentials in the URL
	}
	if target == "" {
		return nil, fmt.Errorf("natstest: proxy without an upstream address")
	}
	fp, err := faultproxy.New(target)
	if err != nil {
		return nil, fmt.Errorf("natstest: proxy: %w", err)
	}
	p := &Proxy{p: fp}
	for _, d := range []Direction{ToServer, ToClient} {
		p.p.Corrupt(d.fp(), p.corrupter(d))
	}
	return p, nil
}

func (d Direction) fp() faultproxy.Direction {
	if d == ToClient {
		return faultproxy.Down
	}
	return faultproxy.Up
}

// URL returns nats://127.0.0.1:PORT, the address clients connect to.
func (p *Proxy) URL() string { return p.p.URL() }

// Addr returns the listening address, 127.0.0.1:PORT.
func (p *Proxy) Addr() string { return p.p.Addr() }

// Cut abruptly closes (with a TCP reset where possible) both sides of every
// current connection, like a network failure. New connections are still
// accepted: clients reconnect at once unless Down is on.
func (p *Proxy) Cut() { p.p.CutAll() }

// Down refuses new connections (on) — each is accepted and closed at once,
// as by a server that is down — or lets them through again (off). Current
// connections are not affected: combine it with Cut for an outage.
func (p *Proxy) Down(on bool) { p.p.Refuse(on) }

// Stall stops forwarding in both directions (on) or resumes it (off). The
// data is held, not dropped, and the connections stay open: to the client
// the server has gone silent, as behind a dead network path. Once the stall
// is lifted the held data is delivered in order.
func (p *Proxy) Stall(on bool) {
	p.StallDirection(ToServer, on)
	p.StallDirection(ToClient, on)
}

// StallDirection is Stall for one direction.
func (p *Proxy) StallDirection(d Direction, on bool) { p.p.Stall(d.fp(), on) }

// Throttle limits forwarding to about bytesPerSecond bytes per second in
// each direction of each connection; 0 or less removes the limit.
func (p *Proxy) Throttle(bytesPerSecond int) {
	p.ThrottleDirection(ToServer, bytesPerSecond)
	p.ThrottleDirection(ToClient, bytesPerSecond)
}

// ThrottleDirection is Throttle for one direction.
func (p *Proxy) ThrottleDirection(d Direction, bytesPerSecond int) {
	p.p.Throttle(d.fp(), bytesPerSecond)
}

// Corrupt flips every bit of the next n bytes forwarded to clients (on
// whichever connections carry them), so a client reads protocol garbage:
// it should report a protocol error and reconnect. n replaces what is left
// of an earlier Corrupt; 0 cancels it.
func (p *Proxy) Corrupt(n int) { p.CorruptDirection(ToClient, n) }

// CorruptDirection is Corrupt for one direction; ToServer makes the server
// read garbage from the client.
func (p *Proxy) CorruptDirection(d Direction, n int) {
	p.mu.Lock()
	p.corrupt[d] = max(n, 0)
	p.mu.Unlock()
}

// corrupter returns the faultproxy hook of direction d: it flips the bits
// of as many bytes as are still to be corrupted.
func (p *Proxy) corrupter(d Direction) func([]byte) []byte {
	return func(b []byte) []byte {
		p.mu.Lock()
		n := min(p.corrupt[d], len(b))
		p.corrupt[d] -= n
		p.mu.Unlock()
		for i := range n {
			b[i] ^= 0xff
		}
		return b
	}
}

// Conns returns the number of connections the proxy carries now.
func (p *Proxy) Conns() int { return p.p.Conns() }

// Accepted returns the number of connections accepted so far, refused ones
// included.
func (p *Proxy) Accepted() int64 { return p.p.Accepted() }

// Close closes the listener and every connection and returns once all of
// the proxy's goroutines have ended. It is idempotent.
func (p *Proxy) Close() error { return p.p.Close() }
