package conn_test

import (
	"crypto/tls"
	"net"
	"sync/atomic"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testserver"
)

// f34EOFAfterHandshake is a server that announces TLS, completes the TLS
// handshake, then hangs up before answering anything.
type f34EOFAfterHandshake struct {
	ln         net.Listener
	handshakes atomic.Int64
	done       chan struct{}
}

func startF34EOFAfterHandshake(t *testing.T, certs *testserver.Certs) *f34EOFAfterHandshake {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(certs.ServerCertFile, certs.ServerKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &f34EOFAfterHandshake{ln: ln, done: make(chan struct{})}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	go func() {
		defer close(f.done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			info := `INFO {"server_id":"F34","version":"2.15.0","proto":1,"headers":true,"max_payload":1048576,"tls_required":true}` + "\r\n"
			if _, err := c.Write([]byte(info)); err != nil {
				c.Close()
				continue
			}
			tc := tls.Server(c, cfg)
			if tc.Handshake() == nil {
				f.handshakes.Add(1)
			}
			tc.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-f.done })
	return f
}

// F34: a server that drops the connection right after the TLS handshake
// makes each reconnect attempt fail with an error, never a hang, and the
// reconnect loop keeps going until a working server is back; then the
// connection works again.
func TestF34EOFAfterTLSHandshakeKeepsReconnecting(t *testing.T) {
	certs := testserver.GenerateCerts(t)
	s := testserver.Start(t, testserver.Options{NoJetStream: true, TLS: certs.ServerTLS(false)})
	bad := startF34EOFAfterHandshake(t, certs)
	p := fltProxy(t, fltHostPort(s.URL()))
	ev := &fltEvents{}
	nc := connect(t, "tls://"+p.Addr(), conn.RootCAs(certs.CAFile), fltFastReconnect(), ev.opt())
	scRoundTrip(t, nc, "f34.before")

	p.SetTarget(bad.ln.Addr().String())
	p.CutAll()
	eventually(t, "three failed attempts against the EOF server", func() bool { return bad.handshakes.Load() >= 3 })
	if nc.IsClosed() {
		t.Fatal("the connection closed instead of retrying")
	}
	if n := ev.count(conn.EventReconnected); n != 0 {
		t.Fatalf("%d reconnections reported against a server that hangs up", n)
	}

	p.SetTarget(fltHostPort(s.URL()))
	eventually(t, "reconnection to the working server", func() bool { return ev.count(conn.EventReconnected) == 1 })
	scRoundTrip(t, nc, "f34.after")
}
