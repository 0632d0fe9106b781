package conn_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
)

// SetServerPool replaces the pool from the next reconnect on; a bad list
// changes nothing.
func TestSetServerPool(t *testing.T) {
	a := natstest.NewServer(t, natstest.JetStream(false))
	b := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, a.URL(), conn.ReconnectWait(time.Millisecond))
	for _, bad := range [][]string{nil, {"ftp://x:1"}, {b.URL(), "nats://"}} {
		if err := nc.SetServerPool(bad...); !errors.Is(err, conn.ErrInvalidOption) {
			t.Fatalf("SetServerPool(%q): %v, want ErrInvalidOption", bad, err)
		}
	}
	if got := nc.Servers(); len(got) != 1 || got[0] != a.URL() {
		t.Fatalf("pool after refused lists: %v", got)
	}
	if err := nc.SetServerPool(b.URL()); err != nil {
		t.Fatal(err)
	}
	if nc.ConnectedURL() != a.URL() {
		t.Fatalf("the current connection moved: %s", nc.ConnectedURL())
	}
	nc.ForceReconnect()
	eventually(t, "reconnect to the new pool", func() bool { return nc.ConnectedURL() == b.URL() })
	if got := nc.Servers(); len(got) != 1 || got[0] != b.URL() {
		t.Fatalf("pool %v, want only %s", got, b.URL())
	}
	nc.Close()
	if err := nc.SetServerPool(a.URL()); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

// A ReconnectToServer handler sees the pool with each server's failed
// attempts and the last INFO, and chooses the server and the wait; a
// server outside the pool leaves the choice to the default policy.
func TestReconnectToServer(t *testing.T) {
	a := natstest.NewServer(t, natstest.JetStream(false))
	b := natstest.NewServer(t, natstest.JetStream(false))
	var mu sync.Mutex
	var calls [][]conn.Server
	var infos []conn.ServerInfo
	choose, delay := b.URL(), time.Duration(0)
	f := func(pool []conn.Server, info conn.ServerInfo) (string, time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, pool)
		infos = append(infos, info)
		return choose, delay
	}
	nc := connect(t, a.URL()+","+b.URL(), conn.DontRandomize(), conn.ReconnectToServer(f),
		conn.ReconnectWait(time.Hour))
	if nc.ConnectedURL() != a.URL() {
		t.Fatalf("connected to %s", nc.ConnectedURL())
	}
	aID := nc.ServerInfo().ServerID
	nc.ForceReconnect()
	// The default policy would wait an hour before retrying a, and try b
	// at once; the handler chose b, at once.
	eventually(t, "reconnect to b", func() bool { return nc.ConnectedURL() == b.URL() })
	mu.Lock()
	if len(calls) != 1 || len(calls[0]) != 2 || infos[0].ServerID != aID {
		t.Fatalf("handler called %d times with %v and info %q (a is %q)", len(calls), calls, infos[0].ServerID, aID)
	}
	choose = a.URL()
	delay = 5 * time.Millisecond
	mu.Unlock()
	nc.ForceReconnect()
	eventually(t, "reconnect to a at once, though its default wait is an hour", func() bool { return nc.ConnectedURL() == a.URL() })
	// With a down, the handler keeps choosing it and sees its failed
	// attempts.
	a.Shutdown()
	eventually(t, "failed attempts counted in the pool", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range calls[len(calls)-1] {
			if s.URL == a.URL() && s.Attempts >= 2 {
				return true
			}
		}
		return false
	})
	// A server outside the pool is not dialed: the default policy
	// chooses (and waits its hour).
	mu.Lock()
	choose, n := "nats://10.255.255.1:4222", len(calls)
	mu.Unlock()
	eventually(t, "the handler asked again", func() bool { mu.Lock(); defer mu.Unlock(); return len(calls) > n })
	if u := nc.ConnectedURL(); u != "" {
		t.Fatalf("connected to %s", u)
	}
}
