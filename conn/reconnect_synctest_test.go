package conn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/memnet"
	"github.com/natsio/natsio/proto"
)

// outageDialer dials l except while the server is down, [down, up) in
// fake time since start, when it refuses like a closed port. It records
// every attempt.
type outageDialer struct {
	l        *memnet.Listener
	start    time.Time
	down, up time.Duration
	mu       sync.Mutex
	at       []time.Duration
}

func (d *outageDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	now := time.Since(d.start)
	d.mu.Lock()
	d.at = append(d.at, now)
	d.mu.Unlock()
	if now >= d.down && now < d.up {
		return nil, fmt.Errorf("dial %s: %w", addr, syscall.ECONNREFUSED)
	}
	return d.l.Dial(ctx, network, addr)
}

func (d *outageDialer) times() []time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]time.Duration(nil), d.at...)
}

// runOutage runs clients (default options) against a server that drops
// every connection at lossAt and is down for outage. It returns, per
// client, the fake time of its reconnection and its dial attempts.
func runOutage(t *testing.T, clients int, outage time.Duration) (back time.Duration, reconnected []time.Duration, dials [][]time.Duration) {
	const lossAt = time.Second
	start := time.Now()
	back = lossAt + outage
	srv := startFake(t, inMemory(), withSession(func(c *fakeserver.Client) {
		if handshake(c, nil) != nil {
			return
		}
		if time.Since(start) < lossAt {
			time.Sleep(lossAt - time.Since(start))
			return // the server goes down: the connection closes
		}
		serveOps(c, nil, nil)
	}))
	defer srv.stop()
	var ncs []*conn.Conn
	var evs []*timedEvents
	var dialers []*outageDialer
	for range clients {
		ev := newTimedEvents(start)
		d := &outageDialer{l: srv.mem, start: start, down: lossAt, up: back}
		nc, err := srv.tryConnect(t, context.Background(), conn.Dialer(d.dial), ev.opt(), conn.PingInterval(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		ncs, evs, dialers = append(ncs, nc), append(evs, ev), append(dialers, d)
	}
	for i, ev := range evs {
		r := ev.wait(conn.EventReconnected)
		reconnected = append(reconnected, r.at)
		dials = append(dials, dialers[i].times())
	}
	for _, nc := range ncs {
		nc.Close()
	}
	srv.stop()
	return back, reconnected, dials
}

// With the default options a client is connected again at most
// ReconnectWait + jitter (2.5 s) after its server is back, however long the
// outage lasted: a server that cannot be reached is retried at a steady
// pace, not with a wait that grew during the outage.
func TestSynctestReconnectSoonAfterOutage(t *testing.T) {
	const bound = 2500 * time.Millisecond // DefaultReconnectWait + DefaultReconnectJitter
	for _, outage := range []time.Duration{5 * time.Second, 20 * time.Second, 45 * time.Second} {
		t.Run(outage.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				back, rec, dials := runOutage(t, 1, outage)
				late := rec[0] - back
				if late < 0 || late > bound {
					t.Fatalf("outage of %v: reconnected %v after the server was back, want at most %v\ndials: %v",
						outage, late, bound, dials[0])
				}
				// Attempts while the server was down came no faster than
				// ReconnectWait apart.
				at := dials[0]
				for i := 2; i < len(at); i++ {
					if gap := at[i] - at[i-1]; gap < conn.DefaultReconnectWait {
						t.Fatalf("attempts %v apart: %v", gap, at)
					}
				}
				t.Logf("outage %v: back after %v, %d attempts", outage, late, len(at)-1)
			})
		})
	}
}

// Many clients losing one server do not all come back at the same instant:
// the jitter spreads them.
func TestSynctestReconnectStormSpreads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const clients = 20
		back, rec, _ := runOutage(t, clients, 20*time.Second)
		lo, hi := rec[0], rec[0]
		distinct := map[time.Duration]bool{}
		for _, at := range rec {
			lo, hi = min(lo, at), max(hi, at)
			distinct[at] = true
			if at-back > 2500*time.Millisecond {
				t.Fatalf("a client came back %v after the server", at-back)
			}
		}
		if len(distinct) < clients/2 || hi-lo < conn.DefaultReconnectJitter/5 {
			t.Fatalf("%d clients came back at %d distinct instants spread over %v: %v", clients, len(distinct), hi-lo, rec)
		}
	})
}

