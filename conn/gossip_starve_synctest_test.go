package conn_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/memnet"
)

// blackHoles accepts every dial to an address other than the named
// server's and never answers: the connection stays open, silent, until
// the client closes it.
type blackHoles struct {
	mu    sync.Mutex
	ends  []*memnet.Conn
	dials map[string]int
}

func (b *blackHoles) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	b.mu.Lock()
	b.dials[addr]++
	b.mu.Unlock()
	return memnet.Dialer(addr, func(server *memnet.Conn) error {
		b.mu.Lock()
		b.ends = append(b.ends, server)
		b.mu.Unlock()
		return nil
	})(ctx, network, addr)
}

func (b *blackHoles) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.ends {
		_ = c.Close()
	}
}

func (b *blackHoles) tried() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.dials)
}

// A server that gossips 30 addresses that accept TCP and never answer,
// then goes down for 2 s: the client must be back on the named server
// within ReconnectWait + jitter (2.5 s) of its return, as with no gossip.
// Gossiped servers never come before a named one whose wait is over, and
// an attempt to a gossiped server ends when a named server's wait does.
func TestGossipedBlackHolesDoNotStarveNamedServer(t *testing.T) {
	const (
		holes  = 30
		lossAt = time.Second
		outage = 2 * time.Second
		bound  = conn.DefaultReconnectWait + conn.DefaultReconnectJitter
	)
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		back := lossAt + outage
		urls := make([]string, holes)
		for i := range urls {
			urls[i] = fmt.Sprintf("hole%d:4222", i)
		}
		info := fakeserver.DefaultInfo().With("connect_urls", urls)
		srv := startFake(t, inMemory(), withSession(func(c *fakeserver.Client) {
			if handshake(c, info) != nil {
				return
			}
			if time.Since(start) < lossAt {
				time.Sleep(lossAt - time.Since(start))
				return // the named server goes down
			}
			serveOps(c, nil, nil)
		}))
		holesDial := &blackHoles{dials: map[string]int{}}
		named := &outageDialer{l: srv.mem, start: start, down: lossAt, up: back}
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == fakeAddr {
				return named.dial(ctx, network, addr)
			}
			return holesDial.dial(ctx, network, addr)
		}
		ev := newTimedEvents(start)
		nc, err := srv.tryConnect(t, context.Background(), conn.Dialer(dial), ev.opt(), conn.PingInterval(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if got := len(nc.Servers()); got != holes+1 {
			t.Fatalf("pool of %d servers, want %d", got, holes+1)
		}
		r := ev.wait(conn.EventReconnected)
		tried := holesDial.tried()
		nc.Close()
		holesDial.close()
		srv.stop()
		late := r.at - back
		if r.Server != fakeURL || late < 0 || late > bound {
			t.Fatalf("reconnected to %s %v after the named server was back, want %s within %v (%d gossiped servers tried)\nnamed server dials: %v",
				r.Server, late, fakeURL, bound, tried, named.times())
		}
		t.Logf("back on the named server %v after its return; %d of %d gossiped servers tried meanwhile", late, tried, holes)
	})
}
