package conn_test

import (
	"context"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/internal/testutil"
)

// F10: server-side slow consumer. The server has a short write deadline;
// the subscriber's link is throttled server→client to 10 KB/s while another
// connection floods its subject. The server must close the subscriber as a
// slow consumer (its own counter says so); the client must report the
// disconnect with a reason — the server's -ERR if one arrives, else the
// broken link — and reconnect; once the throttle is gone the subscription
// receives again.
func TestServerSideSlowConsumer(t *testing.T) {
	s := testutil.SlowConsumerServer(t, true)
	p := testutil.Proxy(t, s.URL())
	ev := &testutil.Events{}
	nc := connect(t, p.URL(), testutil.FastReconnect(), ev.Opt())
	pub := connect(t, s.URL())
	sub, err := nc.Subscribe("f10.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	// The subscription works before the fault.
	if err := pub.Publish("f10.check", []byte("before")); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(ctxT(t)); err != nil || string(m.Data) != "before" {
		t.Fatalf("before the fault: %v %v", m, err)
	}

	p.Throttle(faultproxy.Down, 10_000)
	stopLoad := testutil.SlowFlood(nc, pub, "f10.flood")
	defer stopLoad()

	srv := testutil.WaitSlowConsumerClosed(t, s, ev)
	stopLoad()
	p.Throttle(faultproxy.Down, 0)

	d := testutil.CheckSlowConsumerReason(t, ev)
	t.Logf("server counted %d slow consumer(s); client reported: %v", srv.NumSlowConsumersClients(), d.Err)

	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) > 0 && nc.IsConnected() })
	if err := nc.Flush(ctxT(t)); err != nil { // the re-sent SUB is in place
		t.Fatal(err)
	}
	if err := pub.Publish("f10.check", []byte("after")); err != nil {
		t.Fatal(err)
	}
	// Flood messages that made it through before the close may come first.
	ctx, cancel := context.WithTimeout(ctxT(t), 10*time.Second)
	defer cancel()
	for {
		m, err := sub.NextMsg(ctx)
		if err != nil {
			t.Fatalf("subscription after the reconnect: %v", err)
		}
		if m.Subject == "f10.check" {
			if string(m.Data) != "after" {
				t.Fatalf("got %q", m.Data)
			}
			break
		}
	}
	if !sub.IsValid() {
		t.Fatal("subscription closed by the slow-consumer episode")
	}
}
