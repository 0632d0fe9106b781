//go:build linux

package conn

import (
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// Socket I/O without the runtime's system-call bookkeeping (Linux).
//
// net.TCPConn reads and writes through syscall.Syscall, which tells the
// scheduler that the goroutine may block: entersyscall/exitsyscall, and, when
// the whole process was idle, a wake-up of the runtime's monitor thread
// (sysmon), which then polls every 20 µs for a millisecond before it backs
// off again. The socket is non-blocking, so the call never blocks; but a
// client that waits for the network between bursts (a request loop, a
// consumer faster than its server) pays that monitor wake-up on every burst
// (docs/core.md, "Socket I/O on Linux", has what it costs).
//
// fastTCP makes the same non-blocking read and write with
// syscall.RawSyscall, inside syscall.RawConn's readiness loop: waiting for
// readiness, deadlines and Close behave exactly as for the TCPConn (the
// runtime's poller still does the waiting). Only TCP connections are
// wrapped; TLS and WebSocket run over the wrapper.
type fastTCP struct {
	*net.TCPConn
	raw syscall.RawConn

	// One read and one write at a time (the link's reader goroutine, the
	// connection's single writer; a TLS layer above serializes its own):
	// the mutexes only guard the scratch fields the callbacks use.
	rmu  sync.Mutex
	rp   []byte
	rn   int
	rerr syscall.Errno
	rfn  func(uintptr) bool

	wmu  sync.Mutex
	wp   []byte
	wn   int
	werr syscall.Errno
	wfn  func(uintptr) bool
}

// ioSync orders every write before the reads that follow it for the race
// detector, as the runtime does for its own socket calls (the kernel orders
// them; the detector cannot see that). Touched only in race-enabled builds:
// a process-wide counter written by every writer and read by every reader
// would move between cores on every system call.
var ioSync atomic.Uint64

// fastConn wraps c when it is a TCP connection, and returns c otherwise.
func fastConn(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	f := &fastTCP{TCPConn: tc, raw: raw}
	f.rfn, f.wfn = f.readOnce, f.writeAll
	return f
}

// isFastConn reports whether c is a connection fastConn wrapped.
func isFastConn(c net.Conn) bool {
	_, ok := c.(*fastTCP)
	return ok
}

// readOnce is the read callback: it reports false to wait for readiness.
func (f *fastTCP) readOnce(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(f.rp))), uintptr(len(f.rp)))
		switch e {
		case 0:
			f.rn = int(n)
			return true
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			f.rerr = e
			return true
		}
	}
}

// writeAll is the write callback: it writes what is left of wp, reporting
// false to wait for the socket to drain.
func (f *fastTCP) writeAll(fd uintptr) bool {
	for f.wn < len(f.wp) {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&f.wp[f.wn])), uintptr(len(f.wp)-f.wn))
		switch e {
		case 0:
			f.wn += int(n)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			f.werr = e
			return true
		}
	}
	return true
}

// Read reads like net.TCPConn.Read: io.EOF at the peer's end, the
// TCPConn's errors (deadline, closed) otherwise.
func (f *fastTCP) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	f.rmu.Lock()
	f.rp, f.rn, f.rerr = p, 0, 0
	err := f.raw.Read(f.rfn)
	n, e := f.rn, f.rerr
	f.rp = nil
	f.rmu.Unlock()
	if raceEnabled {
		ioSync.Load()
	}
	switch {
	case err != nil:
		return 0, f.opError("read", err)
	case e != 0:
		return 0, f.opError("read", os.NewSyscallError("read", e))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write writes all of p unless an error (deadline, closed, reset) comes
// first, like net.TCPConn.Write.
func (f *fastTCP) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if raceEnabled {
		ioSync.Add(1)
	}
	f.wmu.Lock()
	f.wp, f.wn, f.werr = p, 0, 0
	err := f.raw.Write(f.wfn)
	n, e := f.wn, f.werr
	f.wp = nil
	f.wmu.Unlock()
	switch {
	case err != nil:
		return n, f.opError("write", err)
	case e != 0:
		return n, f.opError("write", os.NewSyscallError("write", e))
	}
	return n, nil
}

func (f *fastTCP) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: f.LocalAddr(), Addr: f.RemoteAddr(), Err: err}
}