// A server that turns the client away (here: -ERR 'maximum connections
// exceeded' after CONNECT) is not hammered: each refusal doubles the wait,
// from ReconnectWait to DefaultMaxReconnectWait, plus the jitter.
func TestSynctestRefusingServerBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const lossAt = time.Second
		const attempts = 8
		start := time.Now()
		var mu sync.Mutex
		var tries []time.Duration
		got := make(chan struct{}, attempts+4)
		srv := startFake(t, inMemory(), withSession(func(c *fakeserver.Client) {
			if time.Since(start) == 0 {
				if handshake(c, nil) == nil {
					time.Sleep(lossAt)
				}
				return
			}
			mu.Lock()
			tries = append(tries, time.Since(start))
			mu.Unlock()
			_ = c.SendInfo(nil)
			if _, err := c.ExpectConnect(c.Context()); err == nil {
				_ = c.SendErr("maximum connections exceeded")
			}
			got <- struct{}{}
		}))
		defer srv.stop()
		ev := newTimedEvents(start)
		nc := srv.connect(t, ev.opt(), conn.PingInterval(time.Hour))
		defer nc.Close()
		for range attempts {
			<-got
		}
		nc.Close()
		srv.stop()
		mu.Lock()
		defer mu.Unlock()
		// The first attempt follows the loss by ReconnectWait; after the
		// k-th refusal the wait is ReconnectWait·2^(k-1), capped.
		prev := lossAt
		for i, at := range tries[:attempts] {
			det := conn.DefaultReconnectWait
			for k := 1; k < i; k++ {
				det = min(2*det, conn.DefaultMaxReconnectWait)
			}
			if gap := at - prev; gap < det || gap >= det+conn.DefaultReconnectJitter {
				t.Fatalf("attempt %d came %v after the previous one, want in [%v, %v)\nall: %v",
					i+1, gap, det, det+conn.DefaultReconnectJitter, tries)
			}
			prev = at
		}
		if last := tries[attempts-1] - tries[attempts-2]; last < conn.DefaultMaxReconnectWait {
			t.Fatalf("the wait reached only %v: %v", last, tries)
		}
	})
}

// hugeGossipInfo is an INFO whose connect_urls fill most of 1 MiB (about 55k
// addresses), numbered from base.
func hugeGossipInfo(t *testing.T, base, n int) (string, int) {
	t.Helper()
	var b strings.Builder
	info, err := json.Marshal(fakeserver.DefaultInfo())
	if err != nil {
		t.Fatal(err)
	}
	b.Write(bytes.TrimSuffix(info, []byte("}")))
	b.WriteString(`,"connect_urls":[`)
	count := 0
	for i := base; i < base+n && b.Len() < proto.DefaultMaxInfoLine-64; i++ {
		if count > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"10.%d.%d.%d:4222"`, i>>16&255, i>>8&255, i&255)
		count++
	}
	b.WriteString("]}")
	return b.String(), count
}

// A server gossiping a 1 MiB INFO of about 55k addresses, at the handshake
// and again asynchronously: the pool stays bounded (at most 1024 servers),
// and the list is parsed without the connection's lock, so a Publish made
// while it is (from the hook that runs right after the parse) goes through
// at once; a pool merge under the lock would deadlock it.
func TestSynctestHugeGossip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		big, n := hugeGossipInfo(t, 0, 60000)
		if n < 50000 {
			t.Fatalf("only %d URLs fit", n)
		}
		async1, _ := hugeGossipInfo(t, 100000, 30000)
		async2, _ := hugeGossipInfo(t, 200000, 30000)
		var mu sync.Mutex
		pubs := 0
		sent := make(chan struct{})
		srv := startFake(t, inMemory(), withSession(func(c *fakeserver.Client) {
			if handshake(c, big) != nil {
				return
			}
			for _, info := range []string{async1, async2} {
				if c.SendInfo(info) != nil {
					return
				}
			}
			close(sent)
			serveOps(c, nil, func(op *proto.Op) {
				if op.Kind == proto.KindPub && string(op.Subject) == "during.info" {
					mu.Lock()
					pubs++
					mu.Unlock()
				}
			})
		}))
		defer srv.stop()
		var hooked atomic.Int32
		defer conn.SetGossipHook(func(nc *conn.Conn) {
			hooked.Add(1)
			if nc.IsConnected() {
				if err := nc.Publish("during.info", nil); err != nil {
					t.Errorf("publish during the gossip: %v", err)
				}
			}
		})()
		nc := srv.connect(t, conn.PingInterval(time.Hour))
		defer nc.Close()
		if got := len(nc.Servers()); got > 1024 {
			t.Fatalf("pool of %d servers after a %d-URL INFO", got, n)
		}
		<-sent
		if err := nc.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if hooked.Load() != 3 {
			t.Fatalf("the gossip hook ran %d times, want 3", hooked.Load())
		}
		if got := len(nc.Servers()); got > 1024 {
			t.Fatalf("pool of %d servers after the async INFOs", got)
		}
		nc.Close()
		srv.stop()
		mu.Lock()
		defer mu.Unlock()
		if pubs != 2 {
			t.Fatalf("%d publishes made during async INFOs reached the server, want 2", pubs)
		}
	})
}
