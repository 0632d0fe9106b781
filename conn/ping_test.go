package conn_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/internal/testutil"
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
