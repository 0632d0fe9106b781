package conn_test

// Fault scenarios against a real server, through internal/faultproxy where
// the network must misbehave. Scenario IDs refer to the fault table in
// RELIABILITY.md.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
)

func coreServer(t *testing.T) *natstest.Server {
	return natstest.NewServer(t, natstest.JetStream(false))
}

// goroutinesInConn counts goroutines with a frame in package conn.
func goroutinesInConn() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "natsio/natsio/conn.") {
			n++
		}
	}
	return n
}

// recvErr waits for one error from ch, failing after d.
func recvErr(t *testing.T, ch <-chan error, d time.Duration, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
		return nil
	}
}

// ---- F06: network stall while publishing ----

func TestStallDetectedWhilePublishing(t *testing.T) {
	s := coreServer(t)
	p := testutil.Proxy(t, s.URL())
	ev := &testutil.Events{}
	nc := connect(t, p.URL(), conn.PingInterval(100*time.Millisecond), conn.MaxPingsOutstanding(2),
		conn.ConnectTimeout(300*time.Millisecond), testutil.FastReconnect(), ev.Opt())

	// A paced publisher (about 10k msgs/s) keeps writing throughout the
	// stall without building a backlog the reconnected link could not
	// clear within the ping bound.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var published atomic.Int64
	wg.Go(func() {
		payload := make([]byte, 128)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			for range 10 {
				if nc.Publish("f06", payload) == nil {
					published.Add(1)
				}
			}
		}
	})
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}()
	eventually(t, "publishing", func() bool { return published.Load() > 100 })

	stalledAt := time.Now()
	p.Stall(faultproxy.Up, true)
	p.Stall(faultproxy.Down, true)
	atStall := published.Load()
	eventually(t, "stale connection detected", func() bool { return ev.Count(conn.EventDisconnected) > 0 })
	d, at, _ := ev.First(conn.EventDisconnected)
	if !errors.Is(d.Err, conn.ErrStaleConnection) {
		t.Fatalf("disconnected with %v, want ErrStaleConnection", d.Err)
	}
	// Bound: interval × (maxOut+1) = 300ms, plus generous slack for -race.
	if lat := at.Sub(stalledAt); lat > 3*time.Second {
		t.Fatalf("stall detected after %v, bound is 300ms", lat)
	} else {
		t.Logf("stall detected after %v while publishing (bound 300ms); %d publishes accepted since the stall", lat, published.Load()-atStall)
	}
	if ev.Count(conn.EventReconnected) != 0 {
		t.Fatal("reconnected through a stalled link")
	}

	p.Stall(faultproxy.Up, false)
	p.Stall(faultproxy.Down, false)
	eventually(t, "reconnect after the stall", func() bool { return ev.Count(conn.EventReconnected) > 0 })
	close(stop)
	wg.Wait()
	// Under heavy load a 300ms ping bound may trip again; the link must
	// come back and work.
	eventually(t, "a flush after the reconnect", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return nc.Flush(ctx) == nil
	})
	if st := nc.Stats(); st.Reconnects < 1 {
		t.Fatalf("Reconnects = %d", st.Reconnects)
	}
}

// ---- F08: cut mid-frame, partial write ----

// seqPayload is the 1 KiB payload of publish number seq.
func seqPayload(seq int) []byte {
	b := make([]byte, 1024)
	copy(b, fmt.Sprintf("%08d:", seq))
	for i := 9; i < len(b); i++ {
		b[i] = byte('a' + (seq+i)%26)
	}
	return b
}

