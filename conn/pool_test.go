package conn

import (
	"fmt"
	"testing"
	"time"
)

func testGossip(t *testing.T, p *serverPool, cur *server, urls ...string) (added, gone int) {
	t.Helper()
	return p.merge(prepareGossip(urls, cur, p.tlsName, false, false), cur)
}

func TestPoolForgetsServersGossipDrops(t *testing.T) {
	named, _ := parseServerURLs("nats://a:4222")
	p := newPool(named, false)
	cur := p.servers[0]
	testGossip(t, p, cur, "b:4222", "c:4222", "d:4222", "B:4222")
	if len(p.servers) != 4 {
		t.Fatalf("pool %v", p.urls())
	}
	// The route to c goes away; the named server a stays even unlisted.
	if _, gone := testGossip(t, p, cur, "b:4222", "d:4222"); gone != 1 {
		t.Fatalf("forgot %d", gone)
	}
	got := p.urls()
	if len(got) != 3 || got[0] != "nats://a:4222" || got[1] != "nats://b:4222" || got[2] != "nats://d:4222" {
		t.Fatalf("pool %v", got)
	}
	// An empty list (a server without gossip) removes nothing.
	if _, gone := testGossip(t, p, cur); gone != 0 {
		t.Fatal("empty gossip removed servers")
	}
	if !p.has("D:4222") || p.has("c:4222") {
		t.Fatalf("index out of step with the pool %v", p.urls())
	}
}

// gossipURLs returns n distinct IP "host:port" entries.
func gossipURLs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("10.%d.%d.%d:4222", i>>16&255, i>>8&255, i&255)
	}
	return out
}

// A huge gossip list costs time linear in its length, and the part done
// under the connection's lock (merge) is bounded by maxPoolSize: 55k URLs
// (a 1 MiB INFO) leave a pool of maxPoolSize servers, and handling them
// once takes about as long as handling 5.5k ten times, not ten times as
// long (as a merge comparing every new URL with every known one would).
// The two are timed alternately and the work of each timing is the same,
// so a loaded machine slows both alike.
func TestPoolGossipScalesLinearly(t *testing.T) {
	named, _ := parseServerURLs("nats://seed.example:4222")
	small, large := gossipURLs(5500), gossipURLs(55000)
	var size, locked []int
	handle := func(urls []string, times int) time.Duration {
		start := time.Now()
		for range times {
			p := newPool(append([]*server(nil), named...), false)
			cur := p.servers[0]
			g := prepareGossip(urls, cur, p.tlsName, false, true)
			p.merge(g, cur)
			size, locked = append(size, len(p.servers)), append(locked, len(g.fresh))
		}
		return time.Since(start)
	}
	ts, tl := time.Duration(1<<62), time.Duration(1<<62)
	for range 5 {
		ts = min(ts, handle(small, 10))
		tl = min(tl, handle(large, 1))
	}
	for i := range size {
		if size[i] != maxPoolSize {
			t.Fatalf("pool size %d, want the cap %d", size[i], maxPoolSize)
		}
		if locked[i] > maxPoolSize {
			t.Fatalf("merge under the lock got %d candidates, want at most %d", locked[i], maxPoolSize)
		}
	}
	ratio := float64(tl) / float64(ts)
	t.Logf("10 x 5.5k URLs: %v, 55k URLs: %v (ratio %.1f)", ts, tl, ratio)
	if ratio > 4 {
		t.Fatalf("55k URLs took %.1f× the time of 10 x 5.5k (%v against %v): not linear", ratio, tl, ts)
	}
}

// PinDiscoveredServers verifies every gossiped server against the first
// named server's TLS name; by default a gossiped host name is verified
// against itself and a gossiped IP against the named server's name.
func TestPoolGossipTLSNames(t *testing.T) {
	named, _ := parseServerURLs("tls://nats.example.com:4222")
	for _, pin := range []bool{false, true} {
		p := newPool(append([]*server(nil), named...), false)
		cur := p.servers[0]
		p.merge(prepareGossip([]string{"10.0.0.2:4222", "evil.example.net:4222"}, cur, p.tlsName, pin, false), cur)
		byAddr := map[string]string{}
		for _, s := range p.servers {
			byAddr[s.addr()] = s.tlsName
			if s.discovered && s.url.Scheme != "tls" {
				t.Fatalf("discovered %s with scheme %s", s.addr(), s.url.Scheme)
			}
		}
		wantHost := "evil.example.net"
		if pin {
			wantHost = "nats.example.com"
		}
		if byAddr["10.0.0.2:4222"] != "nats.example.com" || byAddr["evil.example.net:4222"] != wantHost {
			t.Fatalf("pin %v: TLS names %v", pin, byAddr)
		}
	}
}
