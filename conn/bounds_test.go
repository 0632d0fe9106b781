package conn_test

// Bounds a hostile server (or another tenant publishing through a real
// one) must not be able to get past: memory held for slow subscribers, and
// bytes the client queues in answer to what the server sends. The threat
// model and the list of bounds are in docs/reliability.md.

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/internal/wire"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
)

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestPendingCountsSubjectAndReply: 512 Ki empty messages, each with
// a 4 KB reply subject, to two subscriptions that never read. The pending
// limits count the subject, the reply and a per-message overhead, not only
// the (empty) data, so what the client holds stays within the connection's
// pending limit, and the rest is dropped, counted and reported.
func TestPendingCountsSubjectAndReply(t *testing.T) {
	const (
		subLimit  = 8 << 20
		connLimit = 12 << 20
		replyLen  = 4000
	)
	n := 512 << 10
	if conn.RaceEnabled {
		n = 32 << 10 // still ten times the connection's limit in replies
	}
	fs := startFake(t, withScript(fakeserver.Basic(nil)))
	ev := &testutil.Events{}
	nc := fs.connect(t, ev.Opt(),
		conn.PendingLimits(1<<30, subLimit), conn.ConnectionPendingLimit(connLimit))
	s1, _ := nc.Subscribe("s1")
	s2, _ := nc.Subscribe("s2")
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	c := fs.client(t, 1)

	// 1024 messages per write, alternating between the subscriptions, each
	// reply different (a real flood would not repeat itself).
	const batch = 1024
	var b strings.Builder
	reply := strings.Repeat("r", replyLen-8)
	for i := range batch {
		fmt.Fprintf(&b, "MSG s%d %d %s.%07d 0\r\n\r\n", i%2+1, i%2+1, reply, i)
	}
	frames := []byte(b.String())

	before := liveHeap()
	var peak uint64
	var ms runtime.MemStats
	for i := 0; i < n; i += batch {
		if err := c.Send(frames); err != nil {
			t.Fatal(err)
		}
		if i%(64*batch) == 0 { // a sample of the heap while the flood runs
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
	}
	// The PONG follows every MSG: once Flush returns, all were handled.
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&ms)
	peak = max(peak, ms.HeapInuse)
	after := liveHeap()
	held := int64(after) - int64(before)
	t.Logf("%d messages of %d bytes of reply: heap held %.1f MiB (live, after GC), peak heap in use %.1f MiB (sampled); connection pending limit %d MiB",
		n, replyLen, float64(held)/(1<<20), float64(peak)/(1<<20), connLimit>>20)

	m1, b1 := s1.Pending()
	m2, b2 := s2.Pending()
	if b1 > subLimit || b2 > subLimit || b1+b2 > connLimit {
		t.Fatalf("pending bytes %d + %d, limits %d per subscription and %d for the connection", b1, b2, subLimit, connLimit)
	}
	if min := (replyLen + conn.MsgOverhead) * (m1 + m2); b1+b2 < min {
		t.Fatalf("%d messages pending count %d bytes, want at least %d (reply and overhead)", m1+m2, b1+b2, min)
	}
	// What the queues hold is what the heap holds, within a small factor
	// (slabs, queue slices).
	if held > 2*connLimit {
		t.Fatalf("heap grew by %d bytes holding %d messages, want at most %d (twice the connection's pending limit)", held, m1+m2, 2*connLimit)
	}
	if peak > uint64(before)+8*connLimit {
		t.Fatalf("heap in use peaked at %d bytes (from %d live before), want at most %d more", peak, before, 8*connLimit)
	}
	// Every message is queued or dropped, and the drops are reported.
	st := nc.Stats()
	if got := uint64(m1+m2) + st.Dropped; got != uint64(n) {
		t.Fatalf("queued %d + dropped %d = %d, want %d", m1+m2, st.Dropped, got, n)
	}
	if s1.Dropped() == 0 || s2.Dropped() == 0 || s1.Dropped()+s2.Dropped() != st.Dropped {
		t.Fatalf("dropped %d and %d, Stats().Dropped %d", s1.Dropped(), s2.Dropped(), st.Dropped)
	}
	if s1.SlowEpisodes() == 0 || s2.SlowEpisodes() == 0 {
		t.Fatalf("slow-consumer episodes %d and %d, want at least one each", s1.SlowEpisodes(), s2.SlowEpisodes())
	}
	eventually(t, "a slow-consumer event for each subscription", func() bool {
		var got1, got2 bool
		for _, e := range ev.Of(conn.EventSlowConsumer) {
			got1 = got1 || e.Sub == s1
			got2 = got2 || e.Sub == s2
		}
		return got1 && got2
	})
	// The queued messages are intact.
	m, err := s1.NextMsg(ctxT(t))
	if err != nil || len(m.Reply) != replyLen || len(m.Data) != 0 {
		t.Fatalf("first message: %v, reply of %d bytes", err, len(m.Reply))
	}
	if !nc.IsConnected() || fs.Accepted() != 1 {
		t.Fatal("the connection was lost")
	}
}

