package conn_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
)

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
