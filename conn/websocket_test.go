package conn

import (
	"bufio"
	"bytes"
	stdflate "compress/flate"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// ---- helpers ----

// wsStartServer starts an in-process nats-server with a websocket listener
// and returns the ws:// URL.
func wsStartServer(t *testing.T, compression bool) *url.URL {
	t.Helper()
	opts := &natsserver.Options{
		Host:   "127.0.0.1",
		Port:   -1,
		NoLog:  true,
		NoSigs: true,
		Websocket: natsserver.WebsocketOpts{
			Host:        "127.0.0.1",
			Port:        -1,
			NoTLS:       true,
			Compression: compression,
		},
	}
	s, err := natsserver.NewServer(opts)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	go s.Start()
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	u, err := url.Parse(s.WebsocketURL())
	if err != nil {
		t.Fatalf("parse %q: %v", s.WebsocketURL(), err)
	}
	return u
}

// wsCountConn counts the raw bytes read and written.
type wsCountConn struct {
	net.Conn
	r, w atomic.Int64
}

func (c *wsCountConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.r.Add(int64(n))
	return n, err
}

func (c *wsCountConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.w.Add(int64(n))
	return n, err
}

// wsDialRaw dials u's host and runs the handshake. On error the raw conn is
// closed.
func wsDialRaw(t *testing.T, ctx context.Context, u *url.URL, o wsOptions) (net.Conn, *wsCountConn, error) {
	t.Helper()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	cc := &wsCountConn{Conn: c}
	wc, err := wsHandshake(ctx, cc, u, o)
	if err != nil {
		c.Close()
		return nil, cc, err
	}
	return wc, cc, nil
}

// wsDial is wsDialRaw that must succeed; the conn is closed at cleanup and
// has a generous deadline so a broken test cannot hang.
func wsDial(t *testing.T, u *url.URL, o wsOptions) (*wsConn, *wsCountConn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wc, cc, err := wsDialRaw(t, ctx, u, o)
	if err != nil {
		t.Fatalf("wsHandshake: %v", err)
	}
	t.Cleanup(func() { wc.Close() })
	_ = wc.SetDeadline(time.Now().Add(30 * time.Second))
	return wc.(*wsConn), cc
}

// wsFakeServer accepts one connection on a random port, reads the upgrade
// request and hands over to h. It returns the ws:// URL and a function
// waiting for h's result (also checked at cleanup).
func wsFakeServer(t *testing.T, h func(c net.Conn, br *bufio.Reader, req *http.Request) error) (*url.URL, func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		ln.Close()
		if err != nil {
			done <- nil // listener closed: no client came
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			done <- fmt.Errorf("reading request: %w", err)
			return
		}
		done <- h(c, br, req)
	}()
	var once sync.Once
	var result error
	wait := func() error {
		once.Do(func() { result = <-done })
		return result
	}
	t.Cleanup(func() {
		ln.Close()
		if err := wait(); err != nil {
			t.Errorf("fake server: %v", err)
		}
	})
	return &url.URL{Scheme: "ws", Host: ln.Addr().String()}, wait
}

// wsTestPMC is the extension response accepting our offer.
const wsTestPMC = "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover\r\n"

// wsAccept writes a 101 response with extra header lines, followed by
// after in the same write.
func wsAccept(c net.Conn, req *http.Request, extra string, after []byte) error {
	resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
		wsAcceptKey(req.Header.Get("Sec-WebSocket-Key")) + "\r\n" + extra + "\r\n"
	_, err := c.Write(append([]byte(resp), after...))
	return err
}

// wsDrain discards what the client sends until it closes.
func wsDrain(br *bufio.Reader) error {
	_, err := io.Copy(io.Discard, br)
	if errors.Is(err, syscall.ECONNRESET) {
		return nil // the client closed with unread data
	}
	return err
}

// wsFrame builds an unmasked server frame with the minimal length encoding.
func wsFrame(b0 byte, payload []byte) []byte {
	n := len(payload)
	var f []byte
	switch {
	case n <= 125:
		f = []byte{b0, byte(n)}
	case n <= 0xffff:
		f = []byte{b0, 126, byte(n >> 8), byte(n)}
	default:
		f = []byte{b0, 127, 0, 0, 0, 0, 0, 0, 0, 0}
		binary.BigEndian.PutUint64(f[2:], uint64(n))
	}
	return append(f, payload...)
}

