package conn_test

import (
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/internal/testutil"
)

// TestWriteTimeoutDropsBlockedLink: when the server stops reading, a
// blocked socket write fails at the write timeout (after between ¾ and all
// of it, armWrite) and the link is dropped and reconnected — even with
// pings far too rare to notice.
func TestWriteTimeoutDropsBlockedLink(t *testing.T) {
	s := coreServer(t)
	p := testutil.Proxy(t, s.URL())
	ev := &testutil.Events{}
	const timeout = 200 * time.Millisecond
	nc := connect(t, p.URL(), conn.WriteTimeout(timeout), conn.PingInterval(time.Hour), conn.MaxPingsOutstanding(2),
		testutil.FastReconnect(), ev.Opt())

	// Writes before the stall renew no deadline each time; they must
	// still go through.
	for range 100 {
		if err := nc.Publish("wt", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}

	p.Stall(faultproxy.Up, true) // the proxy stops reading from the client
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sent atomic.Int64
	wg.Go(func() {
		payload := make([]byte, 64<<10)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if nc.Publish("wt", payload) == nil {
				sent.Add(1)
			}
		}
	})
	defer func() { close(stop); wg.Wait() }()

	eventually(t, "the blocked write dropping the link", func() bool { return ev.Count(conn.EventDisconnected) > 0 })
	d, _, _ := ev.First(conn.EventDisconnected)
	if !os.IsTimeout(d.Err) {
		t.Fatalf("disconnected with %v, want a write timeout", d.Err)
	}
	p.Stall(faultproxy.Up, false)
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) > 0 })
	t.Logf("%d publishes of 64 KiB accepted around the stall", sent.Load())
}
