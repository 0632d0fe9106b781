package extra_test

// Fault tests through internal/faultproxy: the network misbehaves between
// the client and a real server.

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

// proxied starts a server and a proxy in front of it, and returns a
// direct JetStream view, a proxied connection (fast reconnects) and the
// proxy.
func proxied(t *testing.T) (direct *jsapi.JS, nc *conn.Conn, px *faultproxy.Proxy) {
	t.Helper()
	s := natstest.NewServer(t)
	_, hp, _ := strings.Cut(s.URL(), "://")
	px, err := faultproxy.New(hp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	nc = connect(t, px.URL(), conn.ReconnectBackoff(10*time.Millisecond, 50*time.Millisecond), conn.ReconnectJitter(5*time.Millisecond))
	return newJS(t, connect(t, s.URL())), nc, px
}

// A connection cut while an atomic batch is open: the publisher refuses to
// go on, the server stores none of the staged messages, and a new batch on
// the reconnected connection works.
func TestCutDuringAtomicBatchStoresNothing(t *testing.T) {
	direct, nc, px := proxied(t)
	st := atomicStream(t, direct, "CUT")
	js := newJS(t, nc)
	ctx := ctxT(t)
	lost := make(chan error, 1)
	nc.OnDisconnect(func(reason error) {
		select {
		case lost <- reason:
		default:
		}
	})

	b, _ := extra.NewBatchPublisher(js, extra.AckEvery(2))
	for range 4 { // acknowledged at 1, 2 and 4: the server holds them
		if err := b.Add(ctx, "cut.a", []byte("staged")); err != nil {
			t.Fatal(err)
		}
	}
	px.CutAll()
	select {
	case <-lost:
	case <-ctx.Done():
		t.Fatal("disconnect not noticed")
	}
	err := b.Add(ctx, "cut.a", []byte("after"))
	if !errors.Is(err, conn.ErrDisconnected) {
		t.Fatalf("add after the cut: %v", err)
	}
	if !b.IsClosed() {
		t.Fatal("publisher open after the cut")
	}
	if _, err := b.Commit(ctx, "cut.a", nil); !errors.Is(err, extra.ErrBatchClosed) {
		t.Fatalf("commit after the cut: %v", err)
	}
	eventually(t, "reconnect", nc.IsConnected)
	if n := msgCount(t, st); n != 0 {
		t.Fatalf("%d messages of a cut batch stored", n)
	}
	ack, err := extra.PublishBatch(ctx, js, []extra.BatchMsg{{Subject: "cut.b", Data: []byte("1")}, {Subject: "cut.b", Data: []byte("2")}})
	if err != nil || ack.BatchSize != 2 || ack.Sequence != 2 {
		t.Fatalf("batch after reconnect: %+v %v", ack, err)
	}
	if n := msgCount(t, st); n != 2 {
		t.Fatalf("%d stored, want the 2 of the new batch", n)
	}
}

// dropFrame removes from chunk the first complete MSG frame whose payload
// contains pattern; it reports whether it did.
func dropFrame(chunk, pattern []byte) ([]byte, bool) {
	for off := 0; off < len(chunk); {
		i := bytes.Index(chunk[off:], []byte("MSG "))
		if i < 0 {
			return chunk, false
		}
		start := off + i
		off = start + 4
		if start > 0 && chunk[start-1] != '\n' {
			continue
		}
		eol := bytes.Index(chunk[start:], []byte("\r\n"))
		if eol < 0 {
			return chunk, false
		}
		fields := strings.Fields(string(chunk[start : start+eol]))
		size, err := strconv.Atoi(fields[len(fields)-1])
		if err != nil {
			continue
		}
		body := start + eol + 2
		end := body + size + 2
		if end > len(chunk) {
			return chunk, false
		}
		if bytes.Contains(chunk[body:body+size], pattern) {
			return append(chunk[:start:start], chunk[end:]...), true
		}
	}
	return chunk, false
}

// A flow acknowledgement lost on the way: the publisher, waiting for it,
// pings; the server repeats it and the batch completes.
func TestFastLostFlowAckRecoveredByPing(t *testing.T) {
	direct, nc, px := proxied(t)
	st := fastStream(t, direct, "FA")
	js := newJS(t, nc)
	ctx := ctxT(t)
	var dropped atomic.Int32
	px.Corrupt(faultproxy.Down, func(b []byte) []byte {
		if dropped.Load() > 0 {
			return b
		}
		out, ok := dropFrame(b, []byte(`"type":"ack","seq":10,`))
		if ok {
			dropped.Add(1)
		}
		return out
	})

	// Flow 10, one interval outstanding: the 11th Add needs the ack of 10.
	p, err := extra.NewFastPublisher(js, extra.Flow(10), extra.MaxOutstandingAcks(1), extra.PingInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 30; i++ {
		a, err := p.Add(ctx, "fa.a", []byte("x"))
		if err != nil {
			t.Fatalf("add %d: %v", i, err)
		}
		if i == 11 && a.AckSeq < 10 {
			t.Fatalf("add 11 went out before the ack of 10: %+v", a)
		}
	}
	ack, err := p.Commit(ctx, "fa.a", nil)
	if err != nil || ack.BatchSize != 31 {
		t.Fatalf("commit %+v %v", ack, err)
	}
	if dropped.Load() != 1 {
		t.Fatalf("the flow ack of 10 was not dropped (%d)", dropped.Load())
	}
	if extra.FastPings(p) == 0 {
		t.Fatal("no ping sent")
	}
	if n := msgCount(t, st); n != 31 {
		t.Fatalf("%d stored", n)
	}
}

// The link from the server stalls while a commit waits: pings go out, and
// when the link recovers the held acknowledgement completes the commit.
func TestStallDuringFastCommit(t *testing.T) {
	direct, nc, px := proxied(t)
	st := fastStream(t, direct, "FS")
	js := newJS(t, nc)
	ctx := ctxT(t)
	p, _ := extra.NewFastPublisher(js, extra.PingInterval(10*time.Millisecond), extra.FastAckTimeout(10*time.Second))
	for range 5 {
		if _, err := p.Add(ctx, "fs.a", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	px.Stall(faultproxy.Down, true)
	up := px.BytesUp()
	type result struct {
		ack *jsapi.PubAck
		err error
	}
	done := make(chan result, 1)
	go func() {
		ack, err := p.Commit(ctx, "fs.a", []byte("end"))
		done <- result{ack, err}
	}()
	// The commit and at least three pings have gone up.
	eventually(t, "pings during the stall", func() bool { return px.BytesUp() > up+4*60 })
	px.Stall(faultproxy.Down, false)
	r := <-done
	if r.err != nil || r.ack.BatchSize != 6 || r.ack.Sequence != 6 {
		t.Fatalf("commit %+v %v", r.ack, r.err)
	}
	if n := msgCount(t, st); n != 6 {
		t.Fatalf("%d stored", n)
	}
}

// A final acknowledgement lost on the way is not repeated by the server:
// the commit's pings find the batch gone and the commit fails with
// jsapi.ErrBatchUnknownID, although the messages are stored.
func TestAtomicLostFinalAck(t *testing.T) {
	direct, nc, px := proxied(t)
	st := fastStream(t, direct, "FL")
	js := newJS(t, nc)
	ctx := ctxT(t)
	p, _ := extra.NewFastPublisher(js, extra.PingInterval(20*time.Millisecond))
	var dropped atomic.Int32
	px.Corrupt(faultproxy.Down, func(b []byte) []byte {
		out, ok := dropFrame(b, []byte(`"batch":"`+p.BatchID()+`","count":`))
		if ok {
			dropped.Add(1)
		}
		return out
	})
	for range 3 {
		if _, err := p.Add(ctx, "fl.a", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	_, err := p.Commit(ctx, "fl.a", []byte("end"))
	var fe *extra.FastAPIError
	if !errors.Is(err, jsapi.ErrBatchUnknownID) || !errors.As(err, &fe) || fe.Seq != 4 {
		t.Fatalf("commit with its ack lost: %v", err)
	}
	if dropped.Load() != 1 || !p.IsClosed() {
		t.Fatalf("dropped %d, closed %v", dropped.Load(), p.IsClosed())
	}
	if n := msgCount(t, st); n != 4 {
		t.Fatalf("%d stored", n)
	}
}
