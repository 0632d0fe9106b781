package conn_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/natsio/natsio/conn"
)

func TestWSPingPongAndClose(t *testing.T) {
	srv := startFake(t, withWebSocket(func(c net.Conn, br *bufio.Reader, req *http.Request) error {
		if err := wsAccept(c, req, "", wsFrame(0x89, []byte("hello"))); err != nil {
			return err
		}
		if err := wsExpectControl(br, conn.WSOpPong, []byte("hello")); err != nil {
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
		if err := wsExpectControl(br, conn.WSOpClose, []byte{0x03, 0xe9}); err != nil {
			return fmt.Errorf("close echo: %w", err)
		}
		return wsDrain(br)
	}))
	u := srv.wsURL()
	wc, _ := wsDial(t, u, conn.WSOptions{})
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
	if err := srv.wsResult(t); err != nil {
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

	srv := startFake(t, withWebSocket(func(c net.Conn, br *bufio.Reader, req *http.Request) error {
		if err := wsAccept(c, req, wsTestPMC, frames); err != nil {
			return err
		}
		if err := wsExpectControl(br, conn.WSOpPong, []byte("p1")); err != nil {
			return err
		}
		if err := wsExpectControl(br, conn.WSOpPong, []byte("p2")); err != nil {
			return err
		}
		if err := wsExpectControl(br, conn.WSOpClose, nil); err != nil {
			return err
		}
		return wsDrain(br)
	}))
	u := srv.wsURL()
	wc, _ := wsDial(t, u, conn.WSOptions{Compression: true})
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
			srv := startFake(t, withWebSocket(func(c net.Conn, br *bufio.Reader, req *http.Request) error {
				ext := ""
				if tc.comp {
					ext = wsTestPMC
				}
				if err := wsAccept(c, req, ext, tc.frames); err != nil {
					return err
				}
				return wsDrain(br)
			}))
			u := srv.wsURL()
			wc, _ := wsDial(t, u, conn.WSOptions{Compression: tc.comp, MaxFrame: tc.maxFrame})
			_, err := io.Copy(io.Discard, wc)
			if !errors.Is(err, conn.ErrWSProtocol) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want conn.ErrWSProtocol mentioning %q", err, tc.want)
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
			srv := startFake(t, withWebSocket(func(c net.Conn, br *bufio.Reader, req *http.Request) error {
				return wsAccept(c, req, "", tc.frames) // and hang up
			}))
			u := srv.wsURL()
			wc, _ := wsDial(t, u, conn.WSOptions{})
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

	srv := startFake(t, withWebSocket(func(c net.Conn, br *bufio.Reader, req *http.Request) error {
		if err := wsAccept(c, req, wsTestPMC, frames); err != nil {
			return err
		}
		return wsDrain(br)
	}))
	u := srv.wsURL()
	wc, _ := wsDial(t, u, conn.WSOptions{Compression: true, MaxFrame: maxFrame})

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
	if !errors.Is(err, conn.ErrWSProtocol) || !strings.Contains(err.Error(), "decompressed message exceeds limit") {
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
			srv := startFake(t, withWebSocket(func(c net.Conn, br *bufio.Reader, req *http.Request) error {
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
					// messages of at most conn.WSMaxMessage bytes.
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
							if len(p) > conn.WSMaxMessage {
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
				if err := wsExpectControl(br, conn.WSOpClose, []byte{0x03, 0xe8}); err != nil {
					return fmt.Errorf("close frame: %w", err)
				}
				return wsDrain(br)
			}))
			u := srv.wsURL()
			wc, _ := wsDial(t, u, conn.WSOptions{Compression: comp})
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
			if err := srv.wsResult(t); err != nil {
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
		conn.WSMask(key, q)
		var k [4]byte
		binary.LittleEndian.PutUint32(k[:], key)
		for i := range p {
			if q[i] != p[i]^k[i%4] {
				t.Fatalf("n=%d: byte %d masked wrong", n, i)
			}
		}
	}
}
