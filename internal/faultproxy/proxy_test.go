package faultproxy

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// wait is the generous bound for anything that is expected to happen.
const wait = 10 * time.Second

// quiet is how long a negative check ("nothing arrives") waits.
const quiet = 100 * time.Millisecond

// echoServer is a TCP echo server on 127.0.0.1:0 that records what it reads.
type echoServer struct {
	ln net.Listener
	wg sync.WaitGroup

	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	accepted int
	received int
	reads    []int         // size of every Read
	notify   chan struct{} // closed and replaced on every read
}

func newEcho(t *testing.T) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &echoServer{ln: ln, conns: make(map[net.Conn]struct{}), notify: make(chan struct{})}
	e.wg.Add(1)
	go e.accept()
	t.Cleanup(e.close)
	return e
}

func (e *echoServer) addr() string { return e.ln.Addr().String() }

func (e *echoServer) accept() {
	defer e.wg.Done()
	for {
		c, err := e.ln.Accept()
		if err != nil {
			return
		}
		e.mu.Lock()
		e.conns[c] = struct{}{}
		e.accepted++
		e.mu.Unlock()
		e.wg.Add(1)
		go e.handle(c)
	}
}

func (e *echoServer) handle(c net.Conn) {
	defer e.wg.Done()
	defer func() {
		e.mu.Lock()
		delete(e.conns, c)
		e.mu.Unlock()
		c.Close()
	}()
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			e.mu.Lock()
			e.received += n
			e.reads = append(e.reads, n)
			close(e.notify)
			e.notify = make(chan struct{})
			e.mu.Unlock()
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (e *echoServer) close() {
	e.ln.Close()
	e.mu.Lock()
	for c := range e.conns {
		c.Close()
	}
	e.mu.Unlock()
	e.wg.Wait()
}

func (e *echoServer) stats() (accepted, received int, reads []int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.accepted, e.received, append([]int(nil), e.reads...)
}

// waitReceived blocks until the server has read at least n bytes.
func (e *echoServer) waitReceived(t *testing.T, n int) {
	t.Helper()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		e.mu.Lock()
		got, ch := e.received, e.notify
		e.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("echo server received %d bytes, want %d", got, n)
		}
	}
}

func newProxy(t *testing.T, target string) *Proxy {
	t.Helper()
	p, err := New(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func dial(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", p.Addr(), wait)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func write(t *testing.T, c net.Conn, b []byte) {
	t.Helper()
	c.SetWriteDeadline(time.Now().Add(wait))
	if _, err := c.Write(b); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func readN(t *testing.T, c net.Conn, n int) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(wait))
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatalf("read %d bytes: %v", n, err)
	}
	return b
}

func roundTrip(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	write(t, c, []byte(msg))
	if got := string(readN(t, c, len(msg))); got != msg {
		t.Fatalf("echo = %q, want %q", got, msg)
	}
}

// expectQuiet asserts that nothing can be read from c for a short while.
func expectQuiet(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(quiet))
	var b [64]byte
	n, err := c.Read(b[:])
	if n > 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read = %d bytes %q, err %v; want nothing (deadline)", n, b[:n], err)
	}
}

// expectClosed asserts that reading from c ends in an error other than a
// timeout (EOF or reset).
func expectClosed(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(wait))
	b := make([]byte, 64)
	for {
		_, err := c.Read(b)
		if err == nil {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("connection not closed")
		}
		return
	}
}

// eventually polls cond with a bounded deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b
}

