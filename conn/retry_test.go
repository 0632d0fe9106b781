package conn_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/leakcheck"
	"github.com/natsio/natsio/natstest"
)

// A connection made with RetryOnFailedConnect while its server is down:
// Connect returns it disconnected, each failed attempt is an event,
// WaitConnected is bounded by its ctx, and once the server starts the
// subscriptions made before and the publishes buffered meanwhile work.
func TestRetryOnFailedConnectServerStartsLater(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	before := leakcheck.Snapshot()
	defer leakcheck.Wait(t, before, 10*time.Second)
	url := s.URL()
	s.Shutdown() // its port stays reserved for the Restart below

	evs := make(chan conn.Event, 256)
	nc, err := conn.Connect(ctxT(t), url, conn.RetryOnFailedConnect(),
		conn.ReconnectWait(20*time.Millisecond), conn.ReconnectJitter(0),
		conn.OnEvent(func(ev conn.Event) { evs <- ev }))
	if err != nil {
		t.Fatalf("Connect with RetryOnFailedConnect: %v", err)
	}
	defer nc.Close()
	if nc.IsConnected() {
		t.Fatal("connected to a server that is down")
	}

	sub, err := nc.Subscribe("early.>")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 4)
	fsub, err := nc.SubscribeFunc("early.func", func(m *conn.Msg) { got <- string(m.Data) })
	if err != nil {
		t.Fatal(err)
	}
	defer fsub.Unsubscribe()
	if err := nc.Publish("early.func", []byte("buffered")); err != nil {
		t.Fatalf("publish before the first connection: %v", err)
	}
	if nc.Buffered() == 0 {
		t.Fatal("the publish was not buffered")
	}

	// An attempt was made and reported.
	ev := <-evs
	if ev.Kind != conn.EventAttemptFailed || ev.Err == nil || ev.Server == "" {
		t.Fatalf("first event %+v, want an EventAttemptFailed with its reason", ev)
	}
	expired, cancel := context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	if err := nc.WaitConnected(expired); !errors.Is(err, conn.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitConnected with an expired ctx: %v", err)
	}

	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := nc.WaitConnected(ctxT(t)); err != nil {
		t.Fatalf("WaitConnected: %v", err)
	}
	for ev := range evs {
		if ev.Kind == conn.EventConnected {
			break
		}
		if ev.Kind != conn.EventAttemptFailed {
			t.Fatalf("event %v before EventConnected", ev.Kind)
		}
	}
	if m := <-got; m != "buffered" {
		t.Fatalf("the buffered publish arrived as %q", m)
	}
	if err := nc.Publish("early.x", []byte("after")); err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != "early.func" || string(m.Data) != "buffered" {
		t.Fatalf("iterator got %s %q first, want the buffered publish", m.Subject, m.Data)
	}
	if m, err = sub.NextMsg(ctxT(t)); err != nil || string(m.Data) != "after" {
		t.Fatalf("iterator: %v %v", m, err)
	}
	if st := nc.Stats(); st.Reconnects != 0 {
		t.Fatalf("the first connection counted as a reconnect: %+v", st)
	}
	if err := nc.WaitConnected(ctxT(t)); err != nil {
		t.Fatalf("WaitConnected while connected: %v", err)
	}
	nc.Close()
	if err := nc.WaitConnected(ctxT(t)); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("WaitConnected after Close: %v", err)
	}
}

// With MaxReconnects, a connection that never reached its server closes
// with ErrNoServers, and WaitConnected says so.
func TestRetryOnFailedConnectGivesUp(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	url := s.URL()
	s.Shutdown()
	nc, err := conn.Connect(ctxT(t), url, conn.RetryOnFailedConnect(), conn.MaxReconnects(3),
		conn.ReconnectWait(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	err = nc.WaitConnected(ctxT(t))
	if !errors.Is(err, conn.ErrClosed) || !errors.Is(err, conn.ErrNoServers) {
		t.Fatalf("WaitConnected: %v, want ErrClosed and ErrNoServers", err)
	}
}

// Without RetryOnFailedConnect, Connect fails at once, with every
// attempt's error joined.
func TestConnectFailsWithEveryAttempt(t *testing.T) {
	a := natstest.NewServer(t, natstest.JetStream(false))
	b := natstest.NewServer(t, natstest.JetStream(false))
	urls := []string{a.URL(), b.URL()}
	a.Shutdown()
	b.Shutdown()
	nc, err := conn.Connect(ctxT(t), strings.Join(urls, ","))
	if err == nil {
		nc.Close()
		t.Fatal("Connect succeeded")
	}
	if !errors.Is(err, conn.ErrNoServers) {
		t.Fatalf("Connect: %v, want ErrNoServers", err)
	}
	for _, u := range urls {
		if !strings.Contains(err.Error(), u) {
			t.Fatalf("Connect: %v does not name %s", err, u)
		}
	}
}

// Closing a connection that never connected ends its attempts, fails its
// buffered publishes' fate as lost bytes, and leaves no goroutine.
func TestRetryOnFailedConnectClosedBeforeConnecting(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	before := leakcheck.Snapshot()
	defer leakcheck.Wait(t, before, 10*time.Second)
	url := s.URL()
	s.Shutdown()
	nc, err := conn.Connect(ctxT(t), url, conn.RetryOnFailedConnect(), conn.ReconnectWait(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Subscribe("never"); err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("never", []byte("lost")); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); !errors.Is(err, conn.ErrDisconnected) {
		t.Fatalf("Flush before the first connection: %v", err)
	}
	nc.Close()
	if st := nc.Stats(); st.LostBytes == 0 || st.Connects != 0 {
		t.Fatalf("stats after closing unconnected: %+v", st)
	}
	if err := nc.WaitConnected(ctxT(t)); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("WaitConnected: %v", err)
	}
}
