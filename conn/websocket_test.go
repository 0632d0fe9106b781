package conn_test

import (
	"bufio"
	"bytes"
	stdflate "compress/flate"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
)

// ---- helpers ----

// wsStartServer starts a nats-server with a WebSocket listener, offering
// compression or not, and returns its ws:// URL.
func wsStartServer(t *testing.T, compression bool) *url.URL {
	t.Helper()
	s := natstest.NewServer(t, natstest.JetStream(false), wsListener(compression))
	u, err := url.Parse(s.WebSocketURL())
	if err != nil {
		t.Fatalf("parse %q: %v", s.WebSocketURL(), err)
	}
	return u
}

// wsCounts are the raw bytes read and written under a WebSocket
// connection (byteCountingConn).
type wsCounts struct{ r, w atomic.Int64 }

// wsDialRaw dials u's host and runs the handshake. On error the raw conn is
// closed.
func wsDialRaw(t *testing.T, ctx context.Context, u *url.URL, o conn.WSOptions) (net.Conn, *wsCounts, error) {
	t.Helper()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	cc := &wsCounts{}
	wc, err := conn.WSHandshake(ctx, byteCountingConn{Conn: c, in: &cc.r, out: &cc.w}, u, o)
	if err != nil {
		c.Close()
		return nil, cc, err
	}
	return wc, cc, nil
}

// wsDial is wsDialRaw that must succeed; the conn is closed at cleanup and
// has a generous deadline so a broken test cannot hang.
func wsDial(t *testing.T, u *url.URL, o conn.WSOptions) (net.Conn, *wsCounts) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wc, cc, err := wsDialRaw(t, ctx, u, o)
	if err != nil {
		t.Fatalf("wsHandshake: %v", err)
	}
	t.Cleanup(func() { wc.Close() })
	_ = wc.SetDeadline(time.Now().Add(30 * time.Second))
	return wc, cc
}

// wsTestPMC is the extension response accepting our offer.
const wsTestPMC = "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover\r\n"

// wsAccept writes a 101 response with extra header lines, followed by
// after in the same write.
func wsAccept(c net.Conn, req *http.Request, extra string, after []byte) error {
	resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
		conn.WSAcceptKey(req.Header.Get("Sec-WebSocket-Key")) + "\r\n" + extra + "\r\n"
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
			wc, cc := wsDial(t, u, conn.WSOptions{Compression: comp})
			if conn.WSCompressed(wc) != comp {
				t.Fatalf("compression negotiated = %v, want %v", conn.WSCompressed(wc), comp)
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
	wc, _ := wsDial(t, u, conn.WSOptions{Compression: true})
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
			wc := conn.NewWSConn(lc, tc.comp, conn.WSDefaultMaxFrame)
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
		wc := conn.NewWSConn(c, comp, 4096)
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
