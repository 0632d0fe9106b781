package conn_test

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/natstest"
)

// requestLoop makes n requests with a ctx that cannot be canceled and
// checks that each gets its own reply (the echo of its payload).
func requestLoop(t *testing.T, nc *conn.Conn, subject string, n int) {
	t.Helper()
	for i := range n {
		want := strconv.Itoa(i)
		m, err := nc.Request(context.Background(), subject, []byte(want))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if string(m.Data) != want {
			t.Fatalf("request %d: reply %q, want %q", i, m.Data, want)
		}
	}
}

// A connection that only makes requests, one at a time, never starts its
// reader goroutine: each requester reads its own reply, and every reply
// reaches its request.
func TestReadModeRequesterReadsOwnReplies(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	echoResponder(t, s.URL(), "rm.echo")
	nc := connect(t, s.URL())
	if mode := conn.ReadMode(nc); mode != "idle" {
		t.Fatalf("read mode after Connect %q, want idle", mode)
	}
	requestLoop(t, nc, "rm.echo", 2000)
	if mode := conn.ReadMode(nc); mode != "idle" {
		t.Fatalf("read mode after a request loop %q, want idle", mode)
	}
	st := nc.Stats()
	if st.Requests != 2000 || st.InMsgs != 2000 || st.RequestsPending != 0 {
		t.Fatalf("stats %+v: want 2000 requests and messages, none pending", st)
	}
}