func TestForward(t *testing.T) {
	e := newEcho(t)
	p := newProxy(t, e.addr())
	if !strings.HasPrefix(p.Addr(), "127.0.0.1:") || p.URL() != "nats://"+p.Addr() {
		t.Fatalf("Addr %q URL %q", p.Addr(), p.URL())
	}
	c := dial(t, p)
	roundTrip(t, c, "hello")
	big := pattern(200_000)
	go c.Write(big) // the echo comes back while we write
	if got := readN(t, c, len(big)); !bytes.Equal(got, big) {
		t.Fatal("large echo mismatch")
	}
	if got := p.Accepted(); got != 1 {
		t.Errorf("Accepted = %d, want 1", got)
	}
	if got := p.Conns(); got != 1 {
		t.Errorf("Conns = %d, want 1", got)
	}
	want := int64(5 + len(big))
	if p.BytesUp() != want || p.BytesDown() != want {
		t.Errorf("BytesUp %d BytesDown %d, want %d", p.BytesUp(), p.BytesDown(), want)
	}
	c.Close()
	eventually(t, "Conns()==0 after client close", func() bool { return p.Conns() == 0 })
}

func TestHalfClose(t *testing.T) {
	e := newEcho(t)
	p := newProxy(t, e.addr())
	c := dial(t, p)
	write(t, c, []byte("bye"))
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(wait))
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "bye" {
		t.Fatalf("ReadAll = %q, %v", got, err)
	}
	eventually(t, "Conns()==0", func() bool { return p.Conns() == 0 })
}

func TestCutAll(t *testing.T) {
	e := newEcho(t)
	p := newProxy(t, e.addr())
	c1, c2 := dial(t, p), dial(t, p)
	roundTrip(t, c1, "one")
	roundTrip(t, c2, "two")
	p.CutAll()
	if n := p.Conns(); n != 0 {
		t.Errorf("Conns after CutAll = %d", n)
	}
	expectClosed(t, c1)
	expectClosed(t, c2)
	// The server sides are closed too.
	eventually(t, "server conns closed", func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return len(e.conns) == 0
	})
	// New connections still work.
	roundTrip(t, dial(t, p), "three")
}

func TestRefuse(t *testing.T) {
	e := newEcho(t)
	p := newProxy(t, e.addr())
	p.Refuse(true)
	c := dial(t, p)
	expectClosed(t, c)
	if p.Accepted() != 1 || p.Conns() != 0 {
		t.Errorf("Accepted %d Conns %d, want 1 and 0", p.Accepted(), p.Conns())
	}
	if acc, _, _ := e.stats(); acc != 0 {
		t.Errorf("server accepted %d connections while refusing", acc)
	}
	p.Refuse(false)
	roundTrip(t, dial(t, p), "back")
}

func TestStallUp(t *testing.T) {
	e := newEcho(t)
	p := newProxy(t, e.addr())
	c := dial(t, p)
	roundTrip(t, c, "x")
	p.Stall(Up, true)
	msg := pattern(10_000)
	write(t, c, msg)
	expectQuiet(t, c)
	if _, rcv, _ := e.stats(); rcv != 1 {
		t.Fatalf("server received %d bytes during stall, want 1", rcv)
	}
	if p.Conns() != 1 {
		t.Fatal("stall closed the connection")
	}
	p.Stall(Up, false)
	if got := readN(t, c, len(msg)); !bytes.Equal(got, msg) {
		t.Fatal("data lost or reordered across stall")
	}
}

func TestStallDown(t *testing.T) {
	e := newEcho(t)
	p := newProxy(t, e.addr())
	c := dial(t, p)
	roundTrip(t, c, "x")
	p.Stall(Down, true)
	msg := pattern(10_000)
	write(t, c, msg)
	e.waitReceived(t, 1+len(msg)) // the server got it and echoed it
	expectQuiet(t, c)
	p.Stall(Down, false)
	if got := readN(t, c, len(msg)); !bytes.Equal(got, msg) {
		t.Fatal("data lost or reordered across stall")
	}
	// Toggling again works on the same connection.
	p.Stall(Down, true)
	write(t, c, []byte("again"))
	e.waitReceived(t, 1+len(msg)+5)
	expectQuiet(t, c)
	p.Stall(Down, false)
	if got := string(readN(t, c, 5)); got != "again" {
		t.Fatalf("got %q", got)
	}
}

