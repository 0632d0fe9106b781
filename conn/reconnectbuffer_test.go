package conn_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
)

func TestReconnectBufferDisabled(t *testing.T) {
	s := coreServer(t)
	p := testutil.Proxy(t, s.URL())
	ev := &testutil.Events{}
	nc := connect(t, p.URL(), conn.ReconnectBuffer(-1), testutil.FastReconnect(), ev.Opt())
	p.Refuse(true)
	p.CutAll()
	eventually(t, "disconnect", func() bool { return !nc.IsConnected() })
	start := time.Now()
	if err := nc.Publish("f27", []byte("x")); !errors.Is(err, conn.ErrReconnectBuffer) {
		t.Fatalf("publish while disconnected: %v", err)
	}
	if _, err := nc.Request(ctxT(t), "f27", nil); !errors.Is(err, conn.ErrReconnectBuffer) {
		t.Fatalf("request while disconnected: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("failing publishes took %v", d)
	}
	if nc.Stats().RequestsPending != 0 {
		t.Fatal("failed request left pending")
	}
	p.Refuse(false)
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	if err := nc.Publish("f27", []byte("x")); err != nil {
		t.Fatal(err)
	}
}

func TestReconnectBufferLimit(t *testing.T) {
	s := coreServer(t)
	p := testutil.Proxy(t, s.URL())
	watcher := connect(t, s.URL()) // stays connected
	sub, _ := watcher.Subscribe("f27.b")
	if err := watcher.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	ev := &testutil.Events{}
	const limit = 2048
	nc := connect(t, p.URL(), conn.ReconnectBuffer(limit), testutil.FastReconnect(), ev.Opt())
	p.Refuse(true)
	p.CutAll()
	eventually(t, "disconnect", func() bool { return !nc.IsConnected() })
	payload := func(i int) []byte { return []byte(fmt.Sprintf("%03d:%s", i, strings.Repeat("x", 96))) }
	accepted := 0
	for ; accepted < 100; accepted++ {
		err := nc.Publish("f27.b", payload(accepted))
		if err != nil {
			if !errors.Is(err, conn.ErrReconnectBuffer) {
				t.Fatalf("publish %d: %v", accepted, err)
			}
			break
		}
	}
	if accepted == 0 || accepted*100 > limit {
		t.Fatalf("%d publishes of 100 bytes accepted into a %d-byte buffer", accepted, limit)
	}
	for i := range 5 { // beyond the limit: every one fails at once
		if err := nc.Publish("f27.b", payload(100+i)); !errors.Is(err, conn.ErrReconnectBuffer) {
			t.Fatalf("publish beyond the buffer: %v", err)
		}
	}
	p.Refuse(false)
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	if err := nc.Publish("f27.b", []byte("end")); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		m, err := sub.NextMsg(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		if string(m.Data) == "end" {
			if i != accepted {
				t.Fatalf("%d buffered messages delivered, want %d", i, accepted)
			}
			break
		}
		if !bytes.Equal(m.Data, payload(i)) {
			t.Fatalf("message %d: %q", i, m.Data[:8])
		}
	}
}
