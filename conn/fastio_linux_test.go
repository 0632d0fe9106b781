//go:build linux

package conn

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// tcpPair returns a wrapped client end and the plain server end of a
// loopback TCP connection.
func tcpPair(t *testing.T) (*fastTCP, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		acc <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv := <-acc
	if srv == nil {
		t.Fatal("accept failed")
	}
	f, ok := fastConn(c).(*fastTCP)
	if !ok {
		t.Fatal("fastConn did not wrap a TCP connection")
	}
	t.Cleanup(func() { f.Close(); srv.Close() })
	return f, srv.(*net.TCPConn)
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>11)
	}
	return b
}

// A write far larger than the socket buffers waits for the peer to drain
// (EAGAIN, then readiness) and arrives whole and in order; reads in small
// pieces, by both read paths, see every byte.
func TestFastTCPLargeTransfers(t *testing.T) {
	f, srv := tcpPair(t)
	out := pattern(8 << 20)
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(srv, int64(len(out))))
		got <- b
	}()
	if n, err := f.Write(out); err != nil || n != len(out) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if b := <-got; !bytes.Equal(b, out) {
		t.Fatalf("peer read %d bytes, not the %d written", len(b), len(out))
	}

	in := pattern(3 << 20)
	go func() { _, _ = srv.Write(in) }()
	var all []byte
	buf := make([]byte, 1000)
	for len(all) < len(in) {
		n, err := f.Read(buf)
		if err != nil {
			t.Fatalf("Read after %d bytes: %v", len(all), err)
		}
		all = append(all, buf[:n]...)
	}
	if !bytes.Equal(all, in) {
		t.Fatal("bytes read differ from bytes sent")
	}
	if n, err := f.Read(nil); n != 0 || err != nil {
		t.Fatalf("empty Read = %d, %v", n, err)
	}
}

func TestFastTCPEndOfStream(t *testing.T) {
	f, srv := tcpPair(t)
	if _, err := srv.Write([]byte("last")); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	b, err := io.ReadAll(f)
	if err != nil || string(b) != "last" {
		t.Fatalf("ReadAll = %q, %v; want the bytes, then io.EOF (nil from ReadAll)", b, err)
	}
}

func TestFastTCPReset(t *testing.T) {
	f, srv := tcpPair(t)
	if err := srv.SetLinger(0); err != nil {
		t.Fatal(err)
	}
	srv.Close() // RST
	_, err := f.Read(make([]byte, 10))
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("Read after a reset: %v, want ECONNRESET", err)
	}
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "read" {
		t.Fatalf("error %v is not a read *net.OpError", err)
	}
}

func TestFastTCPDeadlinesAndClose(t *testing.T) {
	f, _ := tcpPair(t)
	// A read deadline in the past fails the read at once, as a timeout.
	if err := f.SetReadDeadline(time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	_, err := f.Read(make([]byte, 10))
	if !errors.Is(err, os.ErrDeadlineExceeded) || !netTimeout(err) {
		t.Fatalf("Read past its deadline: %v", err)
	}
	// Moving the deadline while a read waits ends it (link.interrupt).
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := f.Read(make([]byte, 10))
		done <- err
	}()
	_ = f.SetReadDeadline(time.Unix(1, 0))
	if err := <-done; !netTimeout(err) {
		t.Fatalf("interrupted Read: %v", err)
	}
	_ = f.SetReadDeadline(time.Time{})

	// A write to a peer that never reads fails at its deadline with part
	// of the bytes written.
	_ = f.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	big := make([]byte, 64<<20)
	n, err := f.Write(big)
	if !netTimeout(err) || n >= len(big) {
		t.Fatalf("Write to a stalled peer = %d, %v", n, err)
	}

	// Close ends a waiting read with net.ErrClosed.
	go func() {
		_, err := f.Read(make([]byte, 10))
		done <- err
	}()
	f.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Read across Close: %v", err)
	}
}

// Only TCP connections are wrapped.
func TestFastConnWrapsOnlyTCP(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if c := fastConn(a); c != a || isFastConn(c) {
		t.Fatal("a pipe was wrapped")
	}
	f, _ := tcpPair(t)
	if !isFastConn(f) {
		t.Fatal("a wrapped TCP connection is not recognised")
	}
}

// netTimeout reports whether err is a net.Error that timed out.
func netTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
