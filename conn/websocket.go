package conn

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/flate"
)

// WebSocket transport (RFC 6455) with optional permessage-deflate (RFC 7692),
// client side only. It carries the NATS byte stream: the server's data
// frames are concatenated into one stream for Read and every Write becomes
// one masked binary frame.

var (
	// errWSProtocol wraps every framing violation by the server.
	errWSProtocol = errors.New("nats: websocket protocol error")
	// errWSHandshake wraps every failure of the HTTP upgrade.
	errWSHandshake = errors.New("nats: websocket handshake failed")
)

const (
	// wsDefaultMaxFrame is the limit used when wsOptions.MaxFrame is 0. The
	// server sends its whole pending output buffer as one frame, and that
	// buffer may reach the server's default max_pending of 64 MiB, so a
	// smaller default could reject a legitimate (if slow consumer) stream.
	// The limit costs no memory: payloads are streamed, never buffered.
	wsDefaultMaxFrame = 64 << 20
	// wsMaxResponseBytes bounds what the handshake reads from the server
	// before the end of the HTTP response headers.
	wsMaxResponseBytes = 64 << 10
	// wsReadBufSize is the size of the connection's read buffer.
	wsReadBufSize = 32 << 10
	// wsMaxHeader is the largest client frame header (2 + 8 length + 4 key).
	wsMaxHeader = 14
	// wsMaxControl is the largest control frame payload.
	wsMaxControl = 125
	// wsCompressMin is the smallest write worth compressing.
	wsCompressMin = 64
	// wsMaxMessage is the default and largest uncompressed size of one
	// compressed message that Write sends. nats-server rejects compressed
	// messages that inflate to more than max_payload (1 MiB by default).
	// 32 KiB is the deflate window, so larger messages would compress
	// hardly better.
	wsMaxMessage = 32 << 10
	// wsKeepWriteBuf is the largest write buffer kept between writes.
	wsKeepWriteBuf = 4 << 20
	// wsCloseWriteTimeout bounds the best-effort close frame sent by Close.
	wsCloseWriteTimeout = time.Second

	wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

	wsExtDeflate   = "permessage-deflate"
	wsExtOffer     = wsExtDeflate + "; server_no_context_takeover; client_no_context_takeover"
	wsSrvNoContext = "server_no_context_takeover"
	wsCliNoContext = "client_no_context_takeover"
	wsSrvMaxWindow = "server_max_window_bits"
)

// Frame header bits and opcodes.
const (
	wsFinBit  = 0x80
	wsRSV1Bit = 0x40
	wsRSV2Bit = 0x20
	wsRSV3Bit = 0x10
	wsMaskBit = 0x80

	wsOpContinuation = 0x0
	wsOpText         = 0x1
	wsOpBinary       = 0x2
	wsOpClose        = 0x8
	wsOpPing         = 0x9
	wsOpPong         = 0xA

	wsCloseNormal = 1000
)

// wsDeflateTail is appended to every compressed message before inflating:
// the 0x00 0x00 0xff 0xff the sender stripped (RFC 7692 7.2.2), then an
// empty final stored block so the decompressor reports io.EOF at the end of
// the message instead of waiting for more input.
var wsDeflateTail = [...]byte{0x00, 0x00, 0xff, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff}

// wsOptions configures a WebSocket client connection.
type wsOptions struct {
	// Compression offers permessage-deflate with server_no_context_takeover
	// and client_no_context_takeover. The server may still decline it.
	Compression bool
	// MaxFrame is the largest accepted frame payload and, for compressed
	// messages, the largest decompressed message. Larger frames or messages
	// fail Read with errWSProtocol. 0 (or negative) means 64 MiB. Payloads
	// are streamed into Read's buffer, so the limit is not an allocation.
	MaxFrame int
	// Header holds extra request headers (may be nil), for example Cookie or
	// Authorization. A Host entry replaces the URL's host; the headers the
	// upgrade itself uses (Upgrade, Connection, Sec-WebSocket-Key,
	// -Version, -Extensions, -Accept) and body framing headers are refused.
	Header http.Header
}