// wsTestDeflate compresses p with the standard library (an implementation
// independent of the one under test). Without final the result is
// sync-flushed with the 0x00 0x00 0xff 0xff tail removed (RFC 7692);
// with final it ends with a BFINAL block.
func wsTestDeflate(t testing.TB, p []byte, final bool) []byte {
	t.Helper()
	var b bytes.Buffer
	fw, err := stdflate.NewWriter(&b, stdflate.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write(p); err != nil {
		t.Fatal(err)
	}
	if final {
		if err := fw.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	if err := fw.Flush(); err != nil {
		t.Fatal(err)
	}
	out := b.Bytes()
	if !bytes.HasSuffix(out, []byte{0, 0, 0xff, 0xff}) {
		t.Fatal("flushed deflate output lacks the sync marker")
	}
	return out[:len(out)-4]
}

// wsTestInflate decompresses a client message with the standard library.
func wsTestInflate(p []byte) ([]byte, error) {
	r := stdflate.NewReader(io.MultiReader(bytes.NewReader(p),
		bytes.NewReader([]byte{0, 0, 0xff, 0xff, 1, 0, 0, 0xff, 0xff})))
	return io.ReadAll(r)
}

// wsClientFrame is a frame the client sent, unmasked.
type wsClientFrame struct {
	b0      byte
	key     [4]byte
	payload []byte
}

// wsReadClientFrame reads one client frame and fails unless it is masked.
func wsReadClientFrame(br *bufio.Reader) (wsClientFrame, error) {
	var f wsClientFrame
	var h [2]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return f, err
	}
	f.b0 = h[0]
	if h[1]&0x80 == 0 {
		return f, errors.New("client frame not masked")
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var e [2]byte
		if _, err := io.ReadFull(br, e[:]); err != nil {
			return f, err
		}
		n = uint64(binary.BigEndian.Uint16(e[:]))
		if n <= 125 {
			return f, fmt.Errorf("non-minimal 16-bit length %d", n)
		}
	case 127:
		var e [8]byte
		if _, err := io.ReadFull(br, e[:]); err != nil {
			return f, err
		}
		n = binary.BigEndian.Uint64(e[:])
		if n <= 0xffff {
			return f, fmt.Errorf("non-minimal 64-bit length %d", n)
		}
	}
	if n > 16<<20 {
		return f, fmt.Errorf("client frame of %d bytes", n)
	}
	if _, err := io.ReadFull(br, f.key[:]); err != nil {
		return f, err
	}
	f.payload = make([]byte, n)
	if _, err := io.ReadFull(br, f.payload); err != nil {
		return f, err
	}
	for i := range f.payload {
		f.payload[i] ^= f.key[i%4]
	}
	return f, nil
}

// wsExpectControl reads a client frame and checks it is the given control
// frame.
func wsExpectControl(br *bufio.Reader, op byte, payload []byte) error {
	f, err := wsReadClientFrame(br)
	if err != nil {
		return err
	}
	if f.b0 != 0x80|op || !bytes.Equal(f.payload, payload) {
		return fmt.Errorf("got frame b0=%#x payload=%q, want b0=%#x payload=%q", f.b0, f.payload, 0x80|op, payload)
	}
	return nil
}

func wsReadLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("reading line: %v (got %q)", err, line)
	}
	return strings.TrimRight(line, "\r\n")
}

// wsReadOp is wsReadLine skipping the asynchronous INFO updates the server
// sends after CONNECT.
func wsReadOp(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	for {
		// The server also pings a new client on its own (its first ping
		// comes about 2 s after CONNECT): the tests send their own PINGs
		// and wait for PONG, so a server PING is skipped like an INFO.
		if line := wsReadLine(t, r); !strings.HasPrefix(line, "INFO ") && line != "PING" {
			return line
		}
	}
}

func wsCompressiblePayload(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %06d: the quick brown fox jumps over the lazy dog\n", i)
	}
	return b.Bytes()[:n]
}

func wsRandomPayload(n int, seed uint64) []byte {
	r := mrand.New(mrand.NewPCG(seed, seed))
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	return p
}

// ---- real server ----

