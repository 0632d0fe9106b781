package natstest_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
)

func TestProxyCutAndDown(t *testing.T) {
	noLeaks(t)
	s := natstest.NewServer(t)
	p := natstest.NewProxy(t, s.URL())
	if !strings.HasPrefix(p.URL(), "nats://127.0.0.1:") || p.URL() == s.URL() || p.URL() != "nats://"+p.Addr() {
		t.Fatalf("proxy URL %q", p.URL())
	}
	nc := connectProxy(t, p)
	roundTrip(t, nc, "proxied")
	if p.Conns() != 1 {
		t.Fatalf("Conns %d", p.Conns())
	}

	// Down and Cut: the client loses its connection and cannot come back
	// until Down is off.
	p.Down(true)
	p.Cut()
	eventually(t, "the client to notice the cut", func() bool { return !nc.IsConnected() })
	eventually(t, "refused reconnect attempts", func() bool { return p.Accepted() >= 3 })
	if nc.IsConnected() {
		t.Fatal("reconnected while Down")
	}
	p.Down(false)
	eventually(t, "the reconnect", func() bool { return nc.IsConnected() && nc.Stats().Reconnects == 1 })
	roundTrip(t, nc, "proxied.back")
}

func TestProxyStall(t *testing.T) {
	noLeaks(t)
	s := natstest.NewServer(t)
	p := natstest.NewProxy(t, s.URL())
	nc := connectProxy(t, p)
	nc.SubscribeFunc("svc", func(m *conn.Msg) { m.Respond([]byte("ok")) })
	ctx := ctxT(t)
	nc.Flush(ctx)

	for _, stall := range []func(bool){
		p.Stall,
		func(on bool) { p.StallDirection(natstest.ToServer, on) },
		func(on bool) { p.StallDirection(natstest.ToClient, on) },
	} {
		stall(true)
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err := nc.Request(short, "svc", nil)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("request through a stalled proxy: %v", err)
		}
		stall(false)
		if m, err := nc.Request(ctx, "svc", nil); err != nil || string(m.Data) != "ok" {
			t.Fatalf("request after the stall: %v %v", m, err)
		}
	}
	if p.Conns() != 1 || nc.Stats().Reconnects != 0 {
		t.Fatal("a stall cut the connection")
	}
}

func TestProxyThrottle(t *testing.T) {
	noLeaks(t)
	s := natstest.NewServer(t)
	p := natstest.NewProxy(t, s.URL())
	nc := connectProxy(t, p)
	sub, _ := nc.Subscribe("bulk")
	ctx := ctxT(t)
	nc.Flush(ctx)

	const rate = 20_000
	p.Throttle(rate)
	data := bytes.Repeat([]byte("x"), 8_000) // 8 kB up and 8 kB down
	start := time.Now()
	nc.Publish("bulk", data)
	if _, err := sub.NextMsg(ctx); err != nil {
		t.Fatal(err)
	}
	// Each direction needs at least 8000/20000 s, less the token bucket's
	// first burst.
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("8 kB each way at %d B/s took %v", rate, d)
	}
	p.Throttle(0)
	p.ThrottleDirection(natstest.ToClient, 0)
	roundTrip(t, nc, "bulk.free")
}

func TestProxyCorrupt(t *testing.T) {
	noLeaks(t)
	s := natstest.NewServer(t)
	p := natstest.NewProxy(t, s.URL())
	nc := connectProxy(t, p)
	sub, _ := nc.Subscribe("c")
	defer sub.Unsubscribe()
	nc.Flush(ctxT(t))

	p.Corrupt(4) // the next MSG line's first bytes
	nc.Publish("c", []byte("garbled"))
	eventually(t, "a reconnect after the corrupted bytes", func() bool {
		return nc.Stats().Reconnects == 1 && nc.IsConnected()
	})
	if nc.Stats().ProtocolErrors == 0 {
		t.Fatal("no protocol error counted")
	}
	// The corruption was used up: traffic flows again.
	roundTrip(t, nc, "c.after")

	// Garbage towards the server: it closes the connection.
	p.CorruptDirection(natstest.ToServer, 2)
	nc.Publish("c", []byte("x"))
	eventually(t, "a reconnect after garbage to the server", func() bool {
		return nc.Stats().Reconnects == 2 && nc.IsConnected()
	})
	p.Corrupt(0)
	roundTrip(t, nc, "c.clean")
}

func TestProxyUpstreamForms(t *testing.T) {
	noLeaks(t)
	s := natstest.NewServer(t)
	for _, up := range []string{s.URL(), hostPort(s.URL()), "nats://user:pw@" + hostPort(s.URL())} {
		p, err := natstest.StartProxy(up)
		if err != nil {
			t.Fatal(err)
		}
		nc := connectProxy(t, p)
		roundTrip(t, nc, "forms")
		nc.Close()
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatal("second Close:", err)
		}
	}
	if _, err := natstest.StartProxy("nats://"); err == nil {
		t.Fatal("a proxy without upstream")
	}
}

func connectProxy(t *testing.T, p *natstest.Proxy) *conn.Conn {
	t.Helper()
	nc, err := conn.Connect(ctxT(t), p.URL(), fastReconnect...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}
