package memnet_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/internal/memnet"
)

func mustWrite(t *testing.T, c net.Conn, s string) {
	t.Helper()
	if n, err := c.Write([]byte(s)); err != nil || n != len(s) {
		t.Fatalf("Write(%q) = %d, %v", s, n, err)
	}
}

func mustRead(t *testing.T, c net.Conn, want string) {
	t.Helper()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("read %q: %v (got %q)", want, err, got)
	}
	if string(got) != want {
		t.Fatalf("read %q, want %q", got, want)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() && errors.Is(err, os.ErrDeadlineExceeded)
}

func TestPipeFullDuplex(t *testing.T) {
	a, b := memnet.Pipe()
	defer a.Close()
	defer b.Close()
	mustWrite(t, a, "hello ")
	mustWrite(t, a, "world")
	mustWrite(t, b, "pong")
	if got := b.Buffered(); got != len("hello world") {
		t.Fatalf("Buffered = %d", got)
	}
	mustRead(t, b, "hello world")
	mustRead(t, a, "pong")
	if a.LocalAddr().String() != "memnet-a" || a.RemoteAddr().String() != "memnet-b" ||
		b.LocalAddr().String() != "memnet-b" || a.LocalAddr().Network() != memnet.Network {
		t.Fatalf("addrs: %v %v %v", a.LocalAddr(), a.RemoteAddr(), b.LocalAddr())
	}
	// A zero-length read returns at once.
	if n, err := a.Read(nil); n != 0 || err != nil {
		t.Fatalf("Read(nil) = %d, %v", n, err)
	}
}

// Writes never wait for the reader: 4 MiB go into a pipe nobody reads.
func TestWriteNeverBlocks(t *testing.T) {
	a, b := memnet.Pipe()
	defer a.Close()
	defer b.Close()
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for range 64 {
		if _, err := a.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.Buffered(); got != 64*len(chunk) {
		t.Fatalf("Buffered = %d", got)
	}
	n, err := io.Copy(io.Discard, io.LimitReader(b, int64(64*len(chunk))))
	if err != nil || n != int64(64*len(chunk)) {
		t.Fatalf("copy = %d, %v", n, err)
	}
}

func TestCloseSemantics(t *testing.T) {
	a, b := memnet.Pipe()
	mustWrite(t, a, "last words")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	// The peer reads what was written, then EOF.
	mustRead(t, b, "last words")
	if n, err := b.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("after drain: %d, %v; want EOF", n, err)
	}
	// The peer's writes fail: broken pipe.
	if _, err := b.Write([]byte("x")); !errors.Is(err, io.ErrClosedPipe) || !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("write to closed peer: %v", err)
	}
	// The closed end's own operations fail with net.ErrClosed.
	if _, err := a.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read after close: %v", err)
	}
	if _, err := a.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after close: %v", err)
	}
	if err := a.SetDeadline(time.Now()); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("set deadline after close: %v", err)
	}
	if err := a.Close(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCloseWakesBlockedRead(t *testing.T) {
	a, b := memnet.Pipe()
	defer b.Close()
	errc := make(chan error, 1)
	go func() {
		_, err := a.Read(make([]byte, 1))
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond)
	a.Close()
	if err := <-errc; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("blocked read after own close: %v", err)
	}

	c, d := memnet.Pipe()
	defer c.Close()
	go func() {
		_, err := c.Read(make([]byte, 1))
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond)
	d.Close()
	if err := <-errc; err != io.EOF {
		t.Fatalf("blocked read after peer close: %v", err)
	}
}

// With real time: a deadline interrupts a blocked Read, a past deadline
// interrupts it at once, and clearing it lets Read block again.
func TestReadDeadlineRealTime(t *testing.T) {
	a, b := memnet.Pipe()
	defer a.Close()
	defer b.Close()
	dl := time.Now().Add(20 * time.Millisecond)
	a.SetReadDeadline(dl)
	_, err := a.Read(make([]byte, 1))
	if !isTimeout(err) {
		t.Fatalf("read past deadline: %v", err)
	}
	// Compared with the deadline itself: a clock read after setting it
	// could be late and make a correct timeout look early.
	if now := time.Now(); now.Before(dl) {
		t.Fatalf("timed out %v before the deadline", dl.Sub(now))
	}
	// Still expired until the deadline moves.
	if _, err := a.Read(make([]byte, 1)); !isTimeout(err) {
		t.Fatalf("second read: %v", err)
	}
	a.SetReadDeadline(time.Time{})
	errc := make(chan error, 1)
	go func() {
		_, err := a.Read(make([]byte, 1))
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond)
	a.SetReadDeadline(time.Unix(1, 0)) // the past: interrupts at once
	if err := <-errc; !isTimeout(err) {
		t.Fatalf("read interrupted by past deadline: %v", err)
	}
	a.SetReadDeadline(time.Time{})
	mustWrite(t, b, "ok")
	mustRead(t, a, "ok")
}

