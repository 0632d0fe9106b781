package testutil

import (
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
	"github.com/natsio/natsio/natstest"
)

// SlowConsumerServer starts a server with a short write deadline (250 ms):
// a client that cannot take its data within it is closed as a slow
// consumer.
func SlowConsumerServer(t testing.TB, noJetStream bool) *natstest.Server {
	return natstest.NewServer(t, natstest.JetStream(!noJetStream), natstest.Configure(func(o *server.Options) {
		o.WriteDeadline = 250 * time.Millisecond
	}))
}

// SlowFlood floods subject from pub — far more than the socket buffers
// between the server and a 10 KB/s reader hold — while nc keeps sending a
// little (client → server is not throttled): once the server has closed
// its side, that traffic gets a reset back, which breaks a proxied link
// at once instead of after the megabytes queued at 10 KB/s have trickled
// through. It returns a function that stops both (idempotent).
func SlowFlood(nc, pub *conn.Conn, subject string) (stop func()) {
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
			_ = nc.Publish("slowflood.tick", nil)
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

// WaitSlowConsumerClosed waits until the server has closed a client as a
// slow consumer and the client has reported a disconnect to ev.
func WaitSlowConsumerClosed(t testing.TB, s *natstest.Server, ev *Events) *server.Server {
	t.Helper()
	srv := s.Server()
	Eventually(t, "the server to close a slow consumer", func() bool { return srv.NumSlowConsumersClients() > 0 })
	Eventually(t, "the client to report the disconnect", func() bool { return ev.Count(conn.EventDisconnected) > 0 })
	return srv
}

// CheckSlowConsumerReason checks the reason of the first disconnect in ev:
// the server's -ERR about a slow consumer if it sent one, else the broken
// link (EOF, reset, a network error) — never a client-side diagnosis.
func CheckSlowConsumerReason(t testing.TB, ev *Events) conn.Event {
	t.Helper()
	d, _, _ := ev.First(conn.EventDisconnected)
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
