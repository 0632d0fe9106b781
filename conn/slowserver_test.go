package conn_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/internal/testserver"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// F10: server-side slow consumer. The server has a short write deadline;
// the subscriber's link is throttled server→client to 10 KB/s while another
// connection floods its subject. The server must close the subscriber as a
// slow consumer (its own counter says so); the client must report the
// disconnect with a reason — the server's -ERR if one arrives, else the
// broken link — and reconnect; once the throttle is gone the subscription
// receives again.
func TestF10ServerSlowConsumer(t *testing.T) {
	s := slowServer(t, true)
	p := fltProxy(t, fltHostPort(s.URL()))
	ev := &fltEvents{}
	nc := connect(t, p.URL(), fltFastReconnect(), ev.opt())
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
	stopLoad := slowFlood(nc, pub, "f10.flood")
	defer stopLoad()

	srv := waitSlowConsumerClosed(t, s, ev)
	stopLoad()
	p.Throttle(faultproxy.Down, 0)

	d := checkSlowConsumerReason(t, ev)
	t.Logf("server counted %d slow consumer(s); client reported: %v", srv.NumSlowConsumersClients(), d.Err)

	eventually(t, "reconnect", func() bool { return ev.count(conn.EventReconnected) > 0 && nc.IsConnected() })
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

// slowServer starts a server with a short write deadline: a client that
// cannot take its data within it is closed as a slow consumer.
func slowServer(t *testing.T, noJetStream bool) *testserver.Server {
	return testserver.Start(t, testserver.Options{NoJetStream: noJetStream, Configure: func(o *server.Options) {
		o.WriteDeadline = 250 * time.Millisecond
	}})
}

// slowFlood floods subject from pub — far more than the socket buffers
// between the server and a 10 KB/s reader hold — while nc keeps sending a
// little (client → server is not throttled): once the server has closed
// its side, that traffic gets a reset back, which breaks the proxied link
// at once instead of after the megabytes queued at 10 KB/s have trickled
// through. It returns a function that stops both (idempotent).
func slowFlood(nc, pub *conn.Conn, subject string) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		payload := make([]byte, 32<<10)
		for {
			select {
			case <-quit:
				return
			default:
			}
			if err := pub.Publish(subject, payload); err != nil {
				return
			}
		}
	})
	wg.Go(func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
			}
			_ = nc.Publish("f10tick", nil)
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			close(quit)
			wg.Wait()
		})
	}
}

// waitSlowConsumerClosed waits until the server has closed a client as a
// slow consumer and the client has reported a disconnect.
func waitSlowConsumerClosed(t *testing.T, s *testserver.Server, ev *fltEvents) *server.Server {
	t.Helper()
	srv := s.Srv()
	eventually(t, "the server to close a slow consumer", func() bool { return srv.NumSlowConsumersClients() > 0 })
	eventually(t, "the client to report the disconnect", func() bool { return ev.count(conn.EventDisconnected) > 0 })
	return srv
}

// checkSlowConsumerReason checks the reason of the first disconnect: the
// server's -ERR about a slow consumer if it sent one, else the broken link
// (EOF, reset, a network error) — never a client-side diagnosis.
func checkSlowConsumerReason(t *testing.T, ev *fltEvents) conn.Event {
	t.Helper()
	d, _, _ := ev.first(conn.EventDisconnected)
	var se *conn.ServerError
	var ne net.Error
	switch {
	case d.Err == nil:
		t.Fatal("disconnect reported without a reason")
	case errors.As(d.Err, &se):
		if low := strings.ToLower(se.Text); !strings.Contains(low, "slow consumer") && !strings.Contains(low, "write deadline") {
			t.Fatalf("disconnected by a server error that is not about a slow consumer: %v", d.Err)
		}
	case errors.Is(d.Err, io.EOF), errors.Is(d.Err, io.ErrUnexpectedEOF),
		errors.Is(d.Err, syscall.ECONNRESET), errors.Is(d.Err, syscall.EPIPE), errors.As(d.Err, &ne):
	default:
		t.Fatalf("disconnect reason %v: want the server's close (EOF, reset) or its -ERR", d.Err)
	}
	return d
}

// F10, JetStream: messages a pull had delivered into the link the server
// then closed as a slow consumer never reach the client; after the
// reconnect they come again, redelivered after AckWait, and every message
// is received.
func TestF10ServerSlowConsumerJetStreamRedelivery(t *testing.T) {
	s := slowServer(t, false)
	p := fltProxy(t, fltHostPort(s.URL()))
	ev := &fltEvents{}
	nc := connect(t, p.URL(), fltFastReconnect(), ev.opt())
	pub := connect(t, s.URL())
	ctx := ctxT(t)
	js, _ := jsapi.New(nc)
	pjs, _ := jsapi.New(pub)
	if _, err := pjs.CreateStream(ctx, jsapi.StreamConfig{Name: "F10", Subjects: []string{"f10js.>"}, Storage: jsapi.StorageMemory}); err != nil {
		t.Fatal(err)
	}
	const total = 20
	for range total {
		if _, err := pjs.Publish(ctx, "f10js.x", make([]byte, 1024)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := pull.CreateOrUpdate(ctx, js, "F10", jsapi.ConsumerConfig{Durable: "C", AckPolicy: jsapi.AckExplicit, AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Subscribe("f10.>"); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	p.Throttle(faultproxy.Down, 10_000)
	first := make(chan []*jsapi.Msg, 1)
	go func() {
		fctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		msgs, _ := c.Fetch(fctx, total)
		first <- msgs
	}()
	// All of them are on their way into the throttled link.
	eventually(t, "the pull to be served", func() bool {
		info, err := pjs.Consumer(ctx, "F10", "C")
		return err == nil && info.NumAckPending == total
	})
	stopLoad := slowFlood(nc, pub, "f10.flood")
	defer stopLoad()
	waitSlowConsumerClosed(t, s, ev)
	stopLoad()
	p.Throttle(faultproxy.Down, 0)
	checkSlowConsumerReason(t, ev)
	eventually(t, "reconnect", func() bool { return ev.count(conn.EventReconnected) > 0 && nc.IsConnected() })

	var arrived []*jsapi.Msg
	select {
	case arrived = <-first:
	case <-ctx.Done():
		t.Fatal("Fetch did not return")
	}
	seen := map[uint64]bool{}
	for _, m := range arrived {
		md, _ := m.Metadata()
		seen[md.StreamSeq] = true
		if err := m.AckSync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	lost := total - len(seen)
	if lost == 0 {
		t.Fatal("every message got through the throttled link: nothing was lost with it")
	}
	redelivered := 0
	for len(seen) < total {
		if ctx.Err() != nil {
			t.Fatalf("%d of %d messages received after the slow-consumer close", len(seen), total)
		}
		fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		msgs, err := c.Fetch(fctx, total)
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("fetch after the reconnect: %v", err)
		}
		for _, m := range msgs {
			md, _ := m.Metadata()
			if !seen[md.StreamSeq] && md.NumDelivered >= 2 {
				redelivered++
			}
			seen[md.StreamSeq] = true
			if err := m.AckSync(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d of %d got through before the close; %d redelivered after AckWait", len(arrived), total, redelivered)
	if redelivered != lost {
		t.Fatalf("%d messages lost with the link, %d came back as redeliveries", lost, redelivered)
	}
}