// checkPubs checks that fs never saw a malformed frame, and that every
// PUB on subject carries the exact payload of its sequence number, none
// twice. It returns the sequence numbers per connection, in order.
func checkPubs(t *testing.T, fs *fake, subject string) [][]int {
	t.Helper()
	if errs := fs.ParseErrors(); len(errs) > 0 {
		t.Fatalf("server saw malformed client bytes: %v", errs)
	}
	if v := fs.Violations(); len(v) > 0 {
		t.Fatalf("server saw invalid ops: %v", v)
	}
	seen := map[int]int{}
	var out [][]int
	for _, c := range fs.Clients() {
		var seqs []int
		for _, op := range c.Pubs() {
			if string(op.Subject) != subject {
				continue
			}
			seq, err := strconv.Atoi(string(op.Payload[:min(8, len(op.Payload))]))
			if err != nil || !bytes.Equal(op.Payload, seqPayload(seq)) {
				t.Fatalf("connection %d: PUB with a damaged payload (%d bytes, %q…)", c.Index(), len(op.Payload), op.Payload[:min(16, len(op.Payload))])
			}
			if prev, dup := seen[seq]; dup {
				t.Fatalf("publish %d sent twice (connections %d and %d)", seq, prev, c.Index())
			}
			seen[seq] = c.Index()
			seqs = append(seqs, seq)
		}
		out = append(out, seqs)
	}
	return out
}

func contiguous(s []int) bool {
	for i := 1; i < len(s); i++ {
		if s[i] != s[i-1]+1 {
			return false
		}
	}
	return true
}

// TestCutMidFrameSendsNoHalfPublish: 1 KiB publishes through a proxy that
// forwards 100-byte pieces; the proxy is cut three times while publishing.
// The strict fake server behind it must never see a half frame spliced into
// a later connection, and every PUB must be whole.
func TestCutMidFrameSendsNoHalfPublish(t *testing.T) {
	fs := startFake(t, withScript(fakeserver.Basic(nil)))
	p := testutil.Proxy(t, fs.Addr())
	p.Chunk(faultproxy.Up, 100)
	ev := &testutil.Events{}
	nc := connect(t, p.URL(), testutil.FastReconnect(), ev.Opt())

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		seq := 0
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := nc.Publish("f08", seqPayload(seq)); err != nil {
				runtime.Gosched()
				continue
			}
			seq++
			if seq%32 == 0 { // bound what is in flight
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_ = nc.Flush(ctx)
				cancel()
			}
		}
	})
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}()
	const cuts = 3
	for k := 1; k <= cuts; k++ {
		c := fs.client(t, k)
		eventually(t, fmt.Sprintf("publishes on connection %d", k), func() bool { return len(c.Pubs()) >= 20 })
		p.CutAll()
		waitClosed(t, c, "the cut")
	}
	last := fs.client(t, cuts+1)
	eventually(t, "publishes after the last reconnect", func() bool { return len(last.Pubs()) >= 20 })
	close(stop)
	wg.Wait()
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	per := checkPubs(t, fs, "f08")
	truncated := 0
	for i, c := range fs.Clients() {
		if c.Truncated() {
			truncated++
		}
		if !contiguous(per[i]) {
			t.Fatalf("connection %d: publishes out of order or with a hole: %v", i+1, per[i])
		}
	}
	if n := ev.Count(conn.EventReconnected); n != cuts {
		t.Fatalf("%d reconnects, want %d", n, cuts)
	}
	t.Logf("%d of %d cuts landed mid-frame", truncated, cuts)
}

// partialWriteConn writes all but the last 3 bytes of the first Write after
// armed is set, then fails: a partial write that always ends mid-frame.
type partialWriteConn struct {
	net.Conn
	armed *atomic.Bool
}

var errInjectedPartialWrite = errors.New("injected partial write")

func (c *partialWriteConn) Write(b []byte) (int, error) {
	if len(b) > 3 && c.armed.CompareAndSwap(true, false) {
		n, _ := c.Conn.Write(b[:len(b)-3])
		return n, errInjectedPartialWrite
	}
	return c.Conn.Write(b)
}

