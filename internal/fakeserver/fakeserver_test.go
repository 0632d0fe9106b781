package fakeserver_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/memnet"
	"github.com/natsio/natsio/proto"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// rawClient is a minimal hand-written client for the self-test.
type rawClient struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, s *fakeserver.Server) *rawClient {
	t.Helper()
	c, err := net.DialTimeout("tcp", s.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawClient{t: t, c: c, r: bufio.NewReader(c)}
}

func (r *rawClient) write(s string) {
	r.t.Helper()
	if _, err := r.c.Write([]byte(s)); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rawClient) line() string {
	r.t.Helper()
	l, err := r.r.ReadString('\n')
	if err != nil {
		r.t.Fatalf("read: %v (got %q)", err, l)
	}
	return l
}

func TestHandshakeAndRecording(t *testing.T) {
	s := fakeserver.New(t)
	rc := dial(t, s)
	c, err := s.Accept(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.Index() != 1 || s.Accepted() != 1 {
		t.Fatalf("index %d accepted %d", c.Index(), s.Accepted())
	}
	done := make(chan []byte, 1)
	go func() {
		js, err := c.Handshake(ctxT(t), nil)
		if err != nil {
			t.Error(err)
		}
		done <- js
	}()
	if l := rc.line(); !strings.HasPrefix(l, "INFO {") || !strings.Contains(l, `"max_payload":1048576`) {
		t.Fatalf("info: %q", l)
	}
	rc.write("CONNECT {\"verbose\":false}\r\nPING\r\n")
	if l := rc.line(); l != "PONG\r\n" {
		t.Fatalf("want PONG, got %q", l)
	}
	if js := <-done; string(js) != `{"verbose":false}` {
		t.Fatalf("connect json %q", js)
	}
	// Split frames across writes; the recording is whole.
	rc.write("SUB foo q 1\r\nPUB foo re")
	rc.write("ply 5\r\nhel")
	rc.write("lo\r\nHPUB h 12 14\r\nNATS/1.0\r\n\r\nhi\r\nUNSUB 1 3\r\nPING\r\n")
	if l := rc.line(); l != "PONG\r\n" {
		t.Fatalf("want PONG, got %q", l)
	}
	sub, err := c.Expect(ctxT(t), proto.KindSub)
	if err != nil || string(sub.Subject) != "foo" || string(sub.Queue) != "q" || sub.SID != 1 {
		t.Fatalf("sub %+v %v", sub, err)
	}
	pub, err := c.Next(ctxT(t))
	if err != nil || pub.Kind != proto.KindPub || string(pub.Reply) != "reply" || string(pub.Payload) != "hello" {
		t.Fatalf("pub %+v %v", pub, err)
	}
	hp, err := c.Next(ctxT(t))
	if err != nil || hp.Kind != proto.KindHPub || string(hp.Header) != "NATS/1.0\r\n\r\n" || string(hp.Payload) != "hi" {
		t.Fatalf("hpub %+v %v", hp, err)
	}
	un, err := c.Next(ctxT(t))
	if err != nil || un.Kind != proto.KindUnsub || un.SID != 1 || un.Max != 3 {
		t.Fatalf("unsub %+v %v", un, err)
	}
	if n := len(c.Pubs()); n != 2 {
		t.Fatalf("pubs %d", n)
	}
	if c.Count(proto.KindPing) != 2 {
		t.Fatalf("pings %d", c.Count(proto.KindPing))
	}
	if err := c.ParseErr(); err != nil || len(c.Violations()) != 0 {
		t.Fatalf("parse error %v violations %v", err, c.Violations())
	}
	// Orderly close by the client: not truncated, Next reports the end.
	rc.c.Close()
	<-c.Done()
	if c.Truncated() {
		t.Fatal("truncated after a whole frame")
	}
	if _, err := c.Expect(ctxT(t), proto.KindPub); err == nil {
		t.Fatal("Next after close: no error")
	}
}

func TestServeBasicAnswersEarlierPing(t *testing.T) {
	s := fakeserver.New(t)
	rc := dial(t, s)
	c, _ := s.Accept(ctxT(t))
	rc.write("CONNECT {}\r\nPING\r\n")
	if _, err := c.ExpectConnect(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	// The PING may or may not be recorded yet; either way exactly one
	// PONG comes.
	c.ServeBasic()
	rc.write("PING\r\n")
	if l := rc.line(); l != "PONG\r\n" {
		t.Fatalf("got %q", l)
	}
	if l := rc.line(); l != "PONG\r\n" {
		t.Fatalf("got %q", l)
	}
	rc.write("PUB x 1\r\ny\r\n")
	if _, err := c.Expect(ctxT(t), proto.KindPub); err != nil {
		t.Fatal(err)
	}
	// No third PONG: the next line after another PING is its PONG, and
	// nothing else is buffered.
	rc.write("PING\r\n")
	if l := rc.line(); l != "PONG\r\n" || rc.r.Buffered() != 0 {
		t.Fatalf("got %q, %d more bytes", l, rc.r.Buffered())
	}
}

func TestParseErrorRecordedAndClosed(t *testing.T) {
	s := fakeserver.New(t)
	rc := dial(t, s)
	c, _ := s.Accept(ctxT(t))
	rc.write("CONNECT {}\r\nPUB foo 3\r\nabcXX\r\n")
	<-c.Done()
	if err := c.ParseErr(); !errors.Is(err, proto.ErrMissingCRLF) {
		t.Fatalf("parse error %v", err)
	}
	if errs := s.ParseErrors(); len(errs) != 1 {
		t.Fatalf("server parse errors %v", errs)
	}
	// The fake closed the connection, as a server would.
	if _, err := rc.r.ReadByte(); err == nil {
		t.Fatal("connection still open")
	}
	if _, err := c.ExpectConnect(ctxT(t)); err != nil {
		t.Fatalf("ops before the error are kept: %v", err)
	}
	if _, err := c.Next(ctxT(t)); !errors.Is(err, proto.ErrMissingCRLF) {
		t.Fatalf("Next after parse error: %v", err)
	}
}

func TestTruncatedIsNotParseError(t *testing.T) {
	s := fakeserver.New(t)
	rc := dial(t, s)
	c, _ := s.Accept(ctxT(t))
	rc.write("CONNECT {}\r\nPUB foo 10\r\nabc")
	if _, err := c.ExpectConnect(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	rc.c.Close()
	<-c.Done()
	if !c.Truncated() || c.ParseErr() != nil {
		t.Fatalf("truncated %v parse error %v", c.Truncated(), c.ParseErr())
	}
}

func TestMaxPayloadFollowsInfo(t *testing.T) {
	s := fakeserver.New(t)
	rc := dial(t, s)
	c, _ := s.Accept(ctxT(t))
	if err := c.SendInfo(fakeserver.DefaultInfo().With("max_payload", 4)); err != nil {
		t.Fatal(err)
	}
	rc.line()
	rc.write("CONNECT {}\r\nPUB a 4\r\nabcd\r\nPUB a 5\r\nabcde\r\n")
	<-c.Done()
	if err := c.ParseErr(); !errors.Is(err, proto.ErrPayloadTooLarge) {
		t.Fatalf("parse error %v", err)
	}
	if n := len(c.Pubs()); n != 1 {
		t.Fatalf("pubs %d", n)
	}
}

func TestViolations(t *testing.T) {
	s := fakeserver.New(t)
	rc := dial(t, s)
	c, _ := s.Accept(ctxT(t))
	rc.write("CONNECT {bad\r\nPUB a..b 0\r\n\r\nSUB a.>.b 1\r\nHPUB h 12 12\r\nNATS/1.1\r\n\r\n\r\nPUB ok 0\r\n\r\n")
	if _, err := c.Expect(ctxT(t), proto.KindPub); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := c.Next(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	if v := c.Violations(); len(v) != 4 || len(s.Violations()) != 4 {
		t.Fatalf("violations %v", v)
	}
	if c.ParseErr() != nil {
		t.Fatal(c.ParseErr())
	}
}

func TestSilentByDefault(t *testing.T) {
	s := fakeserver.New(t)
	rc := dial(t, s)
	if _, err := s.Client(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	// Waiting for a timer here is the point: nothing may arrive.
	_ = rc.c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if b, err := rc.r.ReadByte(); err == nil {
		t.Fatalf("silent server sent %q", b)
	}
}

func TestDiscard(t *testing.T) {
	s := fakeserver.New(t)
	rc := dial(t, s)
	c, _ := s.Accept(ctxT(t))
	c.Discard()
	rc.write("\x16\x03\x01 not nats")
	rc.c.Close()
	<-c.Done()
	if c.ParseErr() != nil || c.Discarded() != 12 || len(c.Ops()) != 0 {
		t.Fatalf("parse error %v discarded %d ops %d", c.ParseErr(), c.Discarded(), len(c.Ops()))
	}
}

func TestHandlerAndCloseWaits(t *testing.T) {
	returned := make(chan int, 4)
	s := fakeserver.New(t, fakeserver.WithHandler(func(c *fakeserver.Client) {
		defer func() { returned <- c.Index() }()
		// Blocks until the connection closes.
		for {
			if _, err := c.Next(context.Background()); err != nil {
				return
			}
		}
	}))
	dial(t, s)
	dial(t, s)
	if _, err := s.Client(ctxT(t), 2); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if len(returned) != 2 {
		t.Fatalf("%d handlers returned before Close did", len(returned))
	}
	if _, err := s.Accept(ctxT(t)); !errors.Is(err, fakeserver.ErrClosed) {
		t.Fatalf("accept after close: %v", err)
	}
	s.Close() // idempotent
}

func TestBasicHandler(t *testing.T) {
	s := fakeserver.New(t, fakeserver.WithHandler(fakeserver.Basic(fakeserver.DefaultInfo().With("server_name", "b"))))
	rc := dial(t, s)
	if l := rc.line(); !strings.Contains(l, `"server_name":"b"`) {
		t.Fatalf("info %q", l)
	}
	rc.write("CONNECT {}\r\nPING\r\n")
	if l := rc.line(); l != "PONG\r\n" {
		t.Fatalf("got %q", l)
	}
	c, _ := s.Client(ctxT(t), 1)
	if err := c.SendMsg("foo", 1, "r", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if l := rc.line(); l != "MSG foo 1 r 1\r\n" {
		t.Fatalf("got %q", l)
	}
}

// TestServeOverMemnet: the same server over an in-memory listener, inside
// a testing/synctest bubble: the client's bytes are recorded, the
// handshake completes, and Close ends the connections and every goroutine
// of the server (the bubble would not end otherwise).
func TestServeOverMemnet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := memnet.Listen("fake:4222")
		s := fakeserver.Serve(t, l, fakeserver.WithHandler(fakeserver.Basic(nil)))
		if s.Addr() != "fake:4222" || s.URL() != "nats://fake:4222" {
			t.Fatalf("addr %s url %s", s.Addr(), s.URL())
		}
		nc, err := l.Dial(context.Background(), "tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(nc)
		if l, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(l, "INFO {") {
			t.Fatalf("info %q %v", l, err)
		}
		start := time.Now()
		if _, err := nc.Write([]byte("CONNECT {}\r\nPING\r\nSUB a 1\r\n")); err != nil {
			t.Fatal(err)
		}
		if l, err := r.ReadString('\n'); err != nil || l != "PONG\r\n" {
			t.Fatalf("got %q %v", l, err)
		}
		c, err := s.Client(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if n := c.Count(proto.KindSub); n != 1 || time.Since(start) != 0 {
			t.Fatalf("%d SUBs recorded after %v of fake time", n, time.Since(start))
		}
		s.Close()
		if _, err := r.ReadString('\n'); err == nil {
			t.Fatal("connection still open after Close")
		}
		if _, err := l.Dial(context.Background(), "tcp", s.Addr()); err == nil {
			t.Fatal("the listener still accepts after Close")
		}
	})
}

// TestListenerClosedByTheTest: closing the listener refuses new
// connections and keeps the ones accepted.
func TestListenerClosedByTheTest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := memnet.Listen("fake:4222")
		s := fakeserver.Serve(t, l)
		nc, err := l.Dial(context.Background(), "tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.Accept(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		_ = l.Close()
		if _, err := l.Dial(context.Background(), "tcp", s.Addr()); err == nil {
			t.Fatal("dial after the listener closed")
		}
		if err := c.SendPing(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 6)
		if _, err := io.ReadFull(nc, buf); err != nil || string(buf) != "PING\r\n" {
			t.Fatalf("got %q %v", buf, err)
		}
		synctest.Wait()
		if s.Accepted() != 1 {
			t.Fatalf("%d accepted", s.Accepted())
		}
	})
}
