package conn_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
)

// requestWrites runs requesters goroutines making perEach requests each on
// one connection, against a responder on another, and returns the socket
// writes per request of the requesting connection and of both.
func requestWrites(t *testing.T, s *natstest.Server, requesters, perEach int) (req, both float64) {
	t.Helper()
	svc := connect(t, s.URL())
	sub, err := svc.SubscribeFunc("coalesce.svc", func(m *conn.Msg) { _ = m.Respond(m.Data) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := svc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	nc := connect(t, s.URL())
	if _, err := nc.Request(ctxT(t), "coalesce.svc", []byte("warm")); err != nil {
		t.Fatal(err)
	}
	before, svcBefore := conn.Writes(nc), conn.Writes(svc)
	var wg sync.WaitGroup
	errs := make(chan error, requesters)
	for range requesters {
		wg.Go(func() {
			for range perEach {
				if _, err := nc.Request(context.Background(), "coalesce.svc", []byte("ping")); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	n := float64(requesters * perEach)
	w := float64(conn.Writes(nc) - before)
	return w / n, (w + float64(conn.Writes(svc)-svcBefore)) / n
}

// Requests made by many goroutines at once share socket writes, and so do
// the responses of a handler that has several requests queued: at 100
// concurrent requesters at most 0.5 writes per request, requester and
// responder together. A lone requester writes its request itself, one
// write each (the inline write that keeps its latency low), and so does
// the responder.
func TestConcurrentRequestsCoalesceWrites(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	one, oneBoth := requestWrites(t, s, 1, 500)
	hundred, hundredBoth := requestWrites(t, s, 100, 50)
	t.Logf("writes per request (requester; requester and responder): 1 requester %.2f; %.2f, 100 requesters %.2f; %.2f",
		one, oneBoth, hundred, hundredBoth)
	if one < 0.99 || one > 1.01 || oneBoth < 1.98 || oneBoth > 2.02 {
		t.Fatalf("a lone requester: %.2f writes per request (%.2f with the responder's), want 1 (2): inline writes", one, oneBoth)
	}
	if hundredBoth > 0.5 {
		t.Fatalf("100 concurrent requesters: %.2f writes per request with the responder's (%.2f the requester's), want at most 0.5", hundredBoth, hundred)
	}
}

// countingConn counts the bytes read from and written to a connection.
type countingConn struct {
	net.Conn
	in, out *atomic.Uint64
}

func (c countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.in.Add(uint64(n))
	return n, err
}

func (c countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.out.Add(uint64(n))
	return n, err
}

// Stats counts what ADR-40 asks for: every byte on the sockets (handshakes
// included, across reconnects), and connections with and without the
// first one.
func TestStatsSocketBytesAndConnects(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	var in, out atomic.Uint64
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{c, &in, &out}, nil
	}
	nc := connect(t, s.URL(), conn.Dialer(dial), conn.ReconnectWait(time.Millisecond))
	sub, err := nc.Subscribe("stats.>")
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if err := nc.Publish("stats.x", make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
		if _, err := sub.NextMsg(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "reconnect", func() bool { return nc.Stats().Reconnects == 1 && nc.IsConnected() })
	if err := nc.Publish("stats.y", make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.NextMsg(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	st := nc.Stats()
	if st.Connects != 2 || st.Reconnects != 1 {
		t.Fatalf("Connects %d, Reconnects %d; want 2 and 1", st.Connects, st.Reconnects)
	}
	if st.SocketBytesIn != in.Load() || st.SocketBytesOut != out.Load() {
		t.Fatalf("socket bytes in %d out %d, the sockets saw %d and %d", st.SocketBytesIn, st.SocketBytesOut, in.Load(), out.Load())
	}
	if st.SocketBytesOut <= st.OutBytes || st.SocketBytesIn <= st.InBytes {
		t.Fatalf("socket bytes %d/%d not above message bytes %d/%d", st.SocketBytesIn, st.SocketBytesOut, st.InBytes, st.OutBytes)
	}
}