func TestChunk(t *testing.T) {
	e := newEcho(t)
	p := newProxy(t, e.addr())
	c := dial(t, p)
	roundTrip(t, c, "warm")

	var mu sync.Mutex
	var sizes []int
	p.Chunk(Up, 1)
	p.Corrupt(Up, func(b []byte) []byte {
		mu.Lock()
		sizes = append(sizes, len(b))
		mu.Unlock()
		return b
	})
	w0 := p.writes[Up].Load()
	msg := pattern(3000)
	write(t, c, msg)
	if got := readN(t, c, len(msg)); !bytes.Equal(got, msg) {
		t.Fatal("chunked data lost or reordered")
	}
	if w := p.writes[Up].Load() - w0; w != int64(len(msg)) {
		t.Errorf("proxy made %d writes upstream, want %d", w, len(msg))
	}
	mu.Lock()
	if len(sizes) != len(msg) {
		t.Errorf("%d chunks, want %d", len(sizes), len(msg))
	}
	for i, n := range sizes {
		if n != 1 {
			t.Fatalf("chunk %d has %d bytes", i, n)
		}
	}
	mu.Unlock()
	_, rcv, reads := e.stats()
	sum := 0
	for _, n := range reads {
		sum += n
	}
	if sum != rcv || rcv != 4+len(msg) {
		t.Errorf("server read %d bytes (sum of reads %d), want %d", rcv, sum, 4+len(msg))
	}

	// Chunk down with n=7: every write is at most 7 bytes.
	p.Corrupt(Up, nil)
	p.Chunk(Up, 0)
	p.Chunk(Down, 7)
	d0 := p.writes[Down].Load()
	msg = pattern(700)
	write(t, c, msg)
	if got := readN(t, c, len(msg)); !bytes.Equal(got, msg) {
		t.Fatal("chunked data lost or reordered")
	}
	if w := p.writes[Down].Load() - d0; w < 100 {
		t.Errorf("proxy made %d writes downstream, want >= 100", w)
	}
}

func TestCorrupt(t *testing.T) {
	e := newEcho(t)
	p := newProxy(t, e.addr())
	c := dial(t, p)
	p.Corrupt(Down, bytes.ToUpper)
	write(t, c, []byte("hello"))
	if got := string(readN(t, c, 5)); got != "HELLO" {
		t.Fatalf("got %q, want HELLO", got)
	}
	// Up: replace every chunk with a fixed, longer string.
	p.Corrupt(Down, nil)
	p.Corrupt(Up, func([]byte) []byte { return []byte("-ERR\r\n") })
	write(t, c, []byte("z"))
	if got := string(readN(t, c, 6)); got != "-ERR\r\n" {
		t.Fatalf("got %q", got)
	}
	p.Corrupt(Up, nil)
	roundTrip(t, c, "clean")
}

func TestInjectDown(t *testing.T) {
	e := newEcho(t)
	p := newProxy(t, e.addr())
	c1, c2 := dial(t, p), dial(t, p)
	roundTrip(t, c1, "a")
	roundTrip(t, c2, "b")
	junk := []byte("\x00garbage\r\n")
	p.InjectDown(junk)
	for _, c := range []net.Conn{c1, c2} {
		if got := readN(t, c, len(junk)); !bytes.Equal(got, junk) {
			t.Fatalf("got %q", got)
		}
	}
	if _, rcv, _ := e.stats(); rcv != 2 {
		t.Errorf("injected bytes reached the server (%d bytes)", rcv)
	}
}