// TestPartialWriteSendsNoHalfPublish: the socket takes only part of a buffer and
// fails. The rest of that frame must never be sent on the next connection;
// publishes buffered after the failure arrive whole and in order.
func TestPartialWriteSendsNoHalfPublish(t *testing.T) {
	fs := startFake(t, withScript(fakeserver.Basic(nil)))
	var armed atomic.Bool
	dial := conn.Dialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &partialWriteConn{Conn: c, armed: &armed}, nil
	})
	ev := &testutil.Events{}
	nc := fs.connect(t, dial, testutil.FastReconnect(), ev.Opt())
	seq := 0
	for ; seq < 10; seq++ {
		nc.Publish("f08", seqPayload(seq))
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	for ; seq < 210; seq++ {
		if err := nc.Publish("f08", seqPayload(seq)); err != nil {
			t.Fatalf("publish %d: %v", seq, err)
		}
	}
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	for ; seq < 220; seq++ {
		nc.Publish("f08", seqPayload(seq))
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	c1 := fs.client(t, 1)
	waitClosed(t, c1, "the failed connection to close")
	if !c1.Truncated() {
		t.Fatal("setup: the partial write did not end mid-frame")
	}
	if d, _, _ := ev.First(conn.EventDisconnected); !errors.Is(d.Err, errInjectedPartialWrite) {
		t.Fatalf("disconnected with %v", d.Err)
	}
	per := checkPubs(t, fs, "f08")
	if len(per) != 2 {
		t.Fatalf("%d connections, want 2", len(per))
	}
	first, second := per[0], per[1]
	if len(first) < 10 || first[0] != 0 || !contiguous(first) {
		t.Fatalf("first connection got %v", first)
	}
	if len(second) == 0 || second[len(second)-1] != 219 || !contiguous(second) || second[0] <= first[len(first)-1] {
		t.Fatalf("second connection got %v (first ended at %d)", second, first[len(first)-1])
	}
	t.Logf("partial write lost publishes %d..%d without an error to the publisher", first[len(first)-1]+1, second[0]-1)
}

// ---- F14: max payload, real server ----

func TestMaxPayloadCountsHeaders(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false), natstest.MaxPayload(1024))
	nc := connect(t, s.URL())
	if nc.MaxPayload() != 1024 {
		t.Fatalf("MaxPayload %d", nc.MaxPayload())
	}
	sub, _ := nc.Subscribe("f14")
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	var h proto.Header
	h.Add("X-Test", "value")
	hl := h.EncodedLen()
	before := nc.Stats().OutBytes
	if err := nc.PublishMsg("f14", "", &h, make([]byte, 1025-hl)); !errors.Is(err, conn.ErrMaxPayload) {
		t.Fatalf("1025 bytes with headers: %v", err)
	}
	if err := nc.Publish("f14", make([]byte, 1025)); !errors.Is(err, conn.ErrMaxPayload) {
		t.Fatalf("1025 bytes: %v", err)
	}
	if _, err := nc.RequestMsg(ctxT(t), "f14", &h, make([]byte, 1025-hl)); !errors.Is(err, conn.ErrMaxPayload) {
		t.Fatalf("oversized request: %v", err)
	}
	if n := nc.Stats().RequestsPending; n != 0 {
		t.Fatalf("oversized request left %d pending", n)
	}
	if got := nc.Stats().OutBytes; got != before {
		t.Fatalf("rejected publishes counted %d bytes", got-before)
	}
	// Exactly max_payload passes, and the connection is healthy.
	if err := nc.PublishMsg("f14", "", &h, make([]byte, 1024-hl)); err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(ctxT(t))
	if err != nil || len(m.Data) != 1024-hl || m.Header.Get("X-Test") != "value" {
		t.Fatalf("max-size message: %v %v", m, err)
	}
	if err := nc.Flush(ctxT(t)); err != nil || !nc.IsConnected() {
		t.Fatalf("connection after rejected publishes: %v", err)
	}
}

// ---- F15: disconnect with requests pending ----

