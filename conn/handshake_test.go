package conn_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
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
