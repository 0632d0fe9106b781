package conn

import (
	"net"
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

// link is one transport connection: the socket, and its reader. One
// goroutine reads a link's socket and dispatches what it reads: the
// handshake's, until the link is installed, then the link's reader
// goroutine (readLoop) until the link fails. Nobody else reads it.
type link struct {
	// c is the socket. Set before the reader goroutine starts (the
	// handshake may replace it by its TLS client), then fixed. The reader
	// goroutine alone reads it, the writer of the moment (nc.writing)
	// alone writes it; anyone may close it.
	c net.Conn
	// base is the TCP connection under TLS and WebSocket (fastio). Fixed.
	base net.Conn

	// rd is the state of the goroutine that reads the socket (reader.go):
	// owned by the handshake, then by the reader goroutine.
	rd reader

	// wdl is the write deadline last set (armWrite). Owned by the writer
	// of the moment (nc.writing).
	wdl time.Time
}

func newLink(c net.Conn) *link {
	l := &link{c: c}
	l.rd = reader{l: l, buf: make([]byte, minReadBuf)}
	l.rd.p.Alloc = l.rd.cutBody
	return l
}

// shut closes the link's socket: its reader goroutine's read fails.
func (l *link) shut() {
	_ = l.c.Close()
}

// setMaxPayload bounds inbound messages by the server's max_payload.
func (r *reader) setMaxPayload(n int64) {
	r.p.Limits.MaxPayload = max(int(n)*inboundPerPayload, minInboundLimit) + payloadSlack
}