func TestPendingRequestsFailOnReconnect(t *testing.T) {
	s := coreServer(t)
	ev := &testutil.Events{}
	nc := connect(t, s.URL(), testutil.FastReconnect(), ev.Opt())
	if _, err := nc.Subscribe("f15.silent"); err != nil { // never answers
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	const n = 10
	errs := make(chan error, n)
	for range n {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := nc.Request(ctx, "f15.silent", nil)
			errs <- err
		}()
	}
	eventually(t, "requests pending", func() bool { return nc.Stats().RequestsPending == n })
	forced := time.Now()
	nc.ForceReconnect()
	for i := range n {
		err := recvErr(t, errs, 10*time.Second, fmt.Sprintf("request %d", i))
		if !errors.Is(err, conn.ErrDisconnected) || errors.Is(err, conn.ErrClosed) {
			t.Fatalf("request %d: %v, want ErrDisconnected", i, err)
		}
	}
	if d := time.Since(forced); d > 5*time.Second {
		t.Fatalf("requests released after %v, want promptly (deadline 20s)", d)
	}
	if c := nc.Stats().RequestsPending; c != 0 {
		t.Fatalf("%d requests still pending", c)
	}
	// The request path works again after the reconnect.
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	nc.SubscribeFunc("f15.echo", func(m *conn.Msg) { m.Respond(m.Data) })
	if m, err := nc.Request(ctxT(t), "f15.echo", []byte("again")); err != nil || string(m.Data) != "again" {
		t.Fatalf("request after reconnect: %v %v", m, err)
	}
}

// ---- F16: abandoned requests ----

func TestAbandonedRequestsFreed(t *testing.T) {
	s := coreServer(t)
	nc := connect(t, s.URL())
	silent := connect(t, s.URL())
	// A subscriber that never replies keeps no-responders away.
	if _, err := silent.SubscribeFunc("f16", func(*conn.Msg) {}); err != nil {
		t.Fatal(err)
	}
	if err := silent.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	run := func(total int) {
		const workers = 100
		var wg sync.WaitGroup
		var bad atomic.Value
		for w := range workers {
			wg.Go(func() {
				for i := range total / workers {
					d := time.Duration(1+(w+i)%5) * time.Millisecond
					ctx, cancel := context.WithTimeout(context.Background(), d)
					_, err := nc.Request(ctx, "f16", nil)
					cancel()
					if !errors.Is(err, conn.ErrTimeout) {
						bad.Store(fmt.Sprint(err))
					}
				}
			})
		}
		wg.Wait()
		if v := bad.Load(); v != nil {
			t.Fatalf("abandoned request ended with %v, want ErrTimeout", v)
		}
	}
	run(2000) // warm up pools and buffers
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	run(20000)
	if n := nc.Stats().RequestsPending; n != 0 {
		t.Fatalf("%d abandoned requests still in the multiplexer", n)
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap growth after 20k abandoned requests: %d bytes", growth)
	if growth > 1<<20 {
		t.Fatalf("heap grew %d bytes after 20k abandoned requests (> 1 MiB)", growth)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

// ---- F24: drain while disconnected, drain timeout ----

func TestDrainWhileDisconnected(t *testing.T) {
	s := coreServer(t)
	ev := &testutil.Events{}
	nc := connect(t, s.URL(), conn.ReconnectBackoff(time.Hour, time.Hour), conn.ReconnectJitter(0), ev.Opt())
	sub, _ := nc.Subscribe("f24")
	nc.SubscribeFunc("f24.h", func(*conn.Msg) {})
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	iterDone := make(chan error, 1)
	go func() {
		for _, err := range sub.Messages(context.Background()) {
			if err != nil {
				iterDone <- err
				return
			}
		}
		iterDone <- nil
	}()
	s.Shutdown()
	eventually(t, "disconnect", func() bool { return !nc.IsConnected() })

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	err := nc.Drain(ctx)
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Drain took %v with a 2s context", d)
	}
	t.Logf("Drain while disconnected returned %v", err)
	if !nc.IsClosed() {
		t.Fatal("not closed after Drain")
	}
	select {
	case <-nc.Closed():
	default:
		t.Fatal("Closed() channel open after Drain")
	}
	if n := ev.Count(conn.EventClosed); n != 1 {
		t.Fatalf("%d Closed events, want 1", n)
	}
	nc.Close()
	if err := nc.Drain(ctxT(t)); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("Drain after close: %v", err)
	}
	if n := ev.Count(conn.EventClosed); n != 1 {
		t.Fatalf("%d Closed events after Close and Drain again, want 1", n)
	}
	if err := recvErr(t, iterDone, 5*time.Second, "iterator"); err != nil && !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("iterator ended with %v", err)
	}
}