func TestConcurrentWriters(t *testing.T) {
	a, b := memnet.Pipe()
	defer a.Close()
	defer b.Close()
	const writers, each = 8, 1000
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				if _, err := a.Write([]byte("abcd")); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	total := 0
	buf := make([]byte, 1000)
	for total < writers*each*4 {
		n, err := b.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	wg.Wait()
	if total != writers*each*4 {
		t.Fatalf("read %d bytes", total)
	}
}

// Inside a bubble: a blocked Read is durably blocked (synctest.Wait
// returns), and deadlines follow the fake clock exactly.
func TestSynctestReadDeadlineExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := memnet.Pipe()
		defer a.Close()
		defer b.Close()
		start := time.Now()
		a.SetReadDeadline(start.Add(5 * time.Second))
		type result struct {
			err error
			at  time.Duration
		}
		done := make(chan result, 1)
		go func() {
			_, err := a.Read(make([]byte, 1))
			done <- result{err, time.Since(start)}
		}()
		synctest.Wait() // the reader is durably blocked
		select {
		case r := <-done:
			t.Fatalf("read returned early: %v", r.err)
		default:
		}
		// Move the deadline further while the Read is blocked.
		time.Sleep(2 * time.Second)
		a.SetReadDeadline(start.Add(7 * time.Second))
		r := <-done
		if !isTimeout(r.err) || r.at != 7*time.Second {
			t.Fatalf("read ended at %v with %v; want timeout at exactly 7s", r.at, r.err)
		}

		// Clearing the deadline: only data ends the Read.
		a.SetReadDeadline(time.Time{})
		go func() {
			n, err := a.Read(make([]byte, 4))
			if err != nil || n != 4 {
				done <- result{err, 0}
				return
			}
			done <- result{nil, time.Since(start)}
		}()
		time.Sleep(time.Hour)
		mustWrite(t, b, "data")
		r = <-done
		if r.err != nil || r.at != 7*time.Second+time.Hour {
			t.Fatalf("read = %v at %v", r.err, r.at)
		}
	})
}

func TestSynctestWriteDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := memnet.Pipe()
		defer a.Close()
		defer b.Close()
		a.SetWriteDeadline(time.Now().Add(time.Second))
		mustWrite(t, a, "before")
		time.Sleep(time.Second)
		if _, err := a.Write([]byte("after")); !isTimeout(err) {
			t.Fatalf("write at the deadline: %v", err)
		}
		a.SetWriteDeadline(time.Time{})
		mustWrite(t, a, "again")
		mustRead(t, b, "beforeagain")
	})
}

// A deadline timer left armed by a closed Conn fires nothing: Close stops
// it, so the bubble ends without pending work.
func TestSynctestCloseStopsTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := memnet.Pipe()
		a.SetReadDeadline(time.Now().Add(time.Minute))
		a.Close()
		b.Close()
		time.Sleep(2 * time.Minute)
	})
}

func TestListener(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := memnet.Listen("fake:4222")
		if l.Addr().String() != "fake:4222" {
			t.Fatalf("Addr = %v", l.Addr())
		}
		accepted := make(chan net.Conn)
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					if !errors.Is(err, net.ErrClosed) {
						t.Errorf("Accept: %v", err)
					}
					close(accepted)
					return
				}
				accepted <- c
			}
		}()
		c, err := l.Dial(context.Background(), "tcp", "ignored:1")
		if err != nil {
			t.Fatal(err)
		}
		s := <-accepted
		mustWrite(t, c, "PING\r\n")
		mustRead(t, s, "PING\r\n")
		mustWrite(t, s, "PONG\r\n")
		mustRead(t, c, "PONG\r\n")
		if c.RemoteAddr().String() != "fake:4222" || s.LocalAddr().String() != "fake:4222" {
			t.Fatalf("addrs %v %v", c.RemoteAddr(), s.LocalAddr())
		}
		if l.Dials() != 1 {
			t.Fatalf("Dials = %d", l.Dials())
		}
		c.Close()
		s.Close()

		// A canceled context refuses the dial.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := l.Dial(ctx, "tcp", ""); !errors.Is(err, context.Canceled) {
			t.Fatalf("dial with canceled ctx: %v", err)
		}

		// AcceptContext gives up with its context.
		ctx, cancel = context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		if _, err := l.AcceptContext(ctx); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second {
			t.Fatalf("AcceptContext = %v after %v", err, time.Since(start))
		}

		l.Close()
		if _, ok := <-accepted; ok {
			t.Fatal("accept loop did not end")
		}
		if _, err := l.Dial(context.Background(), "tcp", ""); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("dial after close: %v", err)
		}
		if err := l.Close(); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("second close: %v", err)
		}
	})
}

// Close closes connections dialed but never accepted.
func TestListenerCloseClosesQueued(t *testing.T) {
	l := memnet.Listen("x")
	c, err := l.Dial(context.Background(), "tcp", "")
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read from an unaccepted connection after Close: %v", err)
	}
	c.Close()
}

func TestDialer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var servers []*memnet.Conn
		refuse := errors.New("refused")
		dial := memnet.Dialer("srv:1", func(s *memnet.Conn) error {
			if len(servers) == 1 {
				return refuse
			}
			servers = append(servers, s)
			return nil
		})
		c, err := dial(context.Background(), "tcp", "srv:1")
		if err != nil {
			t.Fatal(err)
		}
		mustWrite(t, c, "hi")
		mustRead(t, servers[0], "hi")
		if _, err := dial(context.Background(), "tcp", "srv:1"); !errors.Is(err, refuse) {
			t.Fatalf("refused dial: %v", err)
		}
		c.Close()
		servers[0].Close()
	})
}