// wsHandshake performs the HTTP/1.1 upgrade on c (an already dialed TCP
// conn, already TLS-wrapped for wss://) for URL u (request path and query
// from u, default "/"), bounded by ctx and by c's deadline, and returns a
// net.Conn that carries the NATS byte stream.
//
// The returned conn's Read returns the concatenated payloads of data frames
// (binary or text, fragmented or not), answers PING with PONG, ignores PONG
// and returns io.EOF after a CLOSE frame, which it echoes. Its Write sends
// each call's bytes as one masked binary frame or, when permessage-deflate
// was negotiated, as messages of at most 32 KiB each compressed when that
// makes it smaller (see wsConn.Write). Read may run concurrently with Write
// and Close. Close sends a close frame (best effort) and closes c; the
// deadline methods delegate to c.
//
// On error c is left open for the caller to close.
func wsHandshake(ctx context.Context, c net.Conn, u *url.URL, o wsOptions) (net.Conn, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if u == nil || u.Host == "" {
		return nil, fmt.Errorf("%w: URL without host", errWSHandshake)
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, fmt.Errorf("%w: %w", errWSHandshake, err)
	}
	key := base64.StdEncoding.EncodeToString(raw[:])
	req, err := wsRequest(u, key, o)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", errWSHandshake, err)
	}
	// Canceling ctx interrupts the blocking I/O below.
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	lim := &wsLimitReader{r: c, n: wsMaxResponseBytes}
	br := bufio.NewReaderSize(lim, wsReadBufSize)
	compress, err := wsExchange(c, br, req, key, o.Compression)
	if !stop() {
		// ctx fired and moved c's deadline into the past.
		return nil, fmt.Errorf("%w: %w", errWSHandshake, ctx.Err())
	}
	if err != nil {
		if errors.Is(err, errWSHandshake) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", errWSHandshake, err)
	}
	lim.n = -1
	maxFrame := int64(o.MaxFrame)
	if maxFrame <= 0 {
		maxFrame = wsDefaultMaxFrame
	}
	return newWSConn(c, br, compress, maxFrame), nil
}

