package conn_test

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/proto"
)

// ConnectTimeout bounds a whole attempt — dial, INFO, CONNECT, first PONG
// — and Connect fails at exactly that instant (ErrTimeout within
// ErrNoServers); a ctx deadline bounds the whole call, and each server of
// the list gets its own ConnectTimeout.
func TestConnectTimeoutCoversHandshake(t *testing.T) {
	const timeout = 3 * time.Second
	silent := func(c *fakeserver.Client) { serveOps(c, nil, nil) } // reads, never writes
	noPong := func(c *fakeserver.Client) {
		if err := c.SendInfo(nil); err != nil {
			return
		}
		serveOps(c, func() bool { return false }, nil)
	}
	cases := []struct {
		name    string
		handler func(*fakeserver.Client)
		dial    bool // the dial itself hangs
		url     string
		ctx     time.Duration
		want    time.Duration
	}{
		{name: "no-info", handler: silent, want: timeout},
		{name: "no-pong", handler: noPong, want: timeout},
		{name: "dial-hangs", dial: true, want: timeout},
		{name: "ctx-shorter", handler: silent, ctx: time.Second, want: time.Second},
		{name: "two-servers", handler: noPong, url: "nats://a:1,nats://b:2", want: 2 * timeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := tc.handler
				if h == nil {
					h = silent
				}
				srv := startFake(t, inMemory(), withSession(h))
				defer srv.stop()
				dial := srv.mem.Dial
				if tc.dial {
					dial = func(ctx context.Context, _, _ string) (net.Conn, error) {
						<-ctx.Done()
						return nil, ctx.Err()
					}
				}
				url := fakeURL
				if tc.url != "" {
					url = tc.url
				}
				ctx := context.Background()
				if tc.ctx > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.ctx)
					defer cancel()
				}
				start := time.Now()
				nc, err := conn.Connect(ctx, url, conn.Dialer(dial), conn.ConnectTimeout(timeout), conn.DontRandomize())
				el := time.Since(start)
				if err == nil {
					nc.Close()
					t.Fatal("Connect succeeded")
				}
				if el != tc.want {
					t.Fatalf("Connect failed after %v, want exactly %v: %v", el, tc.want, err)
				}
				if !errors.Is(err, conn.ErrNoServers) {
					t.Fatalf("Connect: %v, want ErrNoServers", err)
				}
				if !errors.Is(err, conn.ErrTimeout) {
					t.Fatalf("Connect: %v, want ErrTimeout", err)
				}
				srv.stop() // the handlers saw the client close its end
				synctest.Wait()
				if g := goroutinesStartedByConn(); len(g) != 0 {
					t.Fatalf("%d conn goroutines left:\n%s", len(g), strings.Join(g, "\n\n"))
				}
			})
		})
	}
}

// isTimeout accepts conn.ErrTimeout and, because of the bug pinned down by
// TestHandshakeTimeoutIsErrTimeout, a raw socket deadline error or (on a loaded
// machine, when the dial alone outlasts the connect timeout) a raw dial
// timeout.
func isTimeout(err error) bool {
	return errors.Is(err, conn.ErrTimeout) || errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, context.DeadlineExceeded)
}

func TestHandshakeTimeoutWithoutInfo(t *testing.T) {
	fs := startFake(t) // accepts, never sends a byte
	r := <-fs.connectAsync(conn.ConnectTimeout(200 * time.Millisecond))
	if r.err == nil {
		r.nc.Close()
		t.Fatal("connected to a server that never sent INFO")
	}
	if !isTimeout(r.err) || !errors.Is(r.err, conn.ErrNoServers) {
		t.Fatalf("want ErrNoServers wrapping ErrTimeout, got %v", r.err)
	}
	if r.d < 200*time.Millisecond || r.d > 5*time.Second {
		t.Fatalf("connect failed after %v, want about the 200ms connect timeout", r.d)
	}
	if c := fs.firstClient(t); c != nil {
		waitClosed(t, c, "the client to close the silent connection")
		if n := len(c.Ops()); n != 0 {
			t.Fatalf("client sent %d ops before INFO", n)
		}
	}
}

