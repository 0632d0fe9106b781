package conn

import (
	"errors"
	"os"
	"time"

	"github.com/natsio/natsio/proto"
)

// Who reads a link's socket: its read mode (link.mode), one atomic value.
//
// A link installed by Connect starts with no reader goroutine (readIdle):
// a request that is the only one in flight, and whose ctx cannot be
// canceled, reads its own reply from the socket (readHeld), and so does
// the pinger its PONG when nobody else reads. Whatever the holder reads
// besides is dispatched by handleOp, exactly as the reader goroutine
// would. The first thing that needs a reader running — a subscription
// other than the request inbox, a second request in flight, a request
// whose ctx may be canceled, a Flush — starts the reader goroutine
// (readBackground), which then reads until the link fails: the socket is
// never handed back. A link installed by a reconnect starts with it.
//
// The transitions, and who makes them:
//
//	readIdle -> readHeld         a lone requester or the pinger claims the socket (CAS)
//	readHeld -> readIdle         the holder is done (release)
//	readIdle -> readBackground   wantReader starts the reader goroutine
//	readHeld -> readWanted       wantReader, while a holder reads
//	readWanted -> readBackground the holder, between two ops or when done, starts the reader
//
// The holder looks at the mode before it dispatches each op: once the
// reader is wanted it dispatches nothing more itself, and the reader
// goroutine starts with the op the holder had parsed (never in the middle
// of a message). So a subscription's messages, whose SUB is written after
// wantReader, are never handled on a requester's goroutine, and only
// natsio's own code (the request inbox, PONGs, INFO, -ERR) runs there.
//
// A holder bounds its reads with a read deadline (the request timeout, or
// the ping interval for the pinger), set on the socket by the holder
// itself; the reader goroutine clears it before its first read. Nobody
// interrupts another goroutine's read: Close and a lost link close the
// socket, as for the reader goroutine.
//
// While nothing is in flight nothing reads the socket: the server's
// PINGs, and a server that went away, are seen at the pinger's next tick
// (PingInterval), when it reads its PONG.
type readMode = uint32

const (
	readIdle readMode = iota
	readHeld
	readWanted
	readBackground
)

// claim makes the calling goroutine the holder of l's socket, if nobody
// reads it.
func (l *link) claim() bool { return l.mode.CompareAndSwap(readIdle, readHeld) }

// wantReader makes sure the reader goroutine reads the connection's
// socket, now or as soon as the holder is between two ops.
func (nc *Conn) wantReader() {
	if nc.direct.Load() == nil {
		return
	}
	nc.mu.Lock()
	nc.wantReaderLocked()
	nc.mu.Unlock()
}

// wantReaderLocked is wantReader with nc.mu held.
func (nc *Conn) wantReaderLocked() {
	l := nc.direct.Load()
	if l == nil {
		return
	}
	for {
		switch l.mode.Load() {
		case readIdle:
			if l.mode.CompareAndSwap(readIdle, readBackground) {
				nc.startReaderLocked(l, nil)
				return
			}
		case readHeld:
			if l.mode.CompareAndSwap(readHeld, readWanted) {
				return
			}
		default:
			return
		}
	}
}

// startReaderLocked starts l's reader goroutine, first to dispatch op
// (nil for none), unless l is no longer the connection's link (it was
// lost: its reader would only fail). nc.mu is held, so a Close in
// progress has not reached its wait for the goroutines yet.
func (nc *Conn) startReaderLocked(l *link, op *proto.Op) {
	if nc.direct.Load() == l {
		nc.direct.Store(nil)
	}
	if nc.link != l || nc.state != stateConnected {
		return
	}
	nc.wg.Add(1)
	go nc.readLoop(l, l.gen, op)
}

// release ends the holder's turn: l goes back to readIdle, or, when the
// reader goroutine was wanted meanwhile, the holder starts it.
func (nc *Conn) release(l *link) {
	l.rd.wakeAll()
	if l.mode.CompareAndSwap(readHeld, readIdle) {
		return
	}
	nc.handOver(l, nil)
}

// handOver starts the reader goroutine the holder was asked for
// (readWanted), first to dispatch op, which the holder parsed but did not
// dispatch.
func (nc *Conn) handOver(l *link, op *proto.Op) {
	l.mode.Store(readBackground)
	nc.mu.Lock()
	nc.startReaderLocked(l, op)
	nc.mu.Unlock()
}

// readHeld reads l's socket as its holder and dispatches what it reads
// (handleOp), until w has a message (its reply, or a sentinel) — or, for
// the pinger (w nil), until pongs PONGs were read —, until dl passes,
// until the reader goroutine is wanted, or until the link fails. When it
// returns, the caller no longer holds the socket.
func (nc *Conn) readHeld(l *link, w *waiter, pongs int, dl time.Time) {
	r := &l.rd
	if r.rdl.IsZero() || r.rdl.After(dl) {
		r.setReadDeadline(dl)
	}
	for {
		op, err := r.p.Next()
		if err != nil {
			nc.readFailed(r, l.gen, &ProtocolError{Err: err})
			return
		}
		if l.mode.Load() != readHeld {
			nc.handOver(l, op)
			return
		}
		if op == nil {
			if err := r.fill(); err != nil {
				if !errors.Is(err, os.ErrDeadlineExceeded) {
					nc.readFailed(r, l.gen, err)
					return
				}
				// The socket's deadline may be an earlier holder's.
				if time.Now().Before(dl) {
					r.setReadDeadline(dl)
					continue
				}
				nc.release(l)
				return
			}
			continue
		}
		if nc.handleOp(r, l.gen, op) {
			return
		}
		if w != nil {
			if len(w.ch) > 0 {
				nc.release(l)
				return
			}
		} else if op.Kind == proto.KindPong {
			if pongs--; pongs <= 0 {
				nc.release(l)
				return
			}
		}
	}
}

// setReadDeadline sets the socket's read deadline, remembered in r.rdl.
func (r *reader) setReadDeadline(t time.Time) {
	r.rdl = t
	_ = r.l.c.SetReadDeadline(t)
}