// TestCloseDuringDrain: Close racing a Drain; both return and the Closed
// event fires exactly once.
func TestCloseDuringDrain(t *testing.T) {
	s := coreServer(t)
	ev := &testutil.Events{}
	nc := connect(t, s.URL(), ev.Opt())
	pub := connect(t, s.URL())
	for i := range 5 {
		nc.SubscribeFunc(fmt.Sprintf("f24.c%d", i), func(*conn.Msg) {})
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		pub.Publish(fmt.Sprintf("f24.c%d", i%5), []byte("x"))
	}
	drained := make(chan error, 1)
	closed := make(chan error, 1)
	go func() { drained <- nc.Drain(ctxT(t)) }()
	go func() { closed <- nc.Close() }()
	recvErr(t, closed, 10*time.Second, "Close during Drain")
	err := recvErr(t, drained, 10*time.Second, "Drain during Close")
	t.Logf("Drain returned %v", err)
	if !nc.IsClosed() {
		t.Fatal("not closed")
	}
	if n := ev.Count(conn.EventClosed); n != 1 {
		t.Fatalf("%d Closed events, want 1", n)
	}
}

// TestDrainWhileDisconnectedReportsUnsent: publishes buffered while
// disconnected cannot be flushed by a Drain that does not wait for the
// reconnect; Drain must not report that as a clean success.
func TestDrainWhileDisconnectedReportsUnsent(t *testing.T) {
	s := coreServer(t)
	nc := connect(t, s.URL(), conn.ReconnectBackoff(time.Hour, time.Hour), conn.ReconnectJitter(0))
	s.Shutdown()
	eventually(t, "disconnect", func() bool { return !nc.IsConnected() })
	if err := nc.Publish("f24", []byte("buffered")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := nc.Drain(ctx); err == nil {
		t.Fatal("Drain returned nil after discarding a buffered publish")
	}
}

// TestDrainWedgedHandler: a handler that never returns; Drain with a
// short context must end by its deadline with a timeout error.
func TestDrainWedgedHandler(t *testing.T) {
	s := coreServer(t)
	nc := connect(t, s.URL())
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // runs before nc.Close
	entered := make(chan struct{}, 1)
	if _, err := nc.SubscribeFunc("f24.w", func(*conn.Msg) {
		entered <- struct{}{}
		<-release
	}); err != nil {
		t.Fatal(err)
	}
	nc.Flush(ctxT(t))
	nc.Publish("f24.w", nil)
	select {
	case <-entered:
	case <-ctxT(t).Done():
		t.Fatal("handler never started")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- nc.Drain(ctx) }()
	err := recvErr(t, done, 5*time.Second, "Drain with a 200ms context and a wedged handler")
	if err == nil || !(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, conn.ErrTimeout)) {
		t.Fatalf("Drain returned %v, want a timeout error", err)
	}
}

// ---- F25: MaxReconnects exhausted while calls are blocked ----

