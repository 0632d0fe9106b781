package conn_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/proto"
)

// After Close no goroutine of the connection is left, and ten minutes of
// fake time later nothing has happened: no byte or dial reached the
// server, no event followed EventClosed.
func TestNoTimerAfterClose(t *testing.T) {
	t.Run("connected", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			ev := newTimedEvents(start)
			type srvEnd struct {
				ops   int // operations the client sent
				pings []time.Duration
			}
			srvDone := make(chan srvEnd, 4)
			srv := startFake(t, inMemory(), withSession(func(c *fakeserver.Client) {
				if handshake(c, nil) != nil {
					return
				}
				var pings []time.Duration
				serveOps(c, nil, func(op *proto.Op) {
					if op.Kind == proto.KindPing {
						pings = append(pings, time.Since(start))
					}
				})
				srvDone <- srvEnd{len(c.Ops()), pings}
			}))
			defer srv.stop()
			var dials atomic.Int32 // every attempt, successful or not
			dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				return srv.mem.Dial(ctx, network, addr)
			}
			nc, err := srv.tryConnect(t, context.Background(), conn.Dialer(dial), ev.opt(),
				conn.PingInterval(time.Second), conn.MaxPingsOutstanding(2), conn.RequestTimeout(time.Minute),
				conn.ReconnectBackoff(time.Second, 5*time.Second), conn.ReconnectJitter(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			sub, err := nc.Subscribe("s")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := nc.SubscribeFunc("h", func(*conn.Msg) {}); err != nil {
				t.Fatal(err)
			}
			reqErr := make(chan error, 1)
			go func() {
				_, err := nc.Request(context.Background(), "nobody", nil)
				reqErr <- err
			}()
			nextErr := make(chan error, 1)
			go func() {
				_, err := sub.NextMsg(context.Background())
				nextErr <- err
			}()
			time.Sleep(2500 * time.Millisecond) // two keepalives answered
			nc.Close()
			if err := <-reqErr; !errors.Is(err, conn.ErrClosed) {
				t.Fatalf("pending Request: %v", err)
			}
			if err := <-nextErr; !errors.Is(err, conn.ErrClosed) {
				t.Fatalf("pending NextMsg: %v", err)
			}
			end := <-srvDone // the server end has seen EOF
			if len(end.pings) != 2 || end.pings[0] != time.Second || end.pings[1] != 2*time.Second {
				t.Fatalf("keepalive PINGs at %v, want [1s 2s]", end.pings)
			}
			synctest.Wait()
			if g := goroutinesStartedByConn(); len(g) != 0 {
				t.Fatalf("%d conn goroutines left after Close:\n%s", len(g), strings.Join(g, "\n\n"))
			}
			// The listener stays open: a late dial would be accepted.
			nDials, nev := dials.Load(), len(ev.all())
			time.Sleep(10 * time.Minute)
			synctest.Wait()
			if dials.Load() != nDials || srv.mem.Dials() != 1 || len(ev.all()) != nev {
				t.Fatalf("after Close: dial attempts %d→%d, accepted %d, events %d→%d",
					nDials, dials.Load(), srv.mem.Dials(), nev, len(ev.all()))
			}
			select {
			case e := <-srvDone:
				t.Fatalf("a connection after Close carried %d operations", e.ops)
			default:
			}
			evs := ev.all()
			if last := evs[len(evs)-1]; last.Kind != conn.EventClosed || last.at != 2500*time.Millisecond {
				t.Fatalf("last event %v at %v, want closed at 2.5s: %v", last.Kind, last.at, evs)
			}
		})
	})

	// Closed in the middle of a reconnect backoff: the pending attempt
	// never happens.
	t.Run("reconnecting", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			ev := newTimedEvents(start)
			srv := startFake(t, inMemory(), withSession(func(c *fakeserver.Client) {
				if handshake(c, nil) == nil {
					time.Sleep(time.Second)
				}
			}))
			defer srv.stop()
			rec := &refusingDialRecorder{l: srv.mem, start: start, ch: make(chan struct{}, 64)}
			nc, err := srv.tryConnect(t, context.Background(), conn.Dialer(rec.dial), ev.opt(),
				conn.ReconnectBackoff(2*time.Second, 8*time.Second), conn.ReconnectJitter(0), conn.PingInterval(time.Second), conn.MaxPingsOutstanding(1))
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			// Lost at 1 s; attempts at 3 s (after 2 s) and 7 s (after 4 s):
			// closed at 6 s, in between.
			time.Sleep(6 * time.Second)
			if got := rec.times(); len(got) != 2 || got[1] != 3*time.Second {
				t.Fatalf("dials at %v, want [0s 3s]", got)
			}
			nc.Close()
			srv.stop()
			synctest.Wait()
			if g := goroutinesStartedByConn(); len(g) != 0 {
				t.Fatalf("%d conn goroutines left after Close:\n%s", len(g), strings.Join(g, "\n\n"))
			}
			nev := len(ev.all())
			time.Sleep(10 * time.Minute)
			synctest.Wait()
			if got := rec.times(); len(got) != 2 {
				t.Fatalf("dials after Close: %v", got)
			}
			evs := ev.all()
			if len(evs) != nev || evs[len(evs)-1].Kind != conn.EventClosed || evs[len(evs)-1].at != 6*time.Second {
				t.Fatalf("events after Close: %v", evs)
			}
		})
	})
}
