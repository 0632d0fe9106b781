package conn_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/leakcheck"
	"github.com/natsio/natsio/natstest"
)

// Connect, subscribe (iterator and callback), request, a forced reconnect
// and Close leave no goroutine of natsio running.
func TestNoGoroutineLeak(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	before := leakcheck.Snapshot()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, s.URL(), conn.ReconnectBackoff(10*time.Millisecond, 50*time.Millisecond), conn.ReconnectJitter(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.SubscribeFunc("leak.echo", func(m *conn.Msg) { m.Respond(m.Data) }); err != nil {
		t.Fatal(err)
	}
	sub, err := nc.Subscribe("leak.iter")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Request(ctx, "leak.echo", []byte("x")); err != nil {
		t.Fatal(err)
	}
	nc.ForceReconnect()
	if _, err := nc.Request(ctx, "leak.echo", []byte("y")); err != nil {
		t.Fatal(err)
	}
	// An iterator blocked in Messages when the connection closes.
	done := make(chan error, 1)
	go func() {
		var last error
		for _, err := range sub.Messages(context.Background()) {
			if err != nil {
				last = err
				break
			}
		}
		done <- last
	}()
	if err := nc.Publish("leak.iter", []byte("z")); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("Messages did not end on Close")
	}
	leakcheck.Wait(t, before, 10*time.Second)
}

// goroutinesStartedByConn lists the goroutines started by package conn that are
// still running.
func goroutinesStartedByConn() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		// Only goroutines of a synctest bubble, the caller's: one an
		// earlier test's connection left exiting is not the caller's.
		header, _, _ := strings.Cut(g, "\n")
		if strings.Contains(header, "synctest bubble") && strings.Contains(g, "created by github.com/natsio/natsio/conn.") {
			out = append(out, g)
		}
	}
	return out
}
