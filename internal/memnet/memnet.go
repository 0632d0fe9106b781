package memnet

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// Network is the network name of memnet addresses.
const Network = "memnet"

// Addr is a memnet address.
type Addr string

// Network returns "memnet".
func (Addr) Network() string { return Network }

func (a Addr) String() string { return string(a) }

// compactAt is the consumed prefix of a buffer beyond which it is shifted
// down on the next write, so that a long-lived stream does not keep every
// byte it ever carried.
const compactAt = 64 << 10

// half is one direction of a Pipe: bytes written by one end and read by the
// other. Its mutex is held only for short critical sections; waiting is
// done in cond.Wait.
type half struct {
	mu   sync.Mutex
	cond sync.Cond

	data []byte // data[off:] is unread
	off  int

	wclosed bool // the writing end closed: EOF once data is drained
	rclosed bool // the reading end closed: writes fail

	// Read deadline of the reading end. rexpired is set when it passes;
	// rgen invalidates the timers of earlier deadlines.
	rexpired bool
	rgen     uint64
	rtimer   *time.Timer

	// Write deadline of the writing end. Writes never wait, so it is only
	// compared with the clock.
	wdeadline time.Time
}

func newHalf() *half {
	h := &half{}
	h.cond.L = &h.mu
	return h
}

// Conn is one end of a Pipe. It implements net.Conn and is safe for
// concurrent use.
type Conn struct {
	rd, wr        *half // rd: bytes from the peer; wr: bytes to the peer
	local, remote Addr

	closeMu sync.Mutex
	closed  bool
}

var _ net.Conn = (*Conn)(nil)

// Pipe returns the two ends of a buffered, full-duplex in-memory
// connection. What one end writes the other reads.
func Pipe() (a, b *Conn) {
	return PipeAddrs("memnet-a", "memnet-b")
}

// PipeAddrs is Pipe with the ends' addresses: a's LocalAddr is aAddr and
// its RemoteAddr bAddr, and conversely.
func PipeAddrs(aAddr, bAddr string) (a, b *Conn) {
	ab, ba := newHalf(), newHalf()
	a = &Conn{rd: ba, wr: ab, local: Addr(aAddr), remote: Addr(bAddr)}
	b = &Conn{rd: ab, wr: ba, local: Addr(bAddr), remote: Addr(aAddr)}
	return a, b
}

func (c *Conn) opErr(op string, err error) error {
	return &net.OpError{Op: op, Net: Network, Source: c.local, Addr: c.remote, Err: err}
}

// errBrokenPipe is the error of a write to a peer that has closed: it
// matches io.ErrClosedPipe and syscall.EPIPE.
var errBrokenPipe = brokenPipe{}

type brokenPipe struct{}

func (brokenPipe) Error() string { return "broken pipe (peer closed)" }
func (brokenPipe) Is(target error) bool {
	return target == io.ErrClosedPipe || target == syscall.EPIPE
}

// Read reads what the peer wrote. It blocks until bytes are available, the
// peer closes (io.EOF once everything was read), c is closed
// (net.ErrClosed) or the read deadline passes (os.ErrDeadlineExceeded).
func (c *Conn) Read(b []byte) (int, error) {
	h := c.rd
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		switch {
		case h.rclosed:
			return 0, c.opErr("read", net.ErrClosed)
		case h.rexpired:
			return 0, c.opErr("read", os.ErrDeadlineExceeded)
		case len(b) == 0:
			return 0, nil
		case h.off < len(h.data):
			n := copy(b, h.data[h.off:])
			h.off += n
			if h.off == len(h.data) {
				h.data, h.off = h.data[:0], 0
			}
			return n, nil
		case h.wclosed:
			return 0, io.EOF
		}
		h.cond.Wait()
	}
}

// Write queues b for the peer and returns at once: it never waits for the
// peer to read. It fails after c was closed (net.ErrClosed), once the
// write deadline has passed (os.ErrDeadlineExceeded) and when the peer has
// closed (a broken pipe, matching io.ErrClosedPipe and syscall.EPIPE).
func (c *Conn) Write(b []byte) (int, error) {
	h := c.wr
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.wclosed:
		return 0, c.opErr("write", net.ErrClosed)
	case !h.wdeadline.IsZero() && !time.Now().Before(h.wdeadline):
		return 0, c.opErr("write", os.ErrDeadlineExceeded)
	case h.rclosed:
		return 0, c.opErr("write", errBrokenPipe)
	}
	if len(b) == 0 {
		return 0, nil
	}
	if h.off > compactAt && h.off > len(h.data)/2 {
		n := copy(h.data, h.data[h.off:])
		h.data, h.off = h.data[:n], 0
	}
	h.data = append(h.data, b...)
	h.cond.Broadcast()
	return len(b), nil
}

// Close closes c: its blocked and later Reads and Writes fail with
// net.ErrClosed; the peer reads what c wrote, then io.EOF, and its writes
// fail. Bytes c had not read are discarded. A second Close returns an error
// matching net.ErrClosed.
func (c *Conn) Close() error {
	c.closeMu.Lock()
	already := c.closed
	c.closed = true
	c.closeMu.Unlock()
	if already {
		return c.opErr("close", net.ErrClosed)
	}

	h := c.rd
	h.mu.Lock()
	h.rclosed = true
	h.data, h.off = nil, 0
	h.rgen++
	if h.rtimer != nil {
		h.rtimer.Stop()
		h.rtimer = nil
	}
	h.cond.Broadcast()
	h.mu.Unlock()

	h = c.wr
	h.mu.Lock()
	h.wclosed = true
	h.cond.Broadcast()
	h.mu.Unlock()
	return nil
}