func TestWSRealServer(t *testing.T) {
	for _, comp := range []bool{false, true} {
		t.Run(fmt.Sprintf("compression=%v", comp), func(t *testing.T) {
			u := wsStartServer(t, comp)
			wc, cc := wsDial(t, u, wsOptions{Compression: comp})
			if wc.compress != comp {
				t.Fatalf("compression negotiated = %v, want %v", wc.compress, comp)
			}
			r := bufio.NewReader(wc)
			if line := wsReadLine(t, r); !strings.HasPrefix(line, "INFO {") {
				t.Fatalf("first line %q, want INFO", line)
			}
			if _, err := wc.Write([]byte("CONNECT {\"verbose\":false,\"pedantic\":false,\"protocol\":1}\r\nPING\r\n")); err != nil {
				t.Fatalf("write: %v", err)
			}
			if line := wsReadOp(t, r); line != "PONG" {
				t.Fatalf("got %q, want PONG", line)
			}
			if _, err := wc.Write([]byte("SUB foo 1\r\n")); err != nil {
				t.Fatalf("write: %v", err)
			}
			for _, tc := range []struct {
				name         string
				payload      []byte
				compressible bool
			}{
				{"compressible", wsCompressiblePayload(100 << 10), true},
				{"random", wsRandomPayload(100<<10, 1), false},
			} {
				r0, w0 := cc.r.Load(), cc.w.Load()
				msg := fmt.Appendf(nil, "PUB foo %d\r\n", len(tc.payload))
				msg = append(append(msg, tc.payload...), "\r\n"...)
				if n, err := wc.Write(msg); err != nil || n != len(msg) {
					t.Fatalf("%s: write = %d, %v", tc.name, n, err)
				}
				want := fmt.Sprintf("MSG foo 1 %d", len(tc.payload))
				if line := wsReadOp(t, r); line != want {
					t.Fatalf("%s: got %q, want %q", tc.name, line, want)
				}
				got := make([]byte, len(tc.payload)+2)
				if _, err := io.ReadFull(r, got); err != nil {
					t.Fatalf("%s: reading payload: %v", tc.name, err)
				}
				if !bytes.Equal(got[:len(tc.payload)], tc.payload) || string(got[len(tc.payload):]) != "\r\n" {
					t.Fatalf("%s: payload corrupted", tc.name)
				}
				rd, wr := cc.r.Load()-r0, cc.w.Load()-w0
				t.Logf("%s: wire bytes read %d, written %d for %d-byte payload", tc.name, rd, wr, len(tc.payload))
				switch {
				case comp && tc.compressible:
					if rd > int64(len(tc.payload))/4 || wr > int64(len(tc.payload))/4 {
						t.Fatalf("%s: compression not effective: read %d, wrote %d", tc.name, rd, wr)
					}
				default:
					if rd < int64(len(tc.payload)) || wr < int64(len(tc.payload)) {
						t.Fatalf("%s: fewer wire bytes than payload: read %d, wrote %d", tc.name, rd, wr)
					}
				}
			}
			// One write far above max_payload (1 MiB) with two large
			// messages: compressed writes must be split into messages the
			// server accepts.
			big := [][]byte{wsCompressiblePayload(900 << 10), wsRandomPayload(900<<10, 9)}
			var batch []byte
			for _, p := range big {
				batch = fmt.Appendf(batch, "PUB foo %d\r\n", len(p))
				batch = append(append(batch, p...), "\r\n"...)
			}
			if _, err := wc.Write(batch); err != nil {
				t.Fatalf("batched write: %v", err)
			}
			for i, p := range big {
				if line := wsReadOp(t, r); line != fmt.Sprintf("MSG foo 1 %d", len(p)) {
					t.Fatalf("batched %d: got %q", i, line)
				}
				got := make([]byte, len(p)+2)
				if _, err := io.ReadFull(r, got); err != nil || !bytes.Equal(got[:len(p)], p) {
					t.Fatalf("batched %d: payload corrupted (%v)", i, err)
				}
			}
			// Many small writes and a final PING still line up.
			for i := range 100 {
				if _, err := fmt.Fprintf(wc, "PUB foo 3\r\n%03d\r\n", i); err != nil {
					t.Fatalf("write: %v", err)
				}
			}
			if _, err := wc.Write([]byte("PING\r\n")); err != nil {
				t.Fatalf("write: %v", err)
			}
			for i := range 100 {
				if line := wsReadOp(t, r); line != "MSG foo 1 3" {
					t.Fatalf("msg %d: got %q", i, line)
				}
				if line := wsReadLine(t, r); line != fmt.Sprintf("%03d", i) {
					t.Fatalf("msg %d: payload %q", i, line)
				}
			}
			if line := wsReadOp(t, r); line != "PONG" {
				t.Fatalf("got %q, want PONG", line)
			}
			if err := wc.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
		})
	}
}

// The flusher writes while the reader reads (and answers pings).
func TestWSRealServerConcurrent(t *testing.T) {
	u := wsStartServer(t, true)
	wc, _ := wsDial(t, u, wsOptions{Compression: true})
	r := bufio.NewReader(wc)
	wsReadLine(t, r) // INFO
	if _, err := wc.Write([]byte("CONNECT {\"verbose\":false,\"pedantic\":false,\"protocol\":1}\r\nSUB foo 1\r\n")); err != nil {
		t.Fatal(err)
	}
	const n = 500
	payload := wsCompressiblePayload(4000)
	errc := make(chan error, 1)
	go func() {
		for range n {
			msg := fmt.Appendf(nil, "PUB foo %d\r\n%s\r\n", len(payload), payload)
			if _, err := wc.Write(msg); err != nil {
				errc <- err
				return
			}
		}
		_, err := wc.Write([]byte("PING\r\n"))
		errc <- err
	}()
	for i := range n {
		if line := wsReadOp(t, r); line != fmt.Sprintf("MSG foo 1 %d", len(payload)) {
			t.Fatalf("msg %d: %q", i, line)
		}
		got := make([]byte, len(payload)+2)
		if _, err := io.ReadFull(r, got); err != nil || !bytes.Equal(got[:len(payload)], payload) {
			t.Fatalf("msg %d: payload corrupted (%v)", i, err)
		}
	}
	if line := wsReadOp(t, r); line != "PONG" {
		t.Fatalf("got %q, want PONG", line)
	}
	if err := <-errc; err != nil {
		t.Fatalf("writer: %v", err)
	}
}

// ---- handshake ----

func TestWSAcceptKeyRFCExample(t *testing.T) {
	// RFC 6455 section 1.3.
	if got := wsAcceptKey("dGhlIHNhbXBsZSBub25jZQ=="); got != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Fatalf("wsAcceptKey = %q", got)
	}
}

