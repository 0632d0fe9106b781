package conn

import (
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// The parser's limit on one inbound message. A server delivers more than
// its max_payload in two cases: headers it adds to stored messages
// (JetStream metadata, republish), and replies it builds itself (stream
// info with a subjects map, list pages, base64 message gets), which are
// bounded by its pending-bytes limit rather than max_payload. So the limit
// is four times max_payload, at least 8 MiB, plus slack — still a bound:
// a size beyond it is a protocol error before anything is allocated.
const (
	payloadSlack      = 64 << 10
	minInboundLimit   = 8 << 20
	inboundPerPayload = 4
)

// inboundLineSlack is how much longer than MaxControlLine a line from the
// server may be: a delivered message adds its subscription ID to the
// subject and reply the server accepted, and the server may compose a
// reply subject of its own (a JetStream acknowledgement subject names the
// stream, the consumer and seven numbers).
const inboundLineSlack = 4096

// link is one transport connection: the socket, what the goroutines that
// use it share, and its reader (the state of whoever holds the reader
// role, reached through acquire).
type link struct {
	// c is the socket. Set before the reader goroutine starts (the
	// handshake may replace it by its TLS client), then fixed. The role
	// holder alone reads it, the writer of the moment (nc.writing) alone
	// writes it; anyone may close it or move its read deadline (under
	// imu).
	c net.Conn
	// base is the TCP connection under TLS and WebSocket (fastio). Fixed.
	base net.Conn
	// inlineOK: requesters and consumers may read this link themselves
	// (TCP, TLS). Fixed.
	inlineOK bool
	// quiet reports whether the connection has no subscription but the
	// request inbox: the parked reader goroutine may then wait longer.
	// Fixed.
	quiet func() bool

	// role is who reads the socket (roleState, role.go). Atomic; its
	// transitions are roleStep's.
	role atomic.Int32
	// rd is the role holder's state. Reach it only through acquire, or as
	// the reader goroutine while it holds the role.
	rd reader

	// wdl is the write deadline last set (armWrite). Owned by the writer
	// of the moment (nc.writing).
	wdl time.Time

	// handback asks the parked reader goroutine to take the role back.
	// Anyone sends (never blocking); the reader goroutine receives.
	handback chan struct{}
	// parkTimer ends the reader goroutine's park; owned by the reader
	// goroutine (stopped until its first park).
	parkTimer *time.Timer
	// lastInline is when the last inline read ended (Unix ns). Atomic.
	lastInline atomic.Int64

	// imu guards inlineSub and rdl: an inline consumer's read deadline is
	// set and cleared by the role holder and moved to the past by other
	// goroutines (interrupt) under it.
	imu sync.Mutex
	// inlineSub is the subscription whose consumer reads inline now (nil:
	// none). Under imu.
	inlineSub *Subscription
	// rdl is the read deadline set on the socket (zero: none). Under imu.
	// Inline readers leave theirs for the next one (readDeadlineLocked).
	rdl time.Time

	// lost is closed when the link is shut (shut; lostOnce).
	lost     chan struct{}
	lostOnce sync.Once
}

func newLink(c net.Conn) *link {
	l := &link{c: c, handback: make(chan struct{}, 1), lost: make(chan struct{})}
	l.rd = reader{l: l, buf: make([]byte, minReadBuf)}
	l.rd.p.Alloc = l.rd.alloc.bytes
	l.parkTimer = time.NewTimer(parkDelay)
	l.parkTimer.Stop()
	l.inlineOK = inlineCapable(c)
	l.role.Store(roleGoroutine) // the handshake, then the reader goroutine
	return l
}

// inlineCapable reports whether requesters may read c inline: a read
// deadline that expires must leave it usable. It does for TCP and TLS (for
// TLS a timeout is a temporary error, not a broken record layer). A
// variable so that tests over in-memory pipes can allow theirs.
var inlineCapable = func(c net.Conn) bool {
	switch c.(type) {
	case *net.TCPConn, *tls.Conn:
		return true
	}
	return isFastConn(c)
}

// shut closes the link's socket and tells a parked reader goroutine.
func (l *link) shut() {
	l.lostOnce.Do(func() { close(l.lost) })
	_ = l.c.Close()
}

// setMaxPayload bounds inbound messages by the server's max_payload.
func (r *reader) setMaxPayload(n int64) {
	r.p.Limits.MaxPayload = max(int(n)*inboundPerPayload, minInboundLimit) + payloadSlack
}