// smallSocketDialer dials TCP with a small send buffer, so that what the
// client queues behind a blocked write shows in Buffered instead of
// vanishing into the kernel.
func smallSocketDialer(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	_ = c.(*net.TCPConn).SetWriteBuffer(4096)
	return c, nil
}

// TestPingFloodBounded: a server that sends PINGs and stops reading
// does not make the client queue a PONG for each: one queued PONG answers
// every PING read until it is written, so what the client buffers for the
// server stays bounded however long the flood.
func TestPingFloodBounded(t *testing.T) {
	fs := startFake(t, withScript(func(c *fakeserver.Client) {
		_ = c.Conn().(*net.TCPConn).SetReadBuffer(4096)
		_, _ = c.Handshake(c.Context(), nil)
	}))
	nc := fs.connect(t, conn.Dialer(smallSocketDialer),
		conn.PingInterval(time.Hour), conn.WriteTimeout(time.Hour))
	sub, _ := nc.Subscribe("done")
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	c := fs.client(t, 1)
	c.StopReading()
	// The fake's side closes first: the client's write blocked on it
	// fails, and Close need not wait for the write timeout.
	t.Cleanup(c.Close)

	const pings = 256 << 10
	flood := bytes.Repeat([]byte("PING\r\n"), 4096)
	for i := 0; i < pings; i += 4096 {
		if err := c.Send(flood); err != nil {
			t.Fatal(err)
		}
	}
	// Once this message arrives, every PING before it has been read.
	if err := c.SendMsg("done", 1, "", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.NextMsg(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	buffered := nc.Buffered()
	t.Logf("%d PINGs read, never a byte read back: %d bytes buffered for the server", pings, buffered)
	if buffered > len("PONG\r\n") {
		t.Fatalf("%d bytes buffered after %d PINGs from a server that does not read, want at most one PONG", buffered, pings)
	}
	if !nc.IsConnected() {
		t.Fatal("the connection was lost")
	}
}

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestTraceBomb: a server answers a Trace with a flood of reports:
// small gzip bodies that inflate to 64 KiB each, more reports than any
// topology yields, or one report of a million empty objects (each would
// become a TraceEntry of some 300 bytes). Trace stops at its per-call
// bounds with ErrBadTrace, and what it decoded stays within them.
func TestTraceBomb(t *testing.T) {
	gzHeader := []byte("NATS/1.0\r\nContent-Encoding: gzip\r\n\r\n")
	for _, tc := range []struct {
		name    string
		reports int
		body    string
	}{
		{"inflating reports", 1000, `{"server":{"name":"` + strings.Repeat("a", 64<<10) + `"},"events":[]}`},
		{"many reports", 4 * conn.TraceMaxReports, `{"server":{"name":"n"},"events":[{"type":"in"}]}`},
		{"object bomb", 1, `{"events":[` + strings.Repeat("{},", 1<<20) + `{}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := startFake(t, withScript(fakeserver.Basic(nil)))
			nc := fs.connect(t)
			if err := nc.Flush(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			c := fs.client(t, 1)
			body := gzipped(t, tc.body)
			before := liveHeap()
			type result struct {
				evs []*conn.TraceEvent
				err error
			}
			done := make(chan result, 1)
			go func() {
				evs, err := nc.Trace(ctxT(t), "traced", nil, nil, conn.TraceStall(2*time.Second))
				done <- result{evs, err}
			}()
			sub, err := c.Expect(ctxT(t), proto.KindSub)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Expect(ctxT(t), proto.KindHPub); err != nil {
				t.Fatal(err)
			}
			// All reports in one write: they arrive together, well within
			// the stall time.
			var frames []byte
			for range tc.reports {
				frames = wire.AppendHMsg(frames, string(sub.Subject), sub.SID, "", gzHeader, body)
			}
			if err := c.Send(frames); err != nil {
				t.Fatal(err)
			}
			r := <-done
			held := int64(liveHeap()) - int64(before)
			t.Logf("%d reports of %d bytes (%d inflated): %d decoded, heap held %.1f MiB, err %v",
				tc.reports, len(body), len(tc.body), len(r.evs), float64(held)/(1<<20), r.err)
			if !errors.Is(r.err, conn.ErrBadTrace) {
				t.Fatalf("Trace returned %d reports and %v, want ErrBadTrace", len(r.evs), r.err)
			}
			if len(r.evs) > conn.TraceMaxReports {
				t.Fatalf("%d reports decoded, bound %d", len(r.evs), conn.TraceMaxReports)
			}
			if held > 4*conn.TraceMaxBytes {
				t.Fatalf("the decoded reports hold %d bytes, want at most %d", held, 4*conn.TraceMaxBytes)
			}
			runtime.KeepAlive(r.evs)
		})
	}
}

// TestInterleavedKeptMessagesPinOnlyThemselves: another tenant sends
// 127 empty messages to a.x, then one to b.x, over and over. The victim's
// a.> subscription is full (each of those is dropped) and its b.> one is
// not read yet (each of those is kept). A kept message must hold no more
// memory than the pending limits count for it: not the memory of the
// dropped messages delivered around it. What the heap holds once the b.>
// queue is full stays within 1.25 times the connection's pending limit
// (plus 4 MiB for the chunks being filled and the read buffers).
func TestInterleavedKeptMessagesPinOnlyThemselves(t *testing.T) {
	connLimit := 8 << 20
	if conn.RaceEnabled {
		connLimit = 2 << 20
	}
	const aLimit = 256 << 10
	fs := startFake(t, withScript(fakeserver.Basic(nil)))
	nc := fs.connect(t, conn.PendingLimits(1<<30, 1<<30), conn.ConnectionPendingLimit(connLimit))
	a, _ := nc.Subscribe("a.>")
	b, _ := nc.Subscribe("b.>")
	if err := a.SetPendingLimits(1<<30, aLimit); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	c := fs.client(t, 1)
	var frame []byte
	for range 8 {
		for range 127 {
			frame = append(frame, "MSG a.x 1 0\r\n\r\n"...)
		}
		frame = append(frame, "MSG b.x 2 0\r\n\r\n"...)
	}
	before := liveHeap()
	// Until b.>'s queue is full: the connection's limit less what a.>
	// holds, at its count per empty message.
	perB := len("b.x") + conn.MsgOverhead
	wantB := (connLimit - aLimit) / perB
	for sent := 0; ; sent += 8 {
		if sent%(1<<12) == 0 {
			if err := nc.Flush(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			n, _ := b.Pending()
			if n >= wantB-8 || b.Dropped() > 0 {
				break
			}
			if sent > 4*wantB {
				t.Fatalf("b.> holds %d messages after %d sent", n, sent)
			}
		}
		if err := c.Send(frame); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	held := int64(liveHeap()) - int64(before)
	nb, bb := b.Pending()
	na, ba := a.Pending()
	t.Logf("b.> holds %d messages (%d bytes counted), a.> %d (%d bytes), %d dropped; heap held %.1f MiB (live, after GC); connection pending limit %.1f MiB",
		nb, bb, na, ba, nc.Stats().Dropped, float64(held)/(1<<20), float64(connLimit)/(1<<20))
	if a.Dropped() == 0 {
		t.Fatal("a.> dropped nothing")
	}
	if bound := int64(connLimit)*5/4 + 4<<20; held > bound {
		t.Fatalf("heap grew by %d bytes for %d bytes counted, want at most %d (1.25 × the connection's pending limit + 4 MiB)", held, ba+bb, bound)
	}
	// The kept messages are intact.
	m, err := b.NextMsg(ctxT(t))
	if err != nil || m.Subject != "b.x" || len(m.Data) != 0 {
		t.Fatalf("kept message: %v %v", m, err)
	}
}

// TestMaxPayloadMessageFitsDefaultLimits: a message of exactly the
// server's largest max_payload (64 MiB) is delivered under the default
// subscription pending limits (64 MiB, which it exceeds once its subject
// and the per-message overhead are counted): an empty queue takes one
// message of any size the server delivers.
func TestMaxPayloadMessageFitsDefaultLimits(t *testing.T) {
	const size = 64 << 20
	s := natstest.NewServer(t, natstest.JetStream(false), natstest.MaxPayload(size),
		natstest.Configure(func(o *server.Options) { o.MaxPending, o.WriteDeadline = 512<<20, time.Minute }))
	// Moving 64 MiB through an in-process server may take long in a race
	// build: no write or ping timeout should end the connections first.
	slow := []conn.Option{conn.WriteTimeout(time.Minute), conn.PingInterval(time.Minute)}
	nc := connect(t, s.URL(), slow...)
	pub := connect(t, s.URL(), slow...)
	sub, err := nc.Subscribe("big")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte{'x'}, size)
	data[size-1] = 'y'
	if err := pub.Publish("big", data); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(ctxT(t))
	if err != nil {
		t.Fatalf("max_payload message: %v (dropped %d)", err, sub.Dropped())
	}
	if len(m.Data) != size || m.Data[size-1] != 'y' {
		t.Fatalf("got %d bytes", len(m.Data))
	}
	// The limit holds for a queue that is not empty: with one such
	// message queued, the next is dropped.
	small := []byte("small")
	for range 2 {
		if err := pub.Publish("big", data); err != nil {
			t.Fatal(err)
		}
		if err := pub.Flush(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		data = small
	}
	if n, _ := sub.Pending(); n != 1 || sub.Dropped() != 1 {
		t.Fatalf("%d queued, %d dropped; want the large one queued and the next dropped", n, sub.Dropped())
	}
}
