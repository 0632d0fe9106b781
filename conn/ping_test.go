package conn_test

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/proto"
)

// The pinger ticks every interval I from the moment the connection is up.
// At each tick it declares the connection stale when maxOut PINGs are
// unanswered, else sends a PING; any PONG resets the count. So with a
// server that answers its first k PINGs at once and then goes silent
// (connection open), the PINGs go out at exactly I, 2I, …, (k+N)·I and the
// connection is declared stale at exactly (k+N+1)·I: I×(N+1) after the
// last answered PING. Publishing meanwhile changes nothing: outbound
// traffic is not a sign of life (nats.rs#1593).
func TestStaleConnectionAtExactBound(t *testing.T) {
	cases := []struct {
		name        string
		interval    time.Duration
		maxOut      int
		answered    int
		publish     bool
		noReconnect bool
	}{
		{name: "silent", interval: time.Second, maxOut: 2},
		{name: "silent-after-5-pongs", interval: 2 * time.Second, maxOut: 3, answered: 5},
		{name: "publishing", interval: time.Second, maxOut: 2, answered: 3, publish: true},
		{name: "publishing-maxout-1", interval: 700 * time.Millisecond, maxOut: 1, publish: true},
		{name: "no-reconnect", interval: 500 * time.Millisecond, maxOut: 1, answered: 2, noReconnect: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				ev := newTimedEvents(start)
				var mu sync.Mutex
				var pings []time.Duration
				pubs := 0
				srv := startFake(t, inMemory(), withSession(func(c *fakeserver.Client) {
					if handshake(c, nil) != nil {
						return
					}
					serveOps(c, func() bool {
						mu.Lock()
						defer mu.Unlock()
						pings = append(pings, time.Since(start))
						return len(pings) <= tc.answered
					}, func(op *proto.Op) {
						if op.Kind == proto.KindPub {
							mu.Lock()
							pubs++
							mu.Unlock()
						}
					})
				}))
				opts := []conn.Option{conn.PingInterval(tc.interval), conn.MaxPingsOutstanding(tc.maxOut), ev.opt()}
				if tc.noReconnect {
					opts = append(opts, conn.NoReconnect())
				}
				defer srv.stop()
				nc := srv.connect(t, opts...)
				defer nc.Close()
				if d := time.Since(start); d != 0 {
					t.Fatalf("handshake took %v of fake time", d)
				}
				// Reconnect attempts are refused; the accepted connection stays.
				_ = srv.mem.Close()

				pubDone := make(chan struct{})
				stopPub := make(chan struct{})
				go func() {
					defer close(pubDone)
					if !tc.publish {
						return
					}
					for {
						select {
						case <-stopPub:
							return
						default:
						}
						if err := nc.Publish("load", []byte("payload")); err != nil {
							return
						}
						time.Sleep(tc.interval / 7)
					}
				}()

				want := time.Duration(tc.answered+tc.maxOut+1) * tc.interval
				d := ev.wait(conn.EventDisconnected)
				if !errors.Is(d.Err, conn.ErrStaleConnection) {
					t.Fatalf("disconnected with %v, want ErrStaleConnection", d.Err)
				}
				if d.at != want {
					t.Fatalf("stale declared at %v, want exactly %v = (%d answered + %d max out + 1) × %v",
						d.at, want, tc.answered, tc.maxOut, tc.interval)
				}
				if tc.noReconnect {
					c := ev.wait(conn.EventClosed)
					if !errors.Is(c.Err, conn.ErrStaleConnection) || c.at != want {
						t.Fatalf("closed at %v with %v, want at %v with ErrStaleConnection", c.at, c.Err, want)
					}
				}
				close(stopPub)
				<-pubDone
				nc.Close()
				srv.stop()

				mu.Lock()
				defer mu.Unlock()
				if len(pings) != tc.answered+tc.maxOut {
					t.Fatalf("server saw %d keepalive PINGs, want %d: %v", len(pings), tc.answered+tc.maxOut, pings)
				}
				for i, at := range pings {
					if w := time.Duration(i+1) * tc.interval; at != w {
						t.Fatalf("PING %d at %v, want exactly %v (all: %v)", i+1, at, w, pings)
					}
				}
				if tc.publish && pubs < int(want/(tc.interval/7))-1 {
					t.Fatalf("only %d publishes reached the server", pubs)
				}
			})
		})
	}
}