// A subscription made while a requester reads the socket starts the
// reader goroutine: the requester hands it the socket before it would
// dispatch any of the subscription's messages, so the subscription's
// function never runs on the requester's goroutine, every message
// arrives, the held request gets its reply, and later requests go
// through the reader.
func TestReadModeSubscriptionMidRequest(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	rc := connect(t, s.URL())
	got := make(chan struct{})
	release := make(chan struct{})
	if _, err := rc.SubscribeFunc("rm.svc", func(m *conn.Msg) {
		if string(m.Data) == "slow" {
			got <- struct{}{}
			<-release
		}
		m.Respond(m.Data)
	}); err != nil {
		t.Fatal(err)
	}
	if err := rc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	nc := connect(t, s.URL())
	requestLoop(t, nc, "rm.svc", 200)

	type result struct {
		m   *conn.Msg
		err error
	}
	held := make(chan result, 1)
	go func() {
		m, err := nc.Request(context.Background(), "rm.svc", []byte("slow"))
		held <- result{m, err}
	}()
	<-got // the request was sent: its requester reads the socket
	if mode := conn.ReadMode(nc); mode != "held" {
		t.Fatalf("read mode while the request waits %q, want held", mode)
	}
	testutil.Eventually(t, "the requester to wait in its read", holderInRead)

	const n = 50
	var onReader, onOther atomic.Int32
	seen := make(chan struct{}, n)
	subs := s.Server().NumSubscriptions()
	if _, err := nc.SubscribeInlineUnsafe("rm.events", func(m *conn.Msg) {
		buf := make([]byte, 64<<10)
		stack := string(buf[:runtime.Stack(buf, false)])
		if strings.Contains(stack, "readLoop") && !strings.Contains(stack, "requestMsg") {
			onReader.Add(1)
		} else {
			onOther.Add(1)
		}
		seen <- struct{}{}
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("rm.nudge", nil); err != nil { // writes the SUB
		t.Fatal(err)
	}
	testutil.Eventually(t, "the server to see the subscription", func() bool {
		return s.Server().NumSubscriptions() > subs
	})
	for i := range n {
		if err := rc.Publish("rm.events", []byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := rc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	for i := range n {
		select {
		case <-seen:
		case <-ctx.Done():
			t.Fatalf("%d of %d messages of the new subscription arrived", i, n)
		}
	}
	if o := onOther.Load(); o != 0 || onReader.Load() != n {
		t.Fatalf("%d messages handled on the reader goroutine, %d elsewhere; want all %d on the reader", onReader.Load(), o, n)
	}
	close(release)
	r := <-held
	if r.err != nil || string(r.m.Data) != "slow" {
		t.Fatalf("held request: %v %q", r.err, r.m.Data)
	}
	if mode := conn.ReadMode(nc); mode != "background" {
		t.Fatalf("read mode after the subscription %q, want background", mode)
	}
	requestLoop(t, nc, "rm.svc", 200)
}

// holderInRead reports whether a goroutine holding a socket (readHeld)
// waits in its read.
func holderInRead() bool {
	buf := make([]byte, 1<<20)
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "(*Conn).readHeld") && strings.Contains(g, "(*reader).fill") {
			return true
		}
	}
	return false
}

// lineCounter counts a protocol line in a stream of chunks, also when a
// chunk boundary cuts it.
type lineCounter struct {
	mu   sync.Mutex
	line []byte
	tail []byte
	n    int
}

func (c *lineCounter) scan(b []byte) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	buf := append(c.tail, b...)
	c.n += bytes.Count(buf, c.line)
	// Keep what could start a line cut by the next chunk.
	keep := min(len(buf), len(c.line)-1)
	if i := bytes.LastIndex(buf, c.line); i >= 0 && len(buf)-(i+len(c.line)) < keep {
		keep = len(buf) - (i + len(c.line))
	}
	c.tail = append(c.tail[:0], buf[len(buf)-keep:]...)
	return b
}

func (c *lineCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// A connection without its reader goroutine still answers the server's
// PINGs while it is idle: the pinger reads the socket at its tick, and
// the PONG goes out. Nothing else starts the reader meanwhile.
func TestReadModeServerPingAnsweredWhileIdle(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false), natstest.PingInterval(20*time.Millisecond, 1000))
	echoResponder(t, s.URL(), "rm.echo")
	p := testutil.Proxy(t, s.URL())
	pongs := &lineCounter{line: []byte("PONG\r\n")}
	p.Corrupt(faultproxy.Up, pongs.scan)
	nc := connect(t, p.URL(), conn.PingInterval(30*time.Millisecond))
	requestLoop(t, nc, "rm.echo", 100)
	before := pongs.count()
	testutil.Eventually(t, "PONGs to the server's PINGs after the requests", func() bool {
		return pongs.count() >= before+3
	})
	if mode := conn.ReadMode(nc); mode != "idle" && mode != "held" {
		t.Fatalf("read mode %q: the server's PINGs started the reader goroutine", mode)
	}
	if !nc.IsConnected() {
		t.Fatal("connection lost")
	}
	requestLoop(t, nc, "rm.echo", 100)
}

// A server that goes away while a connection without its reader goroutine
// is idle is noticed (EventDisconnected, at the pinger's next read at the
// latest); the connection reconnects, and its new link is read by the
// reader goroutine.
func TestReadModeServerKilledWhileIdle(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	echoResponder(t, s.URL(), "rm.echo")
	var ev testutil.Events
	nc := connect(t, s.URL(), ev.Opt(), conn.PingInterval(50*time.Millisecond), conn.ReconnectWait(10*time.Millisecond))
	requestLoop(t, nc, "rm.echo", 100)
	if mode := conn.ReadMode(nc); mode != "idle" && mode != "held" {
		t.Fatalf("read mode before the kill %q, want idle", mode)
	}
	s.Shutdown()
	testutil.Eventually(t, "EventDisconnected", func() bool { return ev.Has(conn.EventDisconnected) })
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "EventReconnected", func() bool { return ev.Has(conn.EventReconnected) })
	if mode := conn.ReadMode(nc); mode != "background" {
		t.Fatalf("read mode after the reconnect %q, want background", mode)
	}
	echoResponder(t, s.URL(), "rm.echo")
	requestLoop(t, nc, "rm.echo", 100)
}
