package compat

import (
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/proto"
)

// connect connects to s, reconnecting quickly and for as long as the test
// runs.
func connect(t *testing.T, s *server) *conn.Conn {
	t.Helper()
	nc, err := conn.Connect(testCtx(t), s.URL(), conn.ReconnectWait(20*time.Millisecond), conn.MaxReconnects(-1))
	if err != nil {
		t.Fatalf("connect %s: %v", s.URL(), err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	return nc
}

func runCore(t *testing.T, v version, s *server) {
	t.Run("pubsub", func(t *testing.T) {
		record(t, v, "pub/sub", cellWorks)
		nc := connect(t, s)
		sub, err := nc.Subscribe("core.ps")
		if err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		if err := nc.Publish("core.ps", []byte("hello")); err != nil {
			t.Fatal(err)
		}
		m, err := sub.NextMsg(testCtx(t))
		if err != nil || string(m.Data) != "hello" {
			t.Fatalf("got %v, %v", m, err)
		}
	})
	t.Run("headers", func(t *testing.T) {
		record(t, v, "headers", cellWorks)
		nc := connect(t, s)
		if !nc.ServerInfo().Headers {
			t.Fatal("server does not announce headers")
		}
		sub, err := nc.Subscribe("core.h")
		if err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		h := proto.NewHeader("X-One", "1", "X-Two", "two words")
		if err := nc.PublishMsg("core.h", "", h, []byte("x")); err != nil {
			t.Fatal(err)
		}
		m, err := sub.NextMsg(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if m.Header.Get("X-One") != "1" || m.Header.Get("X-Two") != "two words" {
			t.Fatalf("headers %v", m.Header)
		}
	})
	t.Run("request", func(t *testing.T) {
		record(t, v, "request/reply", cellWorks)
		nc := connect(t, s)
		sub, err := nc.SubscribeFunc("core.echo", func(m *conn.Msg) { _ = m.Respond(append([]byte("re:"), m.Data...)) })
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
		if err := nc.Flush(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		r, err := nc.Request(testCtx(t), "core.echo", []byte("ping"))
		if err != nil || string(r.Data) != "re:ping" {
			t.Fatalf("reply %v, %v", r, err)
		}
		if _, err := nc.Request(testCtx(t), "core.nobody", nil); !errors.Is(err, conn.ErrNoResponders) {
			t.Fatalf("request without responder: %v, want ErrNoResponders", err)
		}
	})
	t.Run("queue", func(t *testing.T) {
		record(t, v, "queue groups", cellWorks)
		nc := connect(t, s)
		const n = 100
		var (
			mu    sync.Mutex
			seen  = map[string]int{}
			total int
			done  = make(chan struct{})
		)
		handler := func(m *conn.Msg) {
			mu.Lock()
			defer mu.Unlock()
			seen[string(m.Data)]++
			if total++; total == n {
				close(done)
			}
		}
		for range 2 {
			if _, err := nc.QueueSubscribeFunc("core.q", "workers", handler); err != nil {
				t.Fatal(err)
			}
		}
		if err := nc.Flush(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := nc.Publish("core.q", []byte(strconv.Itoa(i))); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case <-done:
		case <-testCtx(t).Done():
			t.Fatal("not every message was delivered")
		}
		mu.Lock()
		defer mu.Unlock()
		if len(seen) != n {
			t.Fatalf("%d distinct messages among %d deliveries, want %d once each", len(seen), total, n)
		}
	})
	t.Run("reconnect", func(t *testing.T) {
		record(t, v, "reconnect after a restart", cellWorks)
		nc := connect(t, s)
		reconnected := make(chan struct{}, 1)
		nc.OnReconnect(func() {
			select {
			case reconnected <- struct{}{}:
			default:
			}
		})
		sub, err := nc.Subscribe("core.rc")
		if err != nil {
			t.Fatal(err)
		}
		s.restart()
		select {
		case <-reconnected:
		case <-testCtx(t).Done():
			t.Fatal("no reconnect after the server restarted")
		}
		// The subscription was sent again ahead of anything published.
		if err := nc.Publish("core.rc", []byte("after")); err != nil {
			t.Fatal(err)
		}
		m, err := sub.NextMsg(testCtx(t))
		if err != nil || string(m.Data) != "after" {
			t.Fatalf("after reconnect: %v, %v", m, err)
		}
	})
}