func TestWSHandshakeRequest(t *testing.T) {
	for _, comp := range []bool{false, true} {
		t.Run(fmt.Sprintf("compression=%v", comp), func(t *testing.T) {
			u, wait := wsFakeServer(t, func(c net.Conn, br *bufio.Reader, req *http.Request) error {
				var problems []string
				check := func(what, got, want string) {
					if got != want {
						problems = append(problems, fmt.Sprintf("%s = %q, want %q", what, got, want))
					}
				}
				check("method", req.Method, "GET")
				check("request URI", req.RequestURI, "/nats/ws?x=1")
				check("proto", req.Proto, "HTTP/1.1")
				check("Host", req.Host, "example.test:1234")
				check("Upgrade", req.Header.Get("Upgrade"), "websocket")
				check("Connection", req.Header.Get("Connection"), "Upgrade")
				check("Sec-WebSocket-Version", req.Header.Get("Sec-WebSocket-Version"), "13")
				check("Cookie", req.Header.Get("Cookie"), "jwt=abc")
				check("X-Test", strings.Join(req.Header.Values("X-Test"), ","), "a,b")
				wantExt := ""
				if comp {
					wantExt = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
				}
				check("Sec-WebSocket-Extensions", req.Header.Get("Sec-WebSocket-Extensions"), wantExt)
				key, err := base64.StdEncoding.DecodeString(req.Header.Get("Sec-WebSocket-Key"))
				if err != nil || len(key) != 16 {
					problems = append(problems, fmt.Sprintf("bad key %q", req.Header.Get("Sec-WebSocket-Key")))
				}
				if br.Buffered() != 0 {
					problems = append(problems, "client sent data before the handshake completed")
				}
				ext := ""
				if comp {
					ext = wsTestPMC
				}
				if err := wsAccept(c, req, ext, nil); err != nil {
					return err
				}
				if err := wsDrain(br); err != nil {
					return err
				}
				if problems != nil {
					return errors.New(strings.Join(problems, "; "))
				}
				return nil
			})
			u.Path, u.RawQuery = "/nats/ws", "x=1"
			h := http.Header{}
			h.Set("Host", "example.test:1234")
			h.Set("Cookie", "jwt=abc")
			h.Add("X-Test", "a")
			h.Add("X-Test", "b")
			wc, _ := wsDial(t, u, wsOptions{Compression: comp, Header: h})
			if wc.compress != comp {
				t.Fatalf("compress = %v, want %v", wc.compress, comp)
			}
			wc.Close()
			if err := wait(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestWSHandshakeDefaultPath(t *testing.T) {
	u, _ := wsFakeServer(t, func(c net.Conn, br *bufio.Reader, req *http.Request) error {
		if req.RequestURI != "/" {
			return fmt.Errorf("request URI %q, want /", req.RequestURI)
		}
		if req.Host != c.LocalAddr().String() {
			return fmt.Errorf("Host %q, want %q", req.Host, c.LocalAddr())
		}
		if err := wsAccept(c, req, "", nil); err != nil {
			return err
		}
		return wsDrain(br)
	})
	wsDial(t, u, wsOptions{})
}

// Header tokens are matched case-insensitively and within lists.
func TestWSHandshakeLenientHeaders(t *testing.T) {
	u, _ := wsFakeServer(t, func(c net.Conn, br *bufio.Reader, req *http.Request) error {
		resp := "HTTP/1.1 101 Switching Protocols\r\nupgrade: WebSocket\r\nCONNECTION: keep-alive, UPGRADE\r\nsec-websocket-accept: " +
			wsAcceptKey(req.Header.Get("Sec-WebSocket-Key")) + "\r\n" +
			"Sec-WebSocket-Extensions: PerMessage-Deflate;Server_No_Context_Takeover; server_max_window_bits=10\r\n\r\n"
		if _, err := c.Write([]byte(resp)); err != nil {
			return err
		}
		return wsDrain(br)
	})
	wc, _ := wsDial(t, u, wsOptions{Compression: true})
	if !wc.compress {
		t.Fatal("compression not negotiated")
	}
}

func TestWSHandshakeErrors(t *testing.T) {
	accept := func(req *http.Request) string { return wsAcceptKey(req.Header.Get("Sec-WebSocket-Key")) }
	cases := []struct {
		name string
		comp bool
		resp func(req *http.Request) string
		want string
	}{
		{"bad accept", false, func(*http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"
		}, "Sec-WebSocket-Accept"},
		{"missing accept", false, func(*http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
		}, "Sec-WebSocket-Accept"},
		{"non-101", false, func(*http.Request) string {
			return "HTTP/1.1 403 Forbidden\r\nContent-Length: 13\r\n\r\norigin denied"
		}, `"403 Forbidden": "origin denied"`},
		{"200 no body", false, func(*http.Request) string {
			return "HTTP/1.1 200 OK\r\n\r\n"
		}, "200 OK"},
		{"missing upgrade", false, func(req *http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept(req) + "\r\n\r\n"
		}, "Upgrade header"},
		{"connection keep-alive", false, func(req *http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: keep-alive\r\nSec-WebSocket-Accept: " + accept(req) + "\r\n\r\n"
		}, "Connection header"},
		{"extension not offered", false, func(req *http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept(req) + "\r\n" + wsTestPMC + "\r\n"
		}, "not offered"},
		{"unknown extension", true, func(req *http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept(req) + "\r\nSec-WebSocket-Extensions: x-webkit-deflate-frame\r\n\r\n"
		}, "not offered"},
		{"context takeover", true, func(req *http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept(req) + "\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n"
		}, "server_no_context_takeover"},
		{"client window not offered", true, func(req *http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept(req) + "\r\nSec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_max_window_bits=9\r\n\r\n"
		}, "client_max_window_bits"},
		{"bad server window", true, func(req *http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept(req) + "\r\nSec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; server_max_window_bits=16\r\n\r\n"
		}, "server_max_window_bits"},
		{"huge headers", false, func(req *http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nX-Big: " + strings.Repeat("a", 100<<10) + "\r\n\r\n"
		}, "exceed"},
		{"not http", false, func(*http.Request) string { return "SSH-2.0-OpenSSH_9.6\r\n\r\n" }, "reading response"},
		{"eof", false, func(*http.Request) string { return "" }, "EOF"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u, wait := wsFakeServer(t, func(c net.Conn, br *bufio.Reader, req *http.Request) error {
				// The client may hang up mid-response (huge headers).
				_, _ = c.Write([]byte(tc.resp(req)))
				if tc.name == "eof" {
					return nil
				}
				return wsDrain(br)
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			wc, _, err := wsDialRaw(t, ctx, u, wsOptions{Compression: tc.comp})
			if err == nil {
				wc.Close()
				t.Fatal("handshake succeeded")
			}
			if !errors.Is(err, errWSHandshake) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want errWSHandshake mentioning %q", err, tc.want)
			}
			t.Logf("%v", err)
			if err := wait(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestWSHandshakeBadOptions(t *testing.T) {
	u := &url.URL{Scheme: "ws", Host: "127.0.0.1:1"}
	for _, h := range []http.Header{
		{"Connection": {"close"}},
		{"sec-websocket-key": {"x"}},
		{"Sec-WebSocket-Extensions": {"permessage-deflate"}},
		{"Bad Name": {"x"}},
		{"X-Ok": {"a\r\nInjected: 1"}},
		{"Host": {"a b"}},
	} {
		c1, c2 := net.Pipe()
		_, err := wsHandshake(context.Background(), c1, u, wsOptions{Header: h})
		c1.Close()
		c2.Close()
		if !errors.Is(err, errWSHandshake) {
			t.Errorf("header %v: err = %v, want errWSHandshake", h, err)
		}
	}
	if _, err := wsHandshake(context.Background(), nil, &url.URL{Path: "/"}, wsOptions{}); !errors.Is(err, errWSHandshake) {
		t.Errorf("no host: err = %v", err)
	}
}

func TestWSHandshakeContextCancel(t *testing.T) {
	got := make(chan struct{})
	u, _ := wsFakeServer(t, func(c net.Conn, br *bufio.Reader, req *http.Request) error {
		close(got) // never answer
		return wsDrain(br)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		var d net.Dialer
		c, err := d.DialContext(context.Background(), "tcp", u.Host)
		if err != nil {
			errc <- err
			return
		}
		defer c.Close()
		_, err = wsHandshake(ctx, c, u, wsOptions{})
		errc <- err
	}()
	<-got
	cancel()
	err := <-errc
	if !errors.Is(err, errWSHandshake) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want errWSHandshake and context.Canceled", err)
	}
}

func TestWSHandshakeContextDeadline(t *testing.T) {
	u, _ := wsFakeServer(t, func(c net.Conn, br *bufio.Reader, req *http.Request) error {
		return wsDrain(br) // never answer
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, _, err := wsDialRaw(t, ctx, u, wsOptions{})
	if !errors.Is(err, errWSHandshake) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want errWSHandshake and context.DeadlineExceeded", err)
	}
}

// Frames the server sends together with the 101 response reach Read.
func TestWSDataWithHandshakeResponse(t *testing.T) {
	u, _ := wsFakeServer(t, func(c net.Conn, br *bufio.Reader, req *http.Request) error {
		after := append(wsFrame(0x82, []byte("INFO {}\r\n")), wsFrame(0x88, []byte{0x03, 0xe8})...)
		if err := wsAccept(c, req, "", after); err != nil {
			return err
		}
		return wsDrain(br)
	})
	wc, _ := wsDial(t, u, wsOptions{})
	got, err := io.ReadAll(wc)
	if err != nil || string(got) != "INFO {}\r\n" {
		t.Fatalf("ReadAll = %q, %v", got, err)
	}
}

// ---- framing ----

func TestWSPingPongAndClose(t *testing.T) {
	u, wait := wsFakeServer(t, func(c net.Conn, br *bufio.Reader, req *http.Request) error {
		if err := wsAccept(c, req, "", wsFrame(0x89, []byte("hello"))); err != nil {
			return err
		}
		if err := wsExpectControl(br, wsOpPong, []byte("hello")); err != nil {
			return fmt.Errorf("pong: %w", err)
		}
		// An unsolicited pong is ignored.
		if _, err := c.Write(append(wsFrame(0x8A, []byte("x")), wsFrame(0x82, []byte("ok"))...)); err != nil {
			return err
		}
		// Close with status 1001 and a reason; the client echoes the code.
		if _, err := c.Write(wsFrame(0x88, []byte{0x03, 0xe9, 'b', 'y', 'e'})); err != nil {
			return err
		}
		if err := wsExpectControl(br, wsOpClose, []byte{0x03, 0xe9}); err != nil {
			return fmt.Errorf("close echo: %w", err)
		}
		return wsDrain(br)
	})
	wc, _ := wsDial(t, u, wsOptions{})
	buf := make([]byte, 64)
	n, err := wc.Read(buf)
	if err != nil || string(buf[:n]) != "ok" {
		t.Fatalf("Read = %q, %v", buf[:n], err)
	}
	for range 2 {
		if n, err := wc.Read(buf); n != 0 || err != io.EOF {
			t.Fatalf("Read after close = %d, %v; want io.EOF", n, err)
		}
	}
	if _, err := wc.Write([]byte("PING\r\n")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Write after close frame: %v", err)
	}
	wc.Close()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
}

// Fragmented messages, compressed and not, with control frames between
// fragments, all arrive as one byte stream.
func TestWSFragmentedMessages(t *testing.T) {
	big := wsCompressiblePayload(10 << 10)
	comp := wsTestDeflate(t, big, false)
	final := wsTestDeflate(t, []byte("final block message"), true)
	random := wsRandomPayload(70000, 2) // 64-bit length frame
	var frames []byte
	add := func(b0 byte, p []byte) { frames = append(frames, wsFrame(b0, p)...) }
	add(0x01, []byte("hel"))
	add(0x89, []byte("p1"))
	add(0x00, []byte("lo "))
	add(0x8A, nil)
	add(0x80, []byte("world|"))
	third := len(comp) / 3
	add(0x42, comp[:third])
	add(0x89, []byte("p2"))
	add(0x00, comp[third:2*third])
	add(0x00, nil)
	add(0x80, comp[2*third:])
	add(0xC2, final)
	add(0xC2, []byte{0}) // empty compressed message (RFC 7692 7.2.3.6)
	add(0xC2, nil)       // tolerated
	add(0x82, nil)
	add(0x82, random)
	add(0x88, nil) // close without status
	want := append(append(append([]byte("hello world|"), big...), "final block message"...), random...)

	u, _ := wsFakeServer(t, func(c net.Conn, br *bufio.Reader, req *http.Request) error {
		if err := wsAccept(c, req, wsTestPMC, frames); err != nil {
			return err
		}
		if err := wsExpectControl(br, wsOpPong, []byte("p1")); err != nil {
			return err
		}
		if err := wsExpectControl(br, wsOpPong, []byte("p2")); err != nil {
			return err
		}
		if err := wsExpectControl(br, wsOpClose, nil); err != nil {
			return err
		}
		return wsDrain(br)
	})
	wc, _ := wsDial(t, u, wsOptions{Compression: true})
	// Small reads exercise resuming mid-frame and mid-inflate.
	var got []byte
	buf := make([]byte, 1000)
	for {
		n, err := wc.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes, want %d (equal prefix %q...)", len(got), len(want), got[:min(len(got), 20)])
	}
}

func TestWSHostileFrames(t *testing.T) {
	deflated := wsTestDeflate(t, wsCompressiblePayload(4000), false)
	cases := []struct {
		name     string
		comp     bool
		maxFrame int
		frames   []byte
		want     string
	}{
		{"masked frame", false, 0, []byte{0x82, 0x83, 1, 2, 3, 4, 'a' ^ 1, 'b' ^ 2, 'c' ^ 3}, "masked frame"},
		{"64-bit length MSB", false, 0, []byte{0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 1}, "most significant bit"},
		{"control frame > 125", false, 0, append([]byte{0x89, 126, 0, 126}, make([]byte, 126)...), "control frame payload of 126"},
		{"fragmented ping", false, 0, []byte{0x09, 0}, "fragmented control"},
		{"fragmented close", false, 0, []byte{0x08, 2, 3, 0xe8}, "fragmented control"},
		{"reserved data opcode", false, 0, []byte{0x83, 0}, "reserved opcode 0x3"},
		{"reserved control opcode", false, 0, []byte{0x8B, 0}, "reserved opcode 0xb"},
		{"frame > MaxFrame", false, 1024, wsFrame(0x82, make([]byte, 1025)), "exceeds limit of 1024"},
		{"huge frame", false, 0, []byte{0x82, 127, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "exceeds limit"},
		{"RSV1 not negotiated", false, 0, wsFrame(0xC2, []byte("abc")), "without negotiated"},
		{"RSV2", true, 0, wsFrame(0xA2, []byte("abc")), "RSV2/RSV3"},
		{"RSV3", true, 0, wsFrame(0x92, []byte("abc")), "RSV2/RSV3"},
		{"RSV1 on continuation", true, 0, append(wsFrame(0x42, deflated[:10]), wsFrame(0xC0, deflated[10:])...), "RSV1 set on a continuation"},
		{"compressed control", true, 0, wsFrame(0xC9, nil), "compressed control"},
		{"orphan continuation", false, 0, wsFrame(0x80, []byte("abc")), "continuation frame outside"},
		{"interleaved messages", false, 0, append(wsFrame(0x02, []byte("ab")), wsFrame(0x82, []byte("cd"))...), "new message started"},
		{"close with 1 byte", false, 0, wsFrame(0x88, []byte{3}), "1-byte"},
		{"corrupt deflate", true, 0, wsFrame(0xC2, []byte{0xff, 0xff, 0xff, 0xff}), "invalid compressed data"},
		{"data after final block", true, 0, wsFrame(0xC2, append(wsTestDeflate(t, []byte("hi"), true), bytes.Repeat([]byte("junk"), 8)...)), "after the final deflate block"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u, _ := wsFakeServer(t, func(c net.Conn, br *bufio.Reader, req *http.Request) error {
				ext := ""
				if tc.comp {
					ext = wsTestPMC
				}
				if err := wsAccept(c, req, ext, tc.frames); err != nil {
					return err
				}
				return wsDrain(br)
			})
			wc, _ := wsDial(t, u, wsOptions{Compression: tc.comp, MaxFrame: tc.maxFrame})
			_, err := io.Copy(io.Discard, wc)
			if !errors.Is(err, errWSProtocol) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want errWSProtocol mentioning %q", err, tc.want)
			}
			// The error is sticky.
			if _, err2 := wc.Read(make([]byte, 10)); err2 != err {
				t.Fatalf("second Read: %v, want %v", err2, err)
			}
		})
	}
}

// A truncated stream is io.ErrUnexpectedEOF mid-frame, io.EOF between
// messages.
func TestWSUnexpectedEOF(t *testing.T) {
	for _, tc := range []struct {
		name   string
		frames []byte
		want   error
	}{
		{"mid header", []byte{0x82}, io.ErrUnexpectedEOF},
		{"mid payload", wsFrame(0x82, []byte("abcdef"))[:5], io.ErrUnexpectedEOF},
		{"mid message", wsFrame(0x02, []byte("abc")), io.ErrUnexpectedEOF},
		{"between messages", wsFrame(0x82, []byte("abc")), io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, _ := wsFakeServer(t, func(c net.Conn, br *bufio.Reader, req *http.Request) error {
				return wsAccept(c, req, "", tc.frames) // and hang up
			})
			wc, _ := wsDial(t, u, wsOptions{})
			var err error
			for err == nil {
				_, err = wc.Read(make([]byte, 100))
			}
			if err != tc.want {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// A compression bomb is cut off at MaxFrame bytes of output without
// allocating in proportion to the inflated size.
func TestWSCompressionBomb(t *testing.T) {
	const maxFrame = 1 << 20
	// Sync-flushed segments from a fresh compressor concatenate into a
	// valid stream: 100 segments of 1 MiB of zeros inflate to 100 MiB.
	seg := wsTestDeflate(t, make([]byte, 1<<20), false)
	seg = append(seg, 0, 0, 0xff, 0xff)
	bomb := bytes.Repeat(seg, 100)
	bomb = bomb[:len(bomb)-4]
	exact := wsTestDeflate(t, make([]byte, maxFrame), false)
	t.Logf("bomb: %d compressed bytes for 100 MiB", len(bomb))
	frames := append(wsFrame(0xC2, exact), wsFrame(0x82, []byte("X"))...)
	frames = append(frames, wsFrame(0xC2, bomb)...)

	u, _ := wsFakeServer(t, func(c net.Conn, br *bufio.Reader, req *http.Request) error {
		if err := wsAccept(c, req, wsTestPMC, frames); err != nil {
			return err
		}
		return wsDrain(br)
	})
	wc, _ := wsDial(t, u, wsOptions{Compression: true, MaxFrame: maxFrame})

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var zeros, other int64
	buf := make([]byte, 32<<10)
	var err error
	for {
		var n int
		n, err = wc.Read(buf)
		for _, b := range buf[:n] {
			if b == 0 {
				zeros++
			} else {
				other++
			}
		}
		if err != nil {
			break
		}
	}
	runtime.ReadMemStats(&after)
	if !errors.Is(err, errWSProtocol) || !strings.Contains(err.Error(), "decompressed message exceeds limit") {
		t.Fatalf("err = %v, want decompression limit error", err)
	}
	if zeros != 2*maxFrame || other != 1 {
		t.Fatalf("read %d zeros and %d other bytes, want %d and 1", zeros, other, 2*maxFrame)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 32<<20 {
		t.Fatalf("allocated %d bytes reading the bomb", d)
	} else {
		t.Logf("allocated %d bytes", d)
	}
}

func TestWSClientWrites(t *testing.T) {
	small := []byte("PING\r\n")
	compressible := wsCompressiblePayload(50 << 10)
	random := wsRandomPayload(50<<10, 3)
	random64 := wsRandomPayload(70000, 4)
	medium := wsRandomPayload(200, 5)
	type want struct {
		payload    []byte
		compressed bool
	}
	for _, comp := range []bool{false, true} {
		t.Run(fmt.Sprintf("compression=%v", comp), func(t *testing.T) {
			wants := []want{
				{small, false},
				{compressible, comp},
				{random, false},
				{random64, false},
				{medium, false},
				{compressible, comp},
				{wsCompressiblePayload(200 << 10), comp},
			}
			u, wait := wsFakeServer(t, func(c net.Conn, br *bufio.Reader, req *http.Request) error {
				ext := ""
				if comp {
					ext = wsTestPMC
				}
				if err := wsAccept(c, req, ext, nil); err != nil {
					return err
				}
				keys := map[[4]byte]bool{}
				frames := 0
				for i, w := range wants {
					// A write is one frame, or with compression
					// messages of at most wsMaxMessage bytes.
					var got []byte
					for len(got) < len(w.payload) {
						f, err := wsReadClientFrame(br)
						if err != nil {
							return fmt.Errorf("write %d: %w", i, err)
						}
						frames++
						keys[f.key] = true
						wantB0 := byte(0x82)
						if w.compressed {
							wantB0 |= 0x40
						}
						if f.b0 != wantB0 {
							return fmt.Errorf("write %d: b0 = %#x, want %#x", i, f.b0, wantB0)
						}
						p := f.payload
						if w.compressed {
							if p, err = wsTestInflate(p); err != nil {
								return fmt.Errorf("write %d: inflate: %w", i, err)
							}
							if len(p) > wsMaxMessage {
								return fmt.Errorf("write %d: compressed message of %d bytes", i, len(p))
							}
							if len(f.payload) > len(p)/4 {
								return fmt.Errorf("write %d: poor compression %d -> %d", i, len(p), len(f.payload))
							}
						}
						got = append(got, p...)
						if !comp && len(got) != len(w.payload) {
							return fmt.Errorf("write %d: split into frames without compression", i)
						}
					}
					if !bytes.Equal(got, w.payload) {
						return fmt.Errorf("write %d: payload mismatch (%d bytes, want %d)", i, len(got), len(w.payload))
					}
				}
				if len(keys) < frames-1 {
					return fmt.Errorf("masking keys repeat: %d distinct for %d frames", len(keys), frames)
				}
				if err := wsExpectControl(br, wsOpClose, []byte{0x03, 0xe8}); err != nil {
					return fmt.Errorf("close frame: %w", err)
				}
				return wsDrain(br)
			})
			wc, _ := wsDial(t, u, wsOptions{Compression: comp})
			for i, w := range wants {
				in := bytes.Clone(w.payload)
				if n, err := wc.Write(in); err != nil || n != len(in) {
					t.Fatalf("write %d = %d, %v", i, n, err)
				}
				if !bytes.Equal(in, w.payload) {
					t.Fatalf("write %d modified the caller's buffer", i)
				}
			}
			if n, err := wc.Write(nil); n != 0 || err != nil {
				t.Fatalf("empty write = %d, %v", n, err)
			}
			if err := wc.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := wait(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestWSMask(t *testing.T) {
	for n := range 40 {
		p := wsRandomPayload(n, uint64(n))
		q := bytes.Clone(p)
		key := uint32(0x11223344) * uint32(n+1)
		wsMask(key, q)
		var k [4]byte
		binary.LittleEndian.PutUint32(k[:], key)
		for i := range p {
			if q[i] != p[i]^k[i%4] {
				t.Fatalf("n=%d: byte %d masked wrong", n, i)
			}
		}
	}
}

// ---- allocations ----

// wsLoopConn serves data in a loop and discards writes.
type wsLoopConn struct {
	net.Conn
	data []byte
	off  int
}

func (c *wsLoopConn) Read(p []byte) (int, error) {
	n := copy(p, c.data[c.off:])
	c.off = (c.off + n) % len(c.data)
	return n, nil
}

func (c *wsLoopConn) Write(p []byte) (int, error) { return len(p), nil }

func TestWSAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	var plain []byte
	plain = append(plain, wsFrame(0x82, wsRandomPayload(3000, 1))...)
	plain = append(plain, wsFrame(0x89, []byte("ping"))...)
	plain = append(plain, wsFrame(0x02, []byte("frag"))...)
	plain = append(plain, wsFrame(0x80, wsRandomPayload(70000, 2))...)
	plain = append(plain, wsFrame(0x82, []byte("x"))...)
	compressed := append(wsFrame(0xC2, wsTestDeflate(t, wsCompressiblePayload(20000), false)), plain...)

	for _, tc := range []struct {
		name string
		data []byte
		comp bool
	}{{"plain", plain, false}, {"compressed", compressed, true}} {
		t.Run(tc.name, func(t *testing.T) {
			lc := &wsLoopConn{data: tc.data}
			wc := newWSConn(lc, bufio.NewReaderSize(lc, wsReadBufSize), tc.comp, wsDefaultMaxFrame)
			buf := make([]byte, 16<<10)
			read := func() {
				for range 50 {
					if _, err := wc.Read(buf); err != nil {
						t.Fatal(err)
					}
				}
			}
			read() // warm up (decompressor, buffers)
			if a := testing.AllocsPerRun(20, read); a != 0 {
				t.Errorf("Read: %v allocs per 50 reads", a)
			}
			out := wsRandomPayload(20000, 7)
			text := wsCompressiblePayload(20000)
			write := func() {
				for _, p := range [][]byte{out, text, out[:10]} {
					if _, err := wc.Write(p); err != nil {
						t.Fatal(err)
					}
				}
			}
			write()
			if a := testing.AllocsPerRun(20, write); a != 0 {
				t.Errorf("Write: %v allocs per 3 writes", a)
			}
		})
	}
}

// wsBytesConn serves data once, then io.EOF, and discards writes.
type wsBytesConn struct {
	wsLoopConn
	r *bytes.Reader
}

func (c *wsBytesConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// Arbitrary server bytes never panic, and reading them ends.
func FuzzWSRead(f *testing.F) {
	f.Add(wsFrame(0x82, []byte("hello")), true)
	f.Add(append(wsFrame(0x01, []byte("a")), wsFrame(0x80, []byte("b"))...), false)
	f.Add(wsFrame(0xC2, wsTestDeflate(f, wsCompressiblePayload(300), false)), true)
	f.Add(wsFrame(0xC2, wsTestDeflate(f, wsCompressiblePayload(300), true)), true)
	f.Add(append(wsFrame(0x89, []byte("p")), wsFrame(0x88, []byte{3, 0xe8})...), false)
	f.Add([]byte{0x82, 127, 0, 0, 0, 0, 0, 0, 1, 0}, false)
	f.Fuzz(func(t *testing.T, data []byte, comp bool) {
		c := &wsBytesConn{r: bytes.NewReader(data)}
		wc := newWSConn(c, bufio.NewReaderSize(c, wsReadBufSize), comp, 4096)
		buf := make([]byte, 512)
		total := 0
		for {
			n, err := wc.Read(buf)
			total += n
			if n < 0 || n > len(buf) {
				t.Fatalf("Read returned n=%d", n)
			}
			if err != nil {
				break
			}
			if total > 1<<20 {
				t.Fatalf("read %d bytes from %d input bytes", total, len(data))
			}
		}
	})
}
