package faultproxy

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// dialTimeout bounds how long a new connection waits for the target.
	dialTimeout = 5 * time.Second
	// acceptBackoff is the pause after an unexpected Accept error.
	acceptBackoff = 5 * time.Millisecond
)

// Proxy is a TCP proxy with switchable faults. Create it with [New]; all
// methods are safe for concurrent use.
type Proxy struct {
	ln     net.Listener
	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // accept loop and every pump

	mu     sync.Mutex
	target string
	links  map[*link]struct{}
	closed bool

	refuse   atomic.Bool
	accepted atomic.Int64
	bytes    [2]atomic.Int64 // bytes written, per direction
	writes   [2]atomic.Int64 // Write calls, per direction
	faults   [2]faultState
}

// New starts a proxy listening on 127.0.0.1 on a free port and forwarding
// every accepted connection to target (host:port).
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		ln:     ln,
		ctx:    ctx,
		cancel: cancel,
		target: target,
		links:  make(map[*link]struct{}),
	}
	p.faults[Up].init()
	p.faults[Down].init()
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr returns the proxy's listening address as host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// URL returns "nats://" + Addr().
func (p *Proxy) URL() string { return "nats://" + p.Addr() }

// SetTarget changes the address that new connections are forwarded to.
// Existing connections are not affected.
func (p *Proxy) SetTarget(addr string) {
	p.mu.Lock()
	p.target = addr
	p.mu.Unlock()
}

// Refuse makes the proxy accept and immediately close new connections (on) or
// forward them again (off), simulating a server that is down while the port
// stays reachable. Existing connections are not affected; use CutAll.
func (p *Proxy) Refuse(on bool) { p.refuse.Store(on) }

// CutAll abruptly closes (with a TCP reset where possible) both sides of every
// current connection. New connections are still accepted.
func (p *Proxy) CutAll() {
	for _, l := range p.snapshot() {
		l.close(true)
	}
}

// InjectDown writes b to every live client connection as if it came from the
// server. The bytes bypass all faults and are not counted in BytesDown; they
// may land between two chunks of forwarded data. InjectDown blocks until b is
// written to each connection or that connection is closed.
func (p *Proxy) InjectDown(b []byte) {
	for _, l := range p.snapshot() {
		_, _ = l.client.Write(b)
	}
}

// Conns returns the number of live proxied connections.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.links)
}

// Accepted returns the number of connections accepted so far, including
// refused ones.
func (p *Proxy) Accepted() int64 { return p.accepted.Load() }

// BytesUp returns the number of bytes written to servers so far (after
// Corrupt). Bytes are counted as a write starts, so data a server has read is
// always included.
func (p *Proxy) BytesUp() int64 { return p.bytes[Up].Load() }

// BytesDown returns the number of bytes forwarded to clients so far, counted
// like BytesUp (InjectDown not included).
func (p *Proxy) BytesDown() int64 { return p.bytes[Down].Load() }

// Close closes the listener and every live connection and waits until all
// goroutines started by the proxy have exited. It unblocks stalled and
// throttled connections. Calling Close again returns nil.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.wg.Wait()
		return nil
	}
	p.closed = true
	p.mu.Unlock()

	p.cancel()
	err := p.ln.Close()
	for _, l := range p.snapshot() {
		l.close(false)
	}
	p.wg.Wait()
	return err
}

func (p *Proxy) snapshot() []*link {
	p.mu.Lock()
	defer p.mu.Unlock()
	ls := make([]*link, 0, len(p.links))
	for l := range p.links {
		ls = append(ls, l)
	}
	return ls
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if p.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			t := time.NewTimer(acceptBackoff)
			select {
			case <-t.C:
			case <-p.ctx.Done():
				t.Stop()
				return
			}
			continue
		}
		p.accepted.Add(1)
		if p.refuse.Load() {
			_ = c.Close()
			continue
		}
		l := p.register(c)
		if l == nil {
			continue
		}
		p.wg.Add(1)
		go p.serve(l)
	}
}

// register records a new client connection, or closes it and returns nil if
// the proxy is closed.
func (p *Proxy) register(c net.Conn) *link {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return nil
	}
	ctx, cancel := context.WithCancel(p.ctx)
	l := &link{
		p:      p,
		client: c,
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
		target: p.target,
	}
	p.links[l] = struct{}{}
	return l
}

func (p *Proxy) unregister(l *link) {
	p.mu.Lock()
	delete(p.links, l)
	p.mu.Unlock()
}

// link is one proxied connection: a client side and, once dialled, a server
// side.
type link struct {
	p       *Proxy
	client  net.Conn
	ctx     context.Context // cancelled when the link closes; aborts the dial
	cancel  context.CancelFunc
	done    chan struct{} // closed when the link closes
	target  string
	pending atomic.Int32 // running pumps

	mu     sync.Mutex
	server net.Conn
	closed bool
}

// setServer attaches the dialled server connection. It returns false (and
// closes c) if the link was closed meanwhile.
func (l *link) setServer(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		_ = c.Close()
		return false
	}
	l.server = c
	return true
}

// close closes both sides of the link once; abort requests a TCP reset.
func (l *link) close(abort bool) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	srv := l.server
	l.mu.Unlock()

	l.cancel()
	close(l.done)
	for _, c := range []net.Conn{l.client, srv} {
		if c == nil {
			continue
		}
		if tc, ok := c.(*net.TCPConn); ok && abort {
			_ = tc.SetLinger(0)
		}
		_ = c.Close()
	}
	l.p.unregister(l)
}

// pumpDone is called as each pump exits; the last one closes the link.
func (l *link) pumpDone() {
	if l.pending.Add(-1) == 0 {
		l.close(false)
	}
}
