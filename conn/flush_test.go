package conn_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/internal/testutil"
)

func TestFlushAcrossCut(t *testing.T) {
	s := coreServer(t)
	p := testutil.Proxy(t, s.URL())
	ev := &testutil.Events{}
	// No keepalive PINGs: every outstanding PING is a Flush's.
	nc := connect(t, p.URL(), testutil.FastReconnect(), ev.Opt(), conn.PingInterval(time.Hour), conn.MaxPingsOutstanding(2))
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	p.Stall(faultproxy.Down, true)
	const n = 3
	errs := make(chan error, n)
	for range n {
		go func() { errs <- nc.Flush(ctxT(t)) }()
	}
	eventually(t, "flushes pending", func() bool { return conn.PendingPongs(nc) == n })
	p.CutAll()
	for i := range n {
		if err := recvErr(t, errs, 5*time.Second, "pending Flush"); !errors.Is(err, conn.ErrDisconnected) {
			t.Fatalf("flush %d across the cut: %v", i, err)
		}
	}
	p.Stall(faultproxy.Down, false)
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	for i := range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := nc.Flush(ctx)
		cancel()
		if err != nil {
			t.Fatalf("flush %d after reconnect: %v", i, err)
		}
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if err := nc.Flush(ctxT(t)); err != nil {
				t.Errorf("concurrent flush: %v", err)
			}
		})
	}
	wg.Wait()
	eventually(t, "PONG FIFO empty", func() bool { return conn.PendingPongs(nc) == 0 })
	if ev.Count(conn.EventDisconnected) != 1 {
		t.Fatalf("events: %v", ev)
	}
}
