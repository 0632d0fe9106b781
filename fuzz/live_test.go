package fuzz

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/memnet"
	"github.com/natsio/natsio/proto"
)

// liveConn is a real connection (package conn, its reader, pool and
// request machinery) to a scripted fake server, shared by the iterations
// of one fuzz target in one process: the targets that fuzz what a server
// sends after the handshake drive it.
type liveConn struct {
	fs *fakeserver.Server
	nc *conn.Conn
	c  *fakeserver.Client // the fake's side of the current connection
}

// liveCtx bounds one step of an iteration.
func liveCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newLiveConn connects to a new fake server, in memory: a fuzz run drops
// and remakes the connection tens of thousands of times, which over TCP
// would use up the machine's ephemeral ports (each closed connection
// holds one for a minute) and leave the client unable to dial. Every
// address the client dials, gossiped ones included, reaches the fake;
// reconnects follow at once.
func newLiveConn(f *testing.F) *liveConn {
	ln := memnet.Listen("fake.invalid:4222")
	lc := &liveConn{fs: fakeserver.Serve(f, ln)}
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return ln.Dial(ctx, network, ln.Addr().String())
	}
	type result struct {
		nc  *conn.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		nc, err := conn.Connect(liveCtx(f), lc.fs.URL(), conn.Dialer(dial),
			conn.ReconnectDelay(func(int) time.Duration { return 0 }), conn.PingInterval(time.Hour))
		done <- result{nc, err}
	}()
	lc.accept(f)
	r := <-done
	if r.err != nil {
		f.Fatal(r.err)
	}
	lc.nc = r.nc
	f.Cleanup(func() { _ = lc.nc.Close() }) // before the fake server closes
	return lc
}

// accept takes the client's next connection and completes its handshake.
// A connection the client gives up during the handshake (a gossiped
// address it dialed as TLS or WebSocket, for one) is let go: the client
// moves on to the next server of its pool, which is the fake again.
func (lc *liveConn) accept(t testing.TB) {
	ctx := liveCtx(t)
	for {
		c, err := lc.fs.Accept(ctx)
		if err != nil {
			t.Fatalf("waiting for the client to connect: %v", err)
		}
		if _, err := c.Handshake(ctx, fakeserver.DefaultInfo()); err != nil {
			c.Close()
			continue
		}
		// The PONG that ends the client's handshake is on its way once
		// its PING is seen: what is sent next reaches the connection's
		// reader, not the handshake (which answers PINGs and skips bad
		// INFOs itself).
		if _, err := c.Expect(ctx, proto.KindPing); err != nil {
			c.Close()
			continue
		}
		lc.c = c
		return
	}
}

// dropped waits until the client has closed the current connection, then
// takes its reconnection.
func (lc *liveConn) dropped(t testing.TB) {
	select {
	case <-lc.c.Done():
	case <-liveCtx(t).Done():
		t.Fatal("the client did not close the connection")
	}
	lc.accept(t)
}
