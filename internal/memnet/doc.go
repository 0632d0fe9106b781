// Package memnet is an in-memory, buffered, deadline-aware network for
// tests, in particular tests that run inside a testing/synctest bubble.
//
// It is intended for tests only and must not be used in production code.
//
// # Why not net.Pipe
//
// A goroutine blocked on a real socket is not "durably blocked" for
// testing/synctest, so a bubble whose goroutines wait on the network never
// advances its fake clock. net.Pipe avoids sockets but is synchronous: a
// Write waits until the peer has read everything, and concurrent writers
// queue on a mutex, which is not a durable block either. A client whose
// flusher writes while the fake server is itself busy writing then
// deadlocks, or stalls the fake clock.
//
// # What memnet provides
//
// [Pipe] returns the two ends of a full-duplex connection. Each end is a
// [*Conn] implementing net.Conn:
//
//   - Write appends to an unbounded buffer and returns at once; it never
//     waits for the reader. It fails with net.ErrClosed after the end was
//     closed, with an error matching os.ErrDeadlineExceeded (a net.Error
//     whose Timeout() is true) once the write deadline has passed, and
//     with io.ErrClosedPipe (wrapped, as a broken pipe) when the peer has
//     closed.
//   - Read returns buffered bytes, or blocks until bytes arrive, the peer
//     closes (io.EOF once the buffer is drained), this end is closed
//     (net.ErrClosed) or the read deadline passes (os.ErrDeadlineExceeded).
//     A deadline in the past, set while a Read is blocked, interrupts it at
//     once.
//   - Close closes this end: the peer reads what was already written and
//     then io.EOF; its later writes fail.
//
// Everything is built from sync.Mutex (held only for short critical
// sections, never while waiting), sync.Cond and time.AfterFunc timers, so a
// goroutine blocked in Read is durably blocked, and deadlines follow the fake
// clock when the Conn is used inside a synctest bubble. Create Pipes,
// Listeners and deadlines inside the bubble that uses them.
//
// # Dialing
//
// A [Listener] (a net.Listener) hands out the server ends of connections
// made with [Listener.Dial], whose signature matches a DialFunc
// (func(ctx, network, addr) (net.Conn, error)), so a client can be pointed
// at it with its dialer option. Dial never blocks: the connection is queued
// until Accept (or [Listener.AcceptContext]) takes it. After Close, Dial
// fails with a connection-refused error. [Dialer] is the callback variant:
// every dial hands the server end to a function.
//
// Typical use inside a bubble:
//
//	synctest.Test(t, func(t *testing.T) {
//		l := memnet.Listen("fake:4222")
//		go func() { // the server end: Accept, then speak the protocol
//			c, err := l.Accept()
//			use(c, err)
//		}()
//		nc, err := conn.Connect(t.Context(), "nats://fake:4222", conn.Dialer(l.Dial))
//		use(nc, err)
//		nc.Close()
//		l.Close()
//	})
package memnet