func TestMaxReconnectsReleasesEverything(t *testing.T) {
	s := coreServer(t)
	p := testutil.Proxy(t, s.URL())
	baseG := goroutinesInConn()
	ev := &testutil.Events{}
	nc := connect(t, p.URL(), conn.MaxReconnects(2), testutil.FastReconnect(), ev.Opt(),
		conn.RequestTimeout(time.Minute))
	iterSub, _ := nc.Subscribe("f25.iter")
	nextSub, _ := nc.Subscribe("f25.next")
	nc.Subscribe("f25.silent")
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	iterErr := make(chan error, 1)
	go func() {
		for _, err := range iterSub.Messages(context.Background()) {
			if err != nil {
				iterErr <- err
				return
			}
		}
		iterErr <- nil
	}()
	nextErr := make(chan error, 1)
	go func() {
		_, err := nextSub.NextMsg(context.Background())
		nextErr <- err
	}()
	reqErr := make(chan error, 1)
	go func() {
		_, err := nc.Request(context.Background(), "f25.silent", nil)
		reqErr <- err
	}()
	eventually(t, "request pending", func() bool { return nc.Stats().RequestsPending == 1 })
	p.Stall(faultproxy.Down, true) // the next PONG never comes
	flushErr := make(chan error, 1)
	go func() { flushErr <- nc.Flush(context.Background()) }()
	eventually(t, "flush pending", func() bool { return conn.PendingPongs(nc) == 1 })

	s.Shutdown()
	p.CutAll()
	if err := recvErr(t, reqErr, 10*time.Second, "blocked Request"); !errors.Is(err, conn.ErrDisconnected) && !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("Request: %v", err)
	}
	if err := recvErr(t, flushErr, 10*time.Second, "blocked Flush"); !errors.Is(err, conn.ErrDisconnected) && !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("Flush: %v", err)
	}
	select {
	case <-nc.Closed():
	case <-time.After(10 * time.Second):
		t.Fatal("connection not closed after MaxReconnects(2) failures")
	}
	if err := nc.Err(); !errors.Is(err, conn.ErrNoServers) {
		t.Fatalf("closed with %v, want ErrNoServers", err)
	}
	if err := recvErr(t, iterErr, 10*time.Second, "blocked iterator"); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("iterator ended with %v", err)
	}
	if err := recvErr(t, nextErr, 10*time.Second, "blocked NextMsg"); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("NextMsg: %v", err)
	}
	if err := nc.Flush(ctxT(t)); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("Flush after close: %v", err)
	}
	if _, err := nc.Request(ctxT(t), "x", nil); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("Request after close: %v", err)
	}
	eventually(t, "Closed event", func() bool { return ev.Count(conn.EventClosed) == 1 })
	if c, _, _ := ev.First(conn.EventClosed); !errors.Is(c.Err, conn.ErrNoServers) {
		t.Fatalf("Closed event with %v", c.Err)
	}
	eventually(t, "client goroutines to return", func() bool { return goroutinesInConn() <= baseG })
}

// ---- F26: reconnect delay ----

