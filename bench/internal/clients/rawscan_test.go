package clients

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// scanAll scans r to EOF and returns the total counts and the control
// lines seen.
func scanAll(t *testing.T, r io.Reader, bufSize, size int) (ScanResult, []string, error) {
	t.Helper()
	sc := NewMsgScanner(r, bufSize, size)
	var total ScanResult
	var ctl []string
	for range 1 << 20 {
		res, err := sc.Scan(func(line []byte) error {
			if bytes.HasPrefix(line, []byte("-ERR")) {
				return errors.New(string(line))
			}
			ctl = append(ctl, string(line))
			return nil
		})
		total.Msgs += res.Msgs
		total.BadSize += res.BadSize
		if err != nil {
			return total, ctl, err
		}
	}
	t.Fatal("the scanner never reached the end of the stream")
	return total, ctl, nil
}

func TestMsgScannerCounts(t *testing.T) {
	stream := "INFO {\"server_id\":\"x\"}\r\n" +
		"+OK\r\n" +
		"MSG foo 1 5\r\nhello\r\n" +
		"PING\r\n" +
		"MSG foo.bar 1 _INBOX.abc.7 5\r\nx\r\nyz\r\n" + // a payload holding CRLF
		"MSG foo 1 3\r\nabc\r\n" + // wrong size
		"MSG foo 1 5\r\n\n\n\n\n\n\r\n" +
		"PONG\r\n"
	for name, r := range map[string]io.Reader{
		"whole":    strings.NewReader(stream),
		"one byte": iotest.OneByteReader(strings.NewReader(stream)),
		"half":     iotest.HalfReader(strings.NewReader(stream)),
	} {
		t.Run(name, func(t *testing.T) {
			// A buffer smaller than the INFO line and than some frames
			// grows to fit them.
			res, ctl, err := scanAll(t, r, 8, 5)
			if !errors.Is(err, io.EOF) {
				t.Fatalf("end of stream: %v, want EOF", err)
			}
			if res.Msgs != 4 || res.BadSize != 1 {
				t.Fatalf("counted %+v, want 4 messages, 1 of a wrong size", res)
			}
			want := []string{`INFO {"server_id":"x"}`, "+OK", "PING", "PONG"}
			if strings.Join(ctl, "|") != strings.Join(want, "|") {
				t.Fatalf("control lines %q, want %q", ctl, want)
			}
		})
	}
}

// A long stream through a buffer that holds a few frames at a time, split
// at every offset by the reads: every frame is counted once.
func TestMsgScannerSplits(t *testing.T) {
	frame := "MSG bench.pubsub.16 1 16\r\n" + strings.Repeat("p", 16) + "\r\n"
	const n = 1000
	stream := strings.Repeat(frame, n)
	for chunk := 1; chunk <= 2*len(frame)+1; chunk++ {
		res, _, err := scanAll(t, &chunkReader{s: stream, n: chunk}, 3*len(frame)+5, 16)
		if !errors.Is(err, io.EOF) || res.Msgs != n || res.BadSize != 0 {
			t.Fatalf("reads of %d bytes: %+v, %v; want %d messages and EOF", chunk, res, err, n)
		}
	}
}

type chunkReader struct {
	s string
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.s) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.s)
	c.s = c.s[k:]
	return k, nil
}

func TestMsgScannerErrors(t *testing.T) {
	for _, bad := range []string{
		"MSG foo 1 5\r\nhelloXX\r\n",       // payload not followed by CRLF
		"MSG foo 1 x5\r\nhello\r\n",        // bad size
		"MSG foo 1 5x\r\nhello\r\n",        // bad size
		"MSG foo 1 \r\n\r\n",               // no size
		"MSG foo 1 1234567890\r\n",         // size of ten digits
		"MSG foo 1 5\nhello\r\n",           // control line not ended by CRLF
		"-ERR 'Permissions Violation'\r\n", // the control function's error
	} {
		res, _, err := scanAll(t, strings.NewReader(bad), 64, 5)
		if err == nil || errors.Is(err, io.EOF) || res.Msgs != 0 {
			t.Errorf("Scan(%q) = %+v, %v; want a protocol error", bad, res, err)
		}
	}
}

func TestCounterAddN(t *testing.T) {
	c := newCounter(4)
	c.addN(2, 0) // before any target
	target := c.expect(5)
	c.addN(3, 0)
	c.addN(4, 0) // crosses the target: more than expected
	if err := c.wait(target, func() int64 { return 0 }); err != nil {
		t.Fatal(err)
	}
	if err := c.checkExact(target); err == nil {
		t.Fatal("two messages too many were not reported")
	}
	target = c.expect(2)
	c.addN(2, 1)
	if err := c.wait(target, func() int64 { return 0 }); err == nil {
		t.Fatal("a message of the wrong size was not reported")
	}
}

// BenchmarkReaderMsg16 and BenchmarkMsgScanner16 compare the client CPU
// the two readers spend per 16-byte MSG frame, from memory.
func BenchmarkReaderMsg16(b *testing.B) {
	src := msgStream(16)
	b.ReportAllocs()
	b.SetBytes(int64(len(src.frame)))
	r := NewReader(src, rawReadBuf)
	for b.Loop() {
		if op, err := r.Next(nil); err != nil || op.Size != 16 {
			b.Fatal(op, err)
		}
	}
}

func BenchmarkMsgScanner16(b *testing.B) {
	src := msgStream(16)
	b.ReportAllocs()
	b.SetBytes(int64(len(src.frame)))
	sc := NewMsgScanner(src, rawScanBuf, 16)
	ctl := func([]byte) error { return errors.New("control") }
	var left int64
	for b.Loop() {
		for left == 0 {
			res, err := sc.Scan(ctl)
			if err != nil || res.BadSize != 0 {
				b.Fatal(res, err)
			}
			left = res.Msgs
		}
		left--
	}
}

// msgStream repeats one MSG frame for ever, handing out 64 KiB per read
// (a typical read from a busy loopback socket).
type repeatFrames struct {
	frame []byte
	block []byte
	off   int
}

func msgStream(size int) *repeatFrames {
	f := []byte("MSG bench.pubsub.sep.cb.16.raw 1 " + strconv.Itoa(size) + "\r\n" + strings.Repeat("p", size) + "\r\n")
	return &repeatFrames{frame: f, block: bytes.Repeat(f, (64<<10)/len(f)+1)}
}

func (r *repeatFrames) Read(p []byte) (int, error) {
	n := copy(p[:min(len(p), 64<<10)], r.block[r.off:])
	r.off = (r.off + n) % len(r.frame)
	return n, nil
}