func TestHandshakeTimeoutWithoutPong(t *testing.T) {
	fs := startFake(t, withScript(func(c *fakeserver.Client) {
		_ = c.SendInfo(nil) // then never a PONG
	}))
	r := <-fs.connectAsync(conn.ConnectTimeout(200 * time.Millisecond))
	if r.err == nil {
		r.nc.Close()
		t.Fatal("connected without a PONG")
	}
	if !isTimeout(r.err) {
		t.Fatalf("want ErrTimeout, got %v", r.err)
	}
	if r.d < 200*time.Millisecond || r.d > 5*time.Second {
		t.Fatalf("connect failed after %v, want about the 200ms connect timeout", r.d)
	}
	c := fs.firstClient(t)
	if c == nil {
		return
	}
	waitClosed(t, c, "the client to close the connection")
	ops := c.Ops()
	// On a loaded machine the timeout may strike before CONNECT is sent.
	if len(ops) > 0 && (len(ops) != 2 || ops[0].Kind != proto.KindConnect || ops[1].Kind != proto.KindPing) {
		t.Fatalf("client sent %v, want CONNECT PING", opKinds(ops))
	}
	if c.ParseErr() != nil || len(c.Violations()) > 0 {
		t.Fatalf("parse error %v, violations %v", c.ParseErr(), c.Violations())
	}
}

func TestTLSHandshakeStallTimesOut(t *testing.T) {
	fs := startFake(t, withScript(func(c *fakeserver.Client) {
		c.Discard() // the ClientHello is not NATS protocol
		_ = c.SendInfo(fakeserver.DefaultInfo().With("tls_required", true))
	}))
	r := <-fs.connectAsync(conn.ConnectTimeout(200 * time.Millisecond))
	if r.err == nil {
		r.nc.Close()
		t.Fatal("connected through a TLS handshake that never completed")
	}
	if !isTimeout(r.err) {
		t.Fatalf("want ErrTimeout, got %v", r.err)
	}
	if r.d > 5*time.Second {
		t.Fatalf("connect failed after %v, want about the 200ms connect timeout", r.d)
	}
	if c := fs.firstClient(t); c != nil {
		waitClosed(t, c, "the client to close the connection")
		// Normally the client was inside the TLS handshake (it sent a
		// ClientHello); on a loaded machine the timeout may come first.
		t.Logf("client sent %d bytes of TLS handshake", c.Discarded())
	}
}

// TestHandshakeTimeoutIsErrTimeout: a handshake that times out fails with an
// error matching conn.ErrTimeout, every time.
func TestHandshakeTimeoutIsErrTimeout(t *testing.T) {
	fs := startFake(t) // silent
	for i := range 10 {
		r := <-fs.connectAsync(conn.ConnectTimeout(50 * time.Millisecond))
		if r.err == nil {
			r.nc.Close()
			t.Fatal("connected to a silent server")
		}
		if !errors.Is(r.err, conn.ErrTimeout) || !errors.Is(r.err, context.DeadlineExceeded) {
			t.Fatalf("attempt %d: %v does not match both conn.ErrTimeout and context.DeadlineExceeded", i, r.err)
		}
	}
	// Ended by the caller's deadline rather than the connect timeout: the
	// same two matches, as for any call that ran out of time.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := conn.Connect(ctx, fs.URL(), conn.ConnectTimeout(time.Minute))
	if !errors.Is(err, conn.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("connect ended by ctx's deadline: %v does not match both conn.ErrTimeout and context.DeadlineExceeded", err)
	}
}

func opKinds(ops []proto.Op) []string {
	var out []string
	for _, op := range ops {
		out = append(out, op.Kind.String())
	}
	return out
}