// Buffered returns the number of bytes the peer wrote that c has not read
// yet.
func (c *Conn) Buffered() int {
	h := c.rd
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.data) - h.off
}

// LocalAddr returns c's address.
func (c *Conn) LocalAddr() net.Addr { return c.local }

// RemoteAddr returns the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.remote }

// SetDeadline sets both the read and the write deadline.
func (c *Conn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// SetReadDeadline sets the deadline of blocked and future Reads; the zero
// time means none. A deadline that has passed makes Read fail at once,
// including a Read already blocked.
func (c *Conn) SetReadDeadline(t time.Time) error {
	h := c.rd
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rclosed {
		return c.opErr("set", net.ErrClosed)
	}
	h.rgen++
	if h.rtimer != nil {
		h.rtimer.Stop()
		h.rtimer = nil
	}
	h.rexpired = false
	if !t.IsZero() {
		if d := time.Until(t); d <= 0 {
			h.rexpired = true
		} else {
			gen := h.rgen
			h.rtimer = time.AfterFunc(d, func() {
				h.mu.Lock()
				if h.rgen == gen {
					h.rexpired = true
					h.rtimer = nil
					h.cond.Broadcast()
				}
				h.mu.Unlock()
			})
		}
	}
	h.cond.Broadcast()
	return nil
}

// SetWriteDeadline sets the deadline of future Writes; the zero time means
// none. Writes never wait, so a Write fails only when it starts after the
// deadline.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	h := c.wr
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.wclosed {
		return c.opErr("set", net.ErrClosed)
	}
	h.wdeadline = t
	return nil
}

// Listener hands out the server ends of the connections dialed with Dial.
// It implements net.Listener.
type Listener struct {
	addr Addr

	mu     sync.Mutex
	queue  []*Conn
	wake   chan struct{} // closed and replaced on every change
	closed bool
	dials  int
}

var _ net.Listener = (*Listener)(nil)

// Listen returns a Listener with address addr (any string, for
// LocalAddr/RemoteAddr and error messages; Dial ignores its address
// argument).
func Listen(addr string) *Listener {
	return &Listener{addr: Addr(addr), wake: make(chan struct{})}
}

// notifyLocked wakes Accept. l.mu held.
func (l *Listener) notifyLocked() {
	close(l.wake)
	l.wake = make(chan struct{})
}

// Dial connects to l and returns the client end; the server end is queued
// for Accept. It never blocks. It fails with ctx's error when ctx is done,
// and with a connection-refused error (matching syscall.ECONNREFUSED) once
// l is closed. Its signature matches a dial function
// func(ctx, network, address) (net.Conn, error); network and address are
// ignored.
func (l *Listener) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, &net.OpError{Op: "dial", Net: Network, Addr: l.addr, Err: err}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, &net.OpError{Op: "dial", Net: Network, Addr: l.addr, Err: syscall.ECONNREFUSED}
	}
	l.dials++
	client, server := PipeAddrs(fmt.Sprintf("%s-client-%d", l.addr, l.dials), string(l.addr))
	l.queue = append(l.queue, server)
	l.notifyLocked()
	return client, nil
}

// Dials returns how many connections were dialed successfully so far.
func (l *Listener) Dials() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dials
}

// Accept returns the server end of the next connection dialed, waiting
// until there is one or l is closed (then an error matching net.ErrClosed).
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.AcceptContext(context.Background())
	if err != nil {
		return nil, err
	}
	return c, nil
}

// AcceptContext is Accept that also gives up when ctx is done.
func (l *Listener) AcceptContext(ctx context.Context) (*Conn, error) {
	for {
		l.mu.Lock()
		if len(l.queue) > 0 {
			c := l.queue[0]
			l.queue[0] = nil
			l.queue = l.queue[1:]
			l.mu.Unlock()
			return c, nil
		}
		if l.closed {
			l.mu.Unlock()
			return nil, &net.OpError{Op: "accept", Net: Network, Addr: l.addr, Err: net.ErrClosed}
		}
		wake := l.wake
		l.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// Close stops accepting: blocked and later Accepts fail, later Dials are
// refused, and connections dialed but not yet accepted are closed.
// Connections already accepted stay open. A second Close returns an error
// matching net.ErrClosed.
func (l *Listener) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return &net.OpError{Op: "close", Net: Network, Addr: l.addr, Err: net.ErrClosed}
	}
	l.closed = true
	queue := l.queue
	l.queue = nil
	l.notifyLocked()
	l.mu.Unlock()
	for _, c := range queue {
		_ = c.Close()
	}
	return nil
}

// Addr returns the listener's address.
func (l *Listener) Addr() net.Addr { return l.addr }

// Dialer returns a dial function (func(ctx, network, address) (net.Conn,
// error), the shape of a client's dialer option) that connects a new Pipe
// on each call: it returns one end and passes the other, the server end,
// to accept, on the dialing goroutine. accept must not block (start a
// goroutine to serve the connection); it may return an error to refuse the
// dial, which closes both ends and is returned by the dial.
func Dialer(addr string, accept func(server *Conn) error) func(ctx context.Context, network, address string) (net.Conn, error) {
	var mu sync.Mutex
	n := 0
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		if err := ctx.Err(); err != nil {
			return nil, &net.OpError{Op: "dial", Net: Network, Addr: Addr(addr), Err: err}
		}
		mu.Lock()
		n++
		id := n
		mu.Unlock()
		client, server := PipeAddrs(fmt.Sprintf("%s-client-%d", addr, id), addr)
		if err := accept(server); err != nil {
			_ = server.Close()
			_ = client.Close()
			return nil, &net.OpError{Op: "dial", Net: Network, Addr: Addr(addr), Err: err}
		}
		return client, nil
	}
}