func TestReconnectDelayAttemptNumbers(t *testing.T) {
	s := coreServer(t)
	var mu sync.Mutex
	var attempts []int
	delay := conn.ReconnectDelay(func(a int) time.Duration {
		mu.Lock()
		attempts = append(attempts, a)
		mu.Unlock()
		return 5 * time.Millisecond
	})
	ev := &testutil.Events{}
	nc := connect(t, s.URL(), delay, ev.Opt())
	snapshot := func() []int {
		mu.Lock()
		defer mu.Unlock()
		return append([]int(nil), attempts...)
	}
	s.Shutdown()
	eventually(t, "reconnect attempts", func() bool { return len(snapshot()) >= 6 })
	got := snapshot()
	t.Logf("delay consulted with %v", got)
	if got[0] != 1 {
		t.Fatalf("first attempt number %d, want 1", got[0])
	}
	for i := 1; i < len(got); i++ {
		if got[i] != got[i-1] && got[i] != got[i-1]+1 {
			t.Fatalf("attempt numbers %v do not increase by one", got)
		}
	}
	if got[len(got)-1] < 4 {
		t.Fatalf("attempt numbers %v do not increase", got)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	// A success resets the count.
	mu.Lock()
	attempts = nil
	mu.Unlock()
	nc.ForceReconnect()
	eventually(t, "second reconnect", func() bool { return ev.Count(conn.EventReconnected) == 2 })
	if got := snapshot(); len(got) == 0 || got[0] != 1 {
		t.Fatalf("after a successful reconnect the delay was consulted with %v, want a fresh 1", got)
	}
}

func TestDelayBetweenAttemptsToSameServer(t *testing.T) {
	s := coreServer(t)
	const wait = 30 * time.Millisecond
	const downURL = "nats://down.invalid:4222"
	type dialRec struct {
		addr   string
		at     time.Time
		delays int
	}
	var mu sync.Mutex
	var dials []dialRec
	delays := 0
	var down atomic.Bool
	dialer := conn.Dialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dials = append(dials, dialRec{addr, time.Now(), delays})
		mu.Unlock()
		if down.Load() || addr == "down.invalid:4222" {
			return nil, errors.New("connection refused (test)")
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	})
	delay := conn.ReconnectDelay(func(int) time.Duration {
		mu.Lock()
		delays++
		mu.Unlock()
		return wait
	})
	ev := &testutil.Events{}
	nc := connect(t, s.URL()+","+downURL, conn.DontRandomize(), dialer, delay, ev.Opt())
	mu.Lock()
	dials = nil
	mu.Unlock()
	down.Store(true)
	nc.ForceReconnect()
	perAddr := func() map[string][]dialRec {
		mu.Lock()
		defer mu.Unlock()
		m := map[string][]dialRec{}
		for _, d := range dials {
			m[d.addr] = append(m[d.addr], d)
		}
		return m
	}
	eventually(t, "attempts to both servers", func() bool {
		m := perAddr()
		return len(m) == 2 && len(m[testutil.HostPort(s.URL())]) >= 4 && len(m["down.invalid:4222"]) >= 4
	})
	for addr, ds := range perAddr() {
		for i := 1; i < len(ds); i++ {
			if ds[i].delays == ds[i-1].delays {
				t.Fatalf("%s dialed twice without consulting the delay function", addr)
			}
			if gap := ds[i].at.Sub(ds[i-1].at); gap < wait {
				t.Fatalf("%s dialed again after %v, delay is %v", addr, gap, wait)
			}
		}
	}
	down.Store(false)
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

// ---- F27: reconnect buffer ----

func TestReconnectBufferDisabled(t *testing.T) {
	s := coreServer(t)
	p := testutil.Proxy(t, s.URL())
	ev := &testutil.Events{}
	nc := connect(t, p.URL(), conn.ReconnectBuffer(-1), testutil.FastReconnect(), ev.Opt())
	p.Refuse(true)
	p.CutAll()
	eventually(t, "disconnect", func() bool { return !nc.IsConnected() })
	start := time.Now()
	if err := nc.Publish("f27", []byte("x")); !errors.Is(err, conn.ErrReconnectBuffer) {
		t.Fatalf("publish while disconnected: %v", err)
	}
	if _, err := nc.Request(ctxT(t), "f27", nil); !errors.Is(err, conn.ErrReconnectBuffer) {
		t.Fatalf("request while disconnected: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("failing publishes took %v", d)
	}
	if nc.Stats().RequestsPending != 0 {
		t.Fatal("failed request left pending")
	}
	p.Refuse(false)
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	if err := nc.Publish("f27", []byte("x")); err != nil {
		t.Fatal(err)
	}
}

func TestReconnectBufferLimit(t *testing.T) {
	s := coreServer(t)
	p := testutil.Proxy(t, s.URL())
	watcher := connect(t, s.URL()) // stays connected
	sub, _ := watcher.Subscribe("f27.b")
	if err := watcher.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	ev := &testutil.Events{}
	const limit = 2048
	nc := connect(t, p.URL(), conn.ReconnectBuffer(limit), testutil.FastReconnect(), ev.Opt())
	p.Refuse(true)
	p.CutAll()
	eventually(t, "disconnect", func() bool { return !nc.IsConnected() })
	payload := func(i int) []byte { return []byte(fmt.Sprintf("%03d:%s", i, strings.Repeat("x", 96))) }
	accepted := 0
	for ; accepted < 100; accepted++ {
		err := nc.Publish("f27.b", payload(accepted))
		if err != nil {
			if !errors.Is(err, conn.ErrReconnectBuffer) {
				t.Fatalf("publish %d: %v", accepted, err)
			}
			break
		}
	}
	if accepted == 0 || accepted*100 > limit {
		t.Fatalf("%d publishes of 100 bytes accepted into a %d-byte buffer", accepted, limit)
	}
	for i := range 5 { // beyond the limit: every one fails at once
		if err := nc.Publish("f27.b", payload(100+i)); !errors.Is(err, conn.ErrReconnectBuffer) {
			t.Fatalf("publish beyond the buffer: %v", err)
		}
	}
	p.Refuse(false)
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	if err := nc.Publish("f27.b", []byte("end")); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		m, err := sub.NextMsg(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		if string(m.Data) == "end" {
			if i != accepted {
				t.Fatalf("%d buffered messages delivered, want %d", i, accepted)
			}
			break
		}
		if !bytes.Equal(m.Data, payload(i)) {
			t.Fatalf("message %d: %q", i, m.Data[:8])
		}
	}
}

// ---- F28: flush across a cut ----

func TestFlushAcrossCut(t *testing.T) {
	s := coreServer(t)
	p := testutil.Proxy(t, s.URL())
	ev := &testutil.Events{}
	// No keepalive PINGs: every outstanding PING is a Flush's.
	nc := connect(t, p.URL(), testutil.FastReconnect(), ev.Opt(), conn.PingInterval(time.Hour), conn.MaxPingsOutstanding(2))
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	p.Stall(faultproxy.Down, true)
	const n = 3
	errs := make(chan error, n)
	for range n {
		go func() { errs <- nc.Flush(ctxT(t)) }()
	}
	eventually(t, "flushes pending", func() bool { return conn.PendingPongs(nc) == n })
	p.CutAll()
	for i := range n {
		if err := recvErr(t, errs, 5*time.Second, "pending Flush"); !errors.Is(err, conn.ErrDisconnected) {
			t.Fatalf("flush %d across the cut: %v", i, err)
		}
	}
	p.Stall(faultproxy.Down, false)
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	for i := range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := nc.Flush(ctx)
		cancel()
		if err != nil {
			t.Fatalf("flush %d after reconnect: %v", i, err)
		}
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if err := nc.Flush(ctxT(t)); err != nil {
				t.Errorf("concurrent flush: %v", err)
			}
		})
	}
	wg.Wait()
	eventually(t, "PONG FIFO empty", func() bool { return conn.PendingPongs(nc) == 0 })
	if ev.Count(conn.EventDisconnected) != 1 {
		t.Fatalf("events: %v", ev)
	}
}

