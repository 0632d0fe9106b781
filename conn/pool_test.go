package conn

import "testing"

func TestPoolForgetsServersGossipDrops(t *testing.T) {
	named, _ := parseServerURLs("nats://a:4222")
	p := newPool(named, false)
	cur := p.servers[0]
	p.discover([]string{"b:4222", "c:4222", "d:4222"}, cur, false)
	if len(p.servers) != 4 {
		t.Fatalf("pool %v", p.urls())
	}
	// The route to c goes away; the named server a stays even unlisted.
	if n := p.forget([]string{"b:4222", "d:4222"}, cur); n != 1 {
		t.Fatalf("forgot %d", n)
	}
	got := p.urls()
	if len(got) != 3 || got[0] != "nats://a:4222" || got[1] != "nats://b:4222" || got[2] != "nats://d:4222" {
		t.Fatalf("pool %v", got)
	}
	// An empty list (a server without gossip) removes nothing.
	if n := p.forget(nil, cur); n != 0 {
		t.Fatal("empty gossip removed servers")
	}
}