// wsExchange writes the upgrade request and validates the response. It
// reports whether permessage-deflate was negotiated. Bytes after the
// response headers stay in br.
func wsExchange(c net.Conn, br *bufio.Reader, req []byte, key string, offered bool) (bool, error) {
	if _, err := c.Write(req); err != nil {
		return false, err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		if errors.Is(err, errWSHandshake) {
			return false, err // headers too large
		}
		return false, fmt.Errorf("%w: reading response: %w", errWSHandshake, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		// Quote the start of the body, but only what already arrived.
		var body [256]byte
		n := 0
		if l := min(resp.ContentLength, int64(len(body)), int64(br.Buffered())); l > 0 {
			n, _ = io.ReadFull(resp.Body, body[:l])
		}
		msg := strings.TrimSpace(strings.ToValidUTF8(string(body[:n]), "?"))
		if msg != "" {
			msg = ": " + strconv.Quote(msg)
		}
		return false, fmt.Errorf("%w: unexpected HTTP status %q%s", errWSHandshake, resp.Status, msg)
	}
	if !wsHasToken(resp.Header, "Upgrade", "websocket") {
		return false, fmt.Errorf("%w: response Upgrade header is %q, want websocket", errWSHandshake, resp.Header.Get("Upgrade"))
	}
	if !wsHasToken(resp.Header, "Connection", "upgrade") {
		return false, fmt.Errorf("%w: response Connection header is %q, want upgrade", errWSHandshake, resp.Header.Get("Connection"))
	}
	if got := resp.Header.Values("Sec-WebSocket-Accept"); len(got) != 1 || got[0] != wsAcceptKey(key) {
		return false, fmt.Errorf("%w: bad Sec-WebSocket-Accept %q", errWSHandshake, strings.Join(got, ", "))
	}
	return wsParseExtensions(resp.Header.Values("Sec-WebSocket-Extensions"), offered)
}

// wsRequest builds the upgrade request.
func wsRequest(u *url.URL, key string, o wsOptions) ([]byte, error) {
	host := u.Host
	keys := make([]string, 0, len(o.Header))
	for k, vs := range o.Header {
		if !wsIsToken(k) {
			return nil, fmt.Errorf("%w: invalid header name %q", errWSHandshake, k)
		}
		switch textproto.CanonicalMIMEHeaderKey(k) {
		case "Host":
			if len(vs) != 1 || vs[0] == "" || strings.ContainsAny(vs[0], "\r\n\x00 ") {
				return nil, fmt.Errorf("%w: invalid Host header %q", errWSHandshake, vs)
			}
			host = vs[0]
			continue
		case "Upgrade", "Connection", "Sec-Websocket-Key", "Sec-Websocket-Version",
			"Sec-Websocket-Extensions", "Sec-Websocket-Accept", "Content-Length", "Transfer-Encoding":
			return nil, fmt.Errorf("%w: header %q may not be set", errWSHandshake, k)
		}
		for _, v := range vs {
			if strings.ContainsAny(v, "\r\n\x00") {
				return nil, fmt.Errorf("%w: invalid value for header %q", errWSHandshake, k)
			}
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)

	var b strings.Builder
	b.WriteString("GET ")
	b.WriteString(u.RequestURI())
	b.WriteString(" HTTP/1.1\r\nHost: ")
	b.WriteString(host)
	b.WriteString("\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ")
	b.WriteString(key)
	b.WriteString("\r\nSec-WebSocket-Version: 13\r\n")
	if o.Compression {
		b.WriteString("Sec-WebSocket-Extensions: " + wsExtOffer + "\r\n")
	}
	for _, k := range keys {
		for _, v := range o.Header[k] {
			b.WriteString(k)
			b.WriteString(": ")
			b.WriteString(v)
			b.WriteString("\r\n")
		}
	}
	b.WriteString("\r\n")
	return []byte(b.String()), nil
}

// wsAcceptKey is the Sec-WebSocket-Accept value expected for key.
func wsAcceptKey(key string) string {
	sum := sha1.Sum([]byte(key + wsGUID))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// wsHasToken reports whether a comma-separated header contains token,
// compared case-insensitively.
func wsHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// wsIsToken reports whether s is a valid HTTP header field name.
func wsIsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// wsParseExtensions validates the server's Sec-WebSocket-Extensions values
// against our offer and reports whether permessage-deflate is in use.
func wsParseExtensions(values []string, offered bool) (bool, error) {
	accepted := false
	for _, v := range values {
		for ext := range strings.SplitSeq(v, ",") {
			ext = strings.TrimSpace(ext)
			if ext == "" {
				continue
			}
			params := strings.Split(ext, ";")
			name := strings.TrimSpace(params[0])
			if !strings.EqualFold(name, wsExtDeflate) || !offered {
				return false, fmt.Errorf("%w: server accepted extension %q that was not offered", errWSHandshake, name)
			}
			if accepted {
				return false, fmt.Errorf("%w: permessage-deflate accepted twice", errWSHandshake)
			}
			accepted = true
			srvNoContext := false
			for _, p := range params[1:] {
				p = strings.TrimSpace(p)
				pname, pval, hasVal := strings.Cut(p, "=")
				pname = strings.TrimSpace(pname)
				pval = strings.Trim(strings.TrimSpace(pval), `"`)
				switch {
				case strings.EqualFold(pname, wsSrvNoContext) && !hasVal:
					srvNoContext = true
				case strings.EqualFold(pname, wsCliNoContext) && !hasVal:
				case strings.EqualFold(pname, wsSrvMaxWindow) && hasVal:
					// Any window up to 32 KiB can be inflated.
					if n, err := strconv.Atoi(pval); err != nil || n < 8 || n > 15 {
						return false, fmt.Errorf("%w: invalid %s %q", errWSHandshake, wsSrvMaxWindow, pval)
					}
				default:
					return false, fmt.Errorf("%w: unexpected permessage-deflate parameter %q", errWSHandshake, p)
				}
			}
			if !srvNoContext {
				// RFC 7692 7.1.1.1: accepting our offer requires echoing it.
				// Without it the server could keep its window across
				// messages, which this reader does not support.
				return false, fmt.Errorf("%w: permessage-deflate accepted without %s", errWSHandshake, wsSrvNoContext)
			}
		}
	}
	return accepted, nil
}

// wsLimitReader bounds the bytes read during the handshake; n < 0 lifts the
// limit.
type wsLimitReader struct {
	r io.Reader
	n int64
}

func (l *wsLimitReader) Read(p []byte) (int, error) {
	if l.n < 0 {
		return l.r.Read(p)
	}
	if l.n == 0 {
		return 0, fmt.Errorf("%w: response headers exceed %d bytes", errWSHandshake, wsMaxResponseBytes)
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// wsConn is an established WebSocket client connection.
type wsConn struct {
	c        net.Conn
	br       *bufio.Reader
	compress bool  // permessage-deflate negotiated
	maxFrame int64 // frame payload and decompressed message limit

	// Read side, owned by the reading goroutine.
	rerr  error // sticky read error
	rem   int64 // unread payload bytes of the current data frame
	fin   bool  // the current (or last) data frame ends its message
	comp  bool  // the current message is compressed and not yet inflated
	fr    io.ReadCloser
	src   wsInflateSource
	tail  int   // bytes of wsDeflateTail given to fr
	out   int64 // bytes inflated from the current message
	ctrl  [wsMaxControl]byte
	probe [1]byte
	sbyte [1]byte

	// Write side, guarded by wmu.
	wmu        sync.Mutex
	werr       error // sticky write error
	closeSent  bool
	wbuf       []byte // frames being built, reused
	fw         *flate.Writer
	fwOut      wsAppender
	rng        *mrand.ChaCha8
	maxMessage int // largest uncompressed size of a compressed message
	cbuf       [wsMaxHeader + wsMaxControl]byte

	closeOnce sync.Once
	closeErr  error
}

func newWSConn(c net.Conn, br *bufio.Reader, compress bool, maxFrame int64) *wsConn {
	var seed [32]byte
	_, _ = rand.Read(seed[:]) // never fails since Go 1.24
	w := &wsConn{
		c:          c,
		br:         br,
		compress:   compress,
		maxFrame:   maxFrame,
		fin:        true,
		rng:        mrand.NewChaCha8(seed),
		maxMessage: wsMaxMessage,
	}
	w.src.w = w
	return w
}

// protoErr records and returns a sticky protocol error.
func (w *wsConn) protoErr(format string, args ...any) error {
	w.rerr = fmt.Errorf("%w: "+format, append([]any{errWSProtocol}, args...)...)
	return w.rerr
}

// readFailed converts an error of the underlying reader; mid reports
// whether the stream is inside a frame or message, where EOF is unexpected.
// EOF is sticky; other errors (a deadline) leave the state consistent.
func (w *wsConn) readFailed(err error, mid bool) error {
	if err == io.EOF {
		if mid {
			err = io.ErrUnexpectedEOF
		}
		w.rerr = err
	}
	return err
}

// Read reads the payload of the server's data frames.
func (w *wsConn) Read(p []byte) (int, error) {
	if w.rerr != nil {
		return 0, w.rerr
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if w.comp {
			n, err := w.readInflate(p)
			if n > 0 || err != nil {
				return n, err
			}
			continue
		}
		if w.rem > 0 {
			n, err := w.br.Read(w.limit(p))
			w.rem -= int64(n)
			if n > 0 {
				return n, nil
			}
			if err != nil {
				return 0, w.readFailed(err, true)
			}
			continue // bufio gives up with io.ErrNoProgress
		}
		if err := w.nextDataFrame(); err != nil {
			return 0, err
		}
	}
}

// limit trims p to the rest of the current frame.
func (w *wsConn) limit(p []byte) []byte {
	if int64(len(p)) > w.rem {
		return p[:w.rem]
	}
	return p
}

// nextDataFrame reads frame headers, handling control frames on the way,
// up to the header of the next data frame, which must continue the current
// message if it is unfinished and start a new one otherwise. Nothing is
// consumed from a frame until the frame header (for control frames, the
// whole frame) is buffered, so a deadline leaves the state consistent.
func (w *wsConn) nextDataFrame() error {
	for {
		h, err := w.br.Peek(2)
		if err != nil {
			return w.readFailed(err, len(h) > 0 || !w.fin)
		}
		b0, b1 := h[0], h[1]
		hl, n := 2, int64(b1&0x7f)
		switch n {
		case 126:
			hl = 4
		case 127:
			hl = 10
		}
		if hl > 2 {
			if h, err = w.br.Peek(hl); err != nil {
				return w.readFailed(err, true)
			}
			if hl == 4 {
				n = int64(binary.BigEndian.Uint16(h[2:]))
			} else {
				u := binary.BigEndian.Uint64(h[2:])
				if u>>63 != 0 {
					return w.protoErr("64-bit frame length with the most significant bit set")
				}
				n = int64(u)
			}
		}
		if b1&wsMaskBit != 0 {
			return w.protoErr("masked frame from server")
		}
		if b0&(wsRSV2Bit|wsRSV3Bit) != 0 {
			return w.protoErr("reserved bits RSV2/RSV3 set")
		}
		op, fin, rsv1 := b0&0x0f, b0&wsFinBit != 0, b0&wsRSV1Bit != 0
		switch op {
		case wsOpClose, wsOpPing, wsOpPong:
			if !fin {
				return w.protoErr("fragmented control frame")
			}
			if n > wsMaxControl {
				return w.protoErr("control frame payload of %d bytes exceeds %d", n, wsMaxControl)
			}
			if rsv1 {
				return w.protoErr("compressed control frame")
			}
			if err := w.control(op, hl, int(n)); err != nil {
				return err
			}
			continue
		case wsOpText, wsOpBinary:
			if !w.fin {
				return w.protoErr("new message started before the previous one finished")
			}
			if rsv1 && !w.compress {
				return w.protoErr("compressed frame without negotiated permessage-deflate")
			}
		case wsOpContinuation:
			if w.fin {
				return w.protoErr("continuation frame outside a fragmented message")
			}
			if rsv1 {
				return w.protoErr("RSV1 set on a continuation frame")
			}
		default:
			return w.protoErr("reserved opcode %#x", op)
		}
		if n > w.maxFrame {
			return w.protoErr("frame payload of %d bytes exceeds limit of %d", n, w.maxFrame)
		}
		_, _ = w.br.Discard(hl)
		w.rem, w.fin = n, fin
		// An empty single-frame message is empty even if marked compressed
		// (a conforming sender would use the payload 0x00, RFC 7692 7.2.3.6).
		if op != wsOpContinuation && rsv1 && !(fin && n == 0) {
			if err := w.startInflate(); err != nil {
				return err
			}
		}
		return nil
	}
}

// control handles a control frame whose header is hl bytes long and whose
// payload is n bytes.
func (w *wsConn) control(op byte, hl, n int) error {
	f, err := w.br.Peek(hl + n)
	if err != nil {
		return w.readFailed(err, true)
	}
	payload := w.ctrl[:copy(w.ctrl[:], f[hl:])]
	_, _ = w.br.Discard(hl + n)
	switch op {
	case wsOpPing:
		return w.writeControl(wsOpPong, payload)
	case wsOpClose:
		if n == 1 {
			return w.protoErr("close frame with a 1-byte payload")
		}
		// Echo the status code (RFC 6455 5.5.1), best effort.
		if n > 2 {
			payload = payload[:2]
		}
		_ = w.writeControl(wsOpClose, payload)
		w.rerr = io.EOF
		return io.EOF
	}
	return nil // PONG
}

// startInflate prepares the decompressor for a new compressed message.
func (w *wsConn) startInflate() error {
	w.comp, w.tail, w.out = true, 0, 0
	if w.fr == nil {
		w.fr = flate.NewReader(&w.src)
		return nil
	}
	if err := w.fr.(flate.Resetter).Reset(&w.src, nil); err != nil {
		return w.protoErr("resetting decompressor: %v", err)
	}
	return nil
}

// readInflate reads inflated bytes of the current compressed message into
// p, never more than maxFrame per message in total.
func (w *wsConn) readInflate(p []byte) (int, error) {
	var n int
	var err error
	if allow := w.maxFrame - w.out; allow > 0 {
		if int64(len(p)) > allow {
			p = p[:allow]
		}
		n, err = w.fr.Read(p)
		w.out += int64(n)
	} else if n, err = w.fr.Read(w.probe[:]); n > 0 {
		return 0, w.protoErr("decompressed message exceeds limit of %d bytes", w.maxFrame)
	}
	switch {
	case err == nil:
		return n, nil
	case err == io.EOF:
		// The deflate stream ended; only empty frames may remain.
		for !w.fin || w.rem > 0 {
			if w.rem > 0 {
				return n, w.protoErr("data after the final deflate block")
			}
			if err := w.nextDataFrame(); err != nil {
				return n, err
			}
		}
		w.comp = false
		return n, nil
	case w.rerr != nil:
		// The source failed (and recorded why), or the server closed.
		if n > 0 {
			return n, nil
		}
		return 0, w.rerr
	default:
		return n, w.protoErr("invalid compressed data: %v", err)
	}
}

// wsInflateSource feeds the decompressor the payload of the current
// compressed message (across continuation frames) followed by
// wsDeflateTail. Its errors are sticky: the decompressor cannot resume.
type wsInflateSource struct{ w *wsConn }

func (s *wsInflateSource) Read(p []byte) (int, error) {
	w := s.w
	for len(p) > 0 {
		if w.rerr != nil {
			return 0, w.rerr
		}
		if w.rem > 0 {
			n, err := w.br.Read(w.limit(p))
			w.rem -= int64(n)
			if n > 0 {
				return n, nil
			}
			if err != nil {
				w.rerr = w.readFailed(err, true)
				return 0, w.rerr
			}
			continue
		}
		if !w.fin {
			if err := w.nextDataFrame(); err != nil {
				w.rerr = err
				return 0, err
			}
			continue
		}
		if w.tail < len(wsDeflateTail) {
			n := copy(p, wsDeflateTail[w.tail:])
			w.tail += n
			return n, nil
		}
		return 0, io.EOF
	}
	return 0, nil
}

func (s *wsInflateSource) ReadByte() (byte, error) {
	w := s.w
	if w.rem > 0 && w.rerr == nil {
		if b, err := w.br.ReadByte(); err == nil {
			w.rem--
			return b, nil
		}
	}
	if _, err := s.Read(w.sbyte[:]); err != nil {
		return 0, err
	}
	return w.sbyte[0], nil
}

// Write sends p as one masked binary frame. When permessage-deflate was
// negotiated, p is instead split into messages of at most maxMessage bytes,
// each one frame, compressed when that makes it smaller: nats-server
// rejects a compressed message that inflates to more than its
// max_payload, while it streams uncompressed frames of any size. All frames
// of a call go out in one write to the connection. A failed write is
// sticky: a partial frame cannot be resumed.
func (w *wsConn) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	if w.werr != nil {
		return 0, w.werr
	}
	if w.closeSent {
		return 0, fmt.Errorf("nats: websocket close frame already sent: %w", net.ErrClosed)
	}
	var b []byte
	start := 0
	if w.compress && len(p) > wsCompressMin {
		b = w.wbuf[:0]
		for rest := p; len(rest) > 0; {
			chunk := rest[:min(len(rest), w.maxMessage)]
			rest = rest[len(chunk):]
			b = w.appendMessage(b, chunk)
		}
	} else {
		// Leave room for the header, then place it right before p.
		b = append(append(w.wbuf[:0], make([]byte, wsMaxHeader)...), p...)
		hl := wsHeaderLen(len(p))
		start = wsMaxHeader - hl
		key := w.putHeader(b[start:], wsFinBit|wsOpBinary, len(p))
		wsMask(key, b[wsMaxHeader:])
	}
	if cap(b) <= wsKeepWriteBuf {
		w.wbuf = b[:0]
	} else {
		w.wbuf = nil
	}
	if _, err := w.c.Write(b[start:]); err != nil {
		w.werr = err
		return 0, err
	}
	return len(p), nil
}

// appendMessage appends p to b as one masked binary frame, compressed if
// that makes it smaller.
func (w *wsConn) appendMessage(b, p []byte) []byte {
	off := len(b)
	b = append(b, make([]byte, wsMaxHeader)...)
	b0 := byte(wsFinBit | wsOpBinary)
	compressed := false
	if len(p) > wsCompressMin {
		if b, compressed = w.deflate(b, p); compressed {
			b0 |= wsRSV1Bit
		}
	}
	if !compressed {
		b = append(b, p...)
	}
	// Move the payload up against the header.
	n := len(b) - off - wsMaxHeader
	hl := wsHeaderLen(n)
	copy(b[off+hl:], b[off+wsMaxHeader:])
	b = b[:off+hl+n]
	key := w.putHeader(b[off:], b0, n)
	wsMask(key, b[off+hl:])
	return b
}

// deflate appends the compressed form of p (without the trailing
// 0x00 0x00 0xff 0xff) to b and reports whether it is smaller than p;
// if not, it returns b unchanged (but maybe reallocated).
func (w *wsConn) deflate(b, p []byte) ([]byte, bool) {
	w.fwOut.b = b
	if w.fw == nil {
		fw, err := flate.NewWriter(&w.fwOut, flate.BestSpeed)
		if err != nil {
			return b, false
		}
		w.fw = fw
	} else {
		w.fw.Reset(&w.fwOut) // client_no_context_takeover
	}
	_, err := w.fw.Write(p)
	if err == nil {
		err = w.fw.Flush()
	}
	out := w.fwOut.b
	w.fwOut.b = nil
	n := len(out) - len(b)
	if err != nil || n < 4 || string(out[len(out)-4:]) != "\x00\x00\xff\xff" || n-4 >= len(p) {
		return out[:len(b)], false
	}
	return out[:len(out)-4], true
}

// wsHeaderLen is the length of a masked frame header for an n-byte
// payload.
func wsHeaderLen(n int) int {
	switch {
	case n > 0xffff:
		return 14
	case n > wsMaxControl:
		return 8
	default:
		return 6
	}
}

// putHeader writes the masked frame header for an n-byte payload to
// h[:wsHeaderLen(n)] with a fresh masking key, which it returns.
func (w *wsConn) putHeader(h []byte, b0 byte, n int) uint32 {
	h[0] = b0
	k := 2
	switch {
	case n > 0xffff:
		h[1] = wsMaskBit | 127
		binary.BigEndian.PutUint64(h[2:], uint64(n))
		k = 10
	case n > wsMaxControl:
		h[1] = wsMaskBit | 126
		binary.BigEndian.PutUint16(h[2:], uint16(n))
		k = 4
	default:
		h[1] = wsMaskBit | byte(n)
	}
	key := uint32(w.rng.Uint64())
	binary.LittleEndian.PutUint32(h[k:], key)
	return key
}

// setMaxMessage lowers the largest uncompressed size of a compressed
// message Write sends (default 32 KiB) to n, for servers whose max_payload
// is smaller; n <= 0 is ignored. Call it before Write runs concurrently.
func (w *wsConn) setMaxMessage(n int) {
	if n > 0 {
		w.wmu.Lock()
		w.maxMessage = min(n, wsMaxMessage)
		w.wmu.Unlock()
	}
}

// wsMask XORs b with the masking key whose bytes, in wire order, are the
// little-endian bytes of key.
func wsMask(key uint32, b []byte) {
	k := uint64(key) | uint64(key)<<32
	for len(b) >= 8 {
		binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)^k)
		b = b[8:]
	}
	for i := range b {
		b[i] ^= byte(k >> (8 * (i & 3)))
	}
}

// writeControl sends a control frame unless a close frame was already sent.
func (w *wsConn) writeControl(op byte, payload []byte) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	return w.writeControlLocked(op, payload)
}

func (w *wsConn) writeControlLocked(op byte, payload []byte) error {
	if w.werr != nil {
		return w.werr
	}
	if w.closeSent {
		return nil
	}
	if op == wsOpClose {
		w.closeSent = true
	}
	hl := wsHeaderLen(len(payload))
	b := append(w.cbuf[:hl], payload...)
	wsMask(w.putHeader(b, wsFinBit|op, len(payload)), b[hl:])
	if _, err := w.c.Write(b); err != nil {
		w.werr = err
		return err
	}
	return nil
}

// Close sends a normal-closure close frame, unless a write is in progress
// (which may be blocked) or one was sent already, and closes the
// connection.
func (w *wsConn) Close() error {
	w.closeOnce.Do(func() {
		if w.wmu.TryLock() {
			if w.werr == nil && !w.closeSent {
				_ = w.c.SetWriteDeadline(time.Now().Add(wsCloseWriteTimeout))
				var code [2]byte
				binary.BigEndian.PutUint16(code[:], wsCloseNormal)
				_ = w.writeControlLocked(wsOpClose, code[:])
			}
			w.wmu.Unlock()
		}
		w.closeErr = w.c.Close()
	})
	return w.closeErr
}

func (w *wsConn) LocalAddr() net.Addr                { return w.c.LocalAddr() }
func (w *wsConn) RemoteAddr() net.Addr               { return w.c.RemoteAddr() }
func (w *wsConn) SetDeadline(t time.Time) error      { return w.c.SetDeadline(t) }
func (w *wsConn) SetReadDeadline(t time.Time) error  { return w.c.SetReadDeadline(t) }
func (w *wsConn) SetWriteDeadline(t time.Time) error { return w.c.SetWriteDeadline(t) }

// wsAppender is an io.Writer appending to a byte slice.
type wsAppender struct{ b []byte }

func (a *wsAppender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}
