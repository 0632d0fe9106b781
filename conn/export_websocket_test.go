package conn

import (
	"bufio"
	"net"
)

// The WebSocket layer, for the tests that play the server's side of the
// upgrade and of the framing (through the fake-server harness of package
// conn_test) or drive the layer over a scripted net.Conn.

// WSOptions configures WSHandshake.
type WSOptions = wsOptions

var (
	// WSHandshake upgrades c to a WebSocket connection to u.
	WSHandshake = wsHandshake
	// WSAcceptKey is the Sec-WebSocket-Accept value for a key.
	WSAcceptKey = wsAcceptKey
	// WSMask masks b in place with key.
	WSMask = wsMask
	// ErrWSProtocol wraps every framing violation by the server.
	ErrWSProtocol = errWSProtocol
	// ErrWSHandshake wraps every failure of the HTTP upgrade.
	ErrWSHandshake = errWSHandshake
)

// WebSocket opcodes and limits.
const (
	WSOpClose         = wsOpClose
	WSOpPong          = wsOpPong
	WSMaxMessage      = wsMaxMessage
	WSDefaultMaxFrame = wsDefaultMaxFrame
)

// NewWSConn is the client end of a WebSocket connection already upgraded
// over c.
func NewWSConn(c net.Conn, compress bool, maxFrame int64) net.Conn {
	return newWSConn(c, bufio.NewReaderSize(c, wsReadBufSize), compress, maxFrame)
}

// WSCompressed reports whether the WebSocket connection c (from
// WSHandshake) negotiated permessage-deflate.
func WSCompressed(c net.Conn) bool { return c.(*wsConn).compress }
