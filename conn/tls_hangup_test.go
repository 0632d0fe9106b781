package conn_test

import (
	"crypto/tls"
	"sync/atomic"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/natstest"
)

// hangUpAfterTLS is a fake server that announces TLS, completes the TLS
// handshake, then hangs up before answering anything. It returns the
// server and the count of completed handshakes.
func hangUpAfterTLS(t *testing.T, certs *natstest.Certs) (*fake, *atomic.Int64) {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(certs.ServerCertFile, certs.ServerKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	var handshakes atomic.Int64
	info := fakeserver.DefaultInfo().With("tls_required", true)
	s := startFake(t, withTLS(&tls.Config{Certificates: []tls.Certificate{cert}}),
		withSession(func(c *fakeserver.Client) {
			if c.SendInfo(info) == nil {
				handshakes.Add(1)
			}
		}))
	return s, &handshakes
}

// F34: a server that drops the connection right after the TLS handshake
// makes each reconnect attempt fail with an error, never a hang, and the
// reconnect loop keeps going until a working server is back; then the
// connection works again.
func TestHangUpAfterTLSHandshakeKeepsReconnecting(t *testing.T) {
	certs := natstest.GenerateCerts(t)
	s := natstest.NewServer(t, natstest.JetStream(false), natstest.TLS(certs))
	bad, handshakes := hangUpAfterTLS(t, certs)
	p := testutil.Proxy(t, s.URL())
	ev := &testutil.Events{}
	nc := connect(t, "tls://"+p.Addr(), conn.RootCAs(certs.CAFile), testutil.FastReconnect(), ev.Opt())
	roundTrip(t, nc, "f34.before")

	p.SetTarget(bad.Addr())
	p.CutAll()
	eventually(t, "three failed attempts against the EOF server", func() bool { return handshakes.Load() >= 3 })
	if nc.IsClosed() {
		t.Fatal("the connection closed instead of retrying")
	}
	if n := ev.Count(conn.EventReconnected); n != 0 {
		t.Fatalf("%d reconnections reported against a server that hangs up", n)
	}

	p.SetTarget(testutil.HostPort(s.URL()))
	eventually(t, "reconnection to the working server", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	roundTrip(t, nc, "f34.after")
}