// ---- F29: subscriptions restored with the remaining auto-unsubscribe ----

func TestQueueAutoUnsubAcrossRestart(t *testing.T) {
	s := coreServer(t)
	ev := &testutil.Events{}
	nc := connect(t, s.URL(), testutil.FastReconnect(), ev.Opt())
	pubEv := &testutil.Events{}
	pub := connect(t, s.URL(), testutil.FastReconnect(), pubEv.Opt())
	sub, err := nc.QueueSubscribe("f29", "workers")
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.AutoUnsubscribe(10); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		pub.Publish("f29", []byte(strconv.Itoa(i)))
	}
	pub.Flush(ctxT(t))
	eventually(t, "five messages", func() bool { return sub.Delivered() == 5 })

	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "both reconnected", func() bool {
		return ev.Count(conn.EventReconnected) == 1 && pubEv.Count(conn.EventReconnected) == 1
	})
	if err := nc.Flush(ctxT(t)); err != nil { // the restored SUB/UNSUB are processed
		t.Fatal(err)
	}
	// The server holds the subscription in the same queue group with the
	// remaining count.
	cz, err := s.Server().Connz(&server.ConnzOptions{SubscriptionsDetail: true})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ci := range cz.Conns {
		for _, sd := range ci.SubsDetail {
			if sd.Subject == "f29" {
				found = true
				if sd.Queue != "workers" || sd.Max != 5 {
					t.Fatalf("restored subscription: queue %q max %d, want workers and 5", sd.Queue, sd.Max)
				}
			}
		}
	}
	if !found {
		t.Fatal("subscription not restored")
	}
	for i := 5; i < 15; i++ {
		pub.Publish("f29", []byte(strconv.Itoa(i)))
	}
	if err := pub.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for m, err := range sub.Messages(ctxT(t)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(m.Data))
	}
	if want := "0 1 2 3 4 5 6 7 8 9"; strings.Join(got, " ") != want {
		t.Fatalf("delivered %q, want %q", got, want)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if st := nc.Stats(); st.UnknownSID != 0 || st.InMsgs != 10 {
		t.Fatalf("server sent more than the remaining count: InMsgs %d UnknownSID %d", st.InMsgs, st.UnknownSID)
	}
}