func TestThrottle(t *testing.T) {
	e := newEcho(t)
	p := newProxy(t, e.addr())
	c := dial(t, p)
	roundTrip(t, c, "x")
	const rate = 2000
	p.Throttle(Up, rate)
	msg := pattern(200) // needs at least 100ms at 2000 B/s from an empty bucket
	start := time.Now()
	write(t, c, msg)
	if got := readN(t, c, len(msg)); !bytes.Equal(got, msg) {
		t.Fatal("throttled data mismatch")
	}
	if d := time.Since(start); d < 90*time.Millisecond {
		t.Errorf("200 bytes at %d B/s took %v", rate, d)
	}
	// Switching the throttle off releases a crawling transfer at once.
	p.Throttle(Up, 20) // 200 bytes would take 10s
	write(t, c, msg)
	e.waitReceived(t, 1+len(msg)+1) // the first byte crawled through
	p.Throttle(Up, 0)
	if got := readN(t, c, len(msg)); !bytes.Equal(got, msg) {
		t.Fatal("data mismatch after unthrottle")
	}
}

func TestSetTarget(t *testing.T) {
	e1, e2 := newEcho(t), newEcho(t)
	p := newProxy(t, e1.addr())
	c1 := dial(t, p)
	roundTrip(t, c1, "one")
	p.SetTarget(e2.addr())
	roundTrip(t, dial(t, p), "two")
	roundTrip(t, c1, "still one")
	if a1, _, _ := e1.stats(); a1 != 1 {
		t.Errorf("first server accepted %d", a1)
	}
	if a2, _, _ := e2.stats(); a2 != 1 {
		t.Errorf("second server accepted %d", a2)
	}
}

func TestDialFailureClosesClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close() // nothing listens there now
	p := newProxy(t, dead)
	expectClosed(t, dial(t, p))
	eventually(t, "Conns()==0", func() bool { return p.Conns() == 0 })
}

// proxyGoroutines returns the stacks of goroutines running proxy code.
func proxyGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "faultproxy.(*Proxy).") || strings.Contains(g, "faultproxy.(*link).") {
			out = append(out, g)
		}
	}
	return out
}

func TestCloseLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	e := newEcho(t)
	p, err := New(e.addr())
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	for range 4 {
		c, err := net.DialTimeout("tcp", p.Addr(), wait)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		roundTrip(t, c, "hi")
		conns = append(conns, c)
	}
	// Leave pumps blocked in every interesting state.
	p.Stall(Down, true)
	write(t, conns[1], []byte("held down"))
	e.waitReceived(t, 4*2+9)
	p.Stall(Up, true)
	write(t, conns[0], []byte("held up"))
	p.Throttle(Up, 1)
	write(t, conns[2], pattern(100))

	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("Close blocked")
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	// Close waited for its goroutines; allow only for them to finish
	// unwinding after their final wg.Done.
	eventually(t, "proxy goroutines to exit", func() bool { return len(proxyGoroutines()) == 0 })
	for _, c := range conns {
		expectClosed(t, c)
	}
	if _, err := net.DialTimeout("tcp", p.Addr(), wait); err == nil {
		t.Error("listener still accepting after Close")
	}
	e.close()
	for _, c := range conns {
		c.Close()
	}
	eventually(t, "goroutine count back to baseline", func() bool {
		return runtime.NumGoroutine() <= before
	})
	if g := proxyGoroutines(); len(g) != 0 {
		t.Fatalf("leaked goroutines:\n%s", strings.Join(g, "\n\n"))
	}
}

func TestInvalidDirectionPanics(t *testing.T) {
	p := newProxy(t, "127.0.0.1:1")
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	p.Stall(Direction(7), true)
}

func TestCloseAbortsThrottle(t *testing.T) {
	e := newEcho(t)
	p, err := New(e.addr())
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, p)
	roundTrip(t, c, "x")
	p.Throttle(Down, 20) // 1000 bytes would take 50s
	write(t, c, pattern(1000))
	e.waitReceived(t, 1001)
	c.SetReadDeadline(time.Now().Add(wait))
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil { // it is crawling
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("Close blocked by a throttled pump")
	}
	eventually(t, "proxy goroutines to exit", func() bool { return len(proxyGoroutines()) == 0 })
	expectClosed(t, c)
}
