package conn_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/natstest"
)

func tlsURL(s *natstest.Server) string { return strings.Replace(s.URL(), "nats://", "tls://", 1) }

// serverTLSVersions returns the TLS versions of the server's client
// connections, as the server reports them.
func serverTLSVersions(t *testing.T, s *natstest.Server) []string {
	t.Helper()
	cz, err := s.Server().Connz(&server.ConnzOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range cz.Conns {
		out = append(out, c.TLSVersion)
	}
	return out
}

func TestTLSRootCAs(t *testing.T) {
	certs := natstest.GenerateCerts(t)
	s := natstest.NewServer(t, natstest.JetStream(false), natstest.TLS(certs))

	t.Run("TLSURL", func(t *testing.T) {
		nc := connect(t, tlsURL(s), conn.RootCAs(certs.CAFile))
		roundTrip(t, nc, "tls.url")
		if !nc.ServerInfo().TLSRequired {
			t.Fatal("server INFO does not require TLS")
		}
	})
	t.Run("NatsURLUpgrades", func(t *testing.T) {
		// The server requires TLS: a nats:// URL is upgraded, verified
		// against the given roots.
		roundTrip(t, connect(t, s.URL(), conn.RootCAs(certs.CAFile)), "tls.nats")
	})
	t.Run("TLSConfig", func(t *testing.T) {
		roundTrip(t, connect(t, tlsURL(s), conn.TLS(&tls.Config{RootCAs: certs.CAPool})), "tls.cfg")
	})
	for name, url := range map[string]string{"NoCA": tlsURL(s), "NoCANatsURL": s.URL()} {
		t.Run(name, func(t *testing.T) {
			// Verification is on by default: the system roots do not
			// know the test CA.
			err := connectErr(t, url)
			var ua x509.UnknownAuthorityError
			if !errors.As(err, &ua) {
				t.Fatalf("got %v, want x509.UnknownAuthorityError", err)
			}
		})
	}
	t.Run("WrongName", func(t *testing.T) {
		err := connectErr(t, tlsURL(s), conn.TLS(&tls.Config{RootCAs: certs.CAPool, ServerName: "nats.example.com"}))
		var he x509.HostnameError
		if !errors.As(err, &he) {
			t.Fatalf("got %v, want x509.HostnameError", err)
		}
	})
	t.Run("ReconnectOverTLS", func(t *testing.T) {
		nc := connect(t, tlsURL(s), conn.RootCAs(certs.CAFile), testutil.FastReconnect())
		sub, err := nc.Subscribe("tls.re")
		if err != nil {
			t.Fatal(err)
		}
		nc.Flush(ctxT(t))
		if err := s.Restart(); err != nil {
			t.Fatal(err)
		}
		eventually(t, "reconnect over TLS", func() bool { return nc.Stats().Reconnects == 1 && nc.IsConnected() })
		if err := nc.Publish("tls.re", []byte("again")); err != nil {
			t.Fatal(err)
		}
		if m, err := sub.NextMsg(ctxT(t)); err != nil || string(m.Data) != "again" {
			t.Fatalf("after reconnect: %v %v", m, err)
		}
	})
}

func TestTLSMutual(t *testing.T) {
	certs := natstest.GenerateCerts(t)
	s := natstest.NewServer(t, natstest.JetStream(false), natstest.MutualTLS(certs))
	t.Run("ClientCert", func(t *testing.T) {
		nc := connect(t, tlsURL(s), conn.RootCAs(certs.CAFile), conn.ClientCert(certs.ClientCertFile, certs.ClientKeyFile))
		roundTrip(t, nc, "mtls")
		if !nc.ServerInfo().TLSVerify {
			t.Fatal("server INFO does not announce tls_verify")
		}
	})
	t.Run("NoClientCert", func(t *testing.T) {
		start := time.Now()
		err := connectErr(t, tlsURL(s), conn.RootCAs(certs.CAFile), conn.ConnectTimeout(3*time.Second))
		if err == nil {
			t.Fatal("connected to an mTLS server without a client certificate")
		}
		if !errors.Is(err, conn.ErrNoServers) || errors.Is(err, conn.ErrTimeout) {
			t.Fatalf("got %v; want a prompt TLS rejection", err)
		}
		t.Logf("rejected: %v", err)
		if !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("error does not name the certificate problem: %v", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("rejection took %v", d)
		}
	})
	t.Run("BadClientCertFiles", func(t *testing.T) {
		err := connectErr(t, tlsURL(s), conn.ClientCert(certs.ClientCertFile, certs.ServerKeyFile))
		if !errors.Is(err, conn.ErrInvalidOption) {
			t.Fatalf("mismatched key: got %v, want ErrInvalidOption", err)
		}
	})
}

func TestTLSHandshakeFirst(t *testing.T) {
	certs := natstest.GenerateCerts(t)
	s := natstest.NewServer(t, natstest.JetStream(false), natstest.TLS(certs), natstest.TLSHandshakeFirst())

	t.Run("Works", func(t *testing.T) {
		nc := connect(t, tlsURL(s), conn.TLSHandshakeFirst(), conn.RootCAs(certs.CAFile), testutil.FastReconnect())
		roundTrip(t, nc, "hsf")
		if err := s.Restart(); err != nil {
			t.Fatal(err)
		}
		eventually(t, "reconnect with handshake first", func() bool { return nc.Stats().Reconnects == 1 && nc.IsConnected() })
		roundTrip(t, nc, "hsf2")
	})
	for name, url := range map[string]string{"PlainClient": s.URL(), "TLSClientNotFirst": tlsURL(s)} {
		t.Run(name, func(t *testing.T) {
			// The client waits for an INFO that never comes; the connect
			// timeout bounds the attempt (the server would wait 5 s).
			start := time.Now()
			err := connectErr(t, url, conn.RootCAs(certs.CAFile), conn.ConnectTimeout(300*time.Millisecond))
			// ErrTimeout is the documented class; a bare deadline error
			// is tolerated here (see TestTLSHandshakeFirstMismatchIsErrTimeout).
			if !errors.Is(err, conn.ErrTimeout) && !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("got %v, want a timeout", err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("failing took %v, connect timeout was 300ms", d)
			}
		})
	}
	t.Run("HandshakeFirstAgainstRegularServer", func(t *testing.T) {
		regular := natstest.NewServer(t, natstest.JetStream(false), natstest.TLS(certs))
		start := time.Now()
		err := connectErr(t, tlsURL(regular), conn.TLSHandshakeFirst(), conn.RootCAs(certs.CAFile), conn.ConnectTimeout(3*time.Second))
		if err == nil || errors.Is(err, conn.ErrTimeout) {
			t.Fatalf("got %v, want a prompt TLS error (the server speaks INFO first)", err)
		}
		t.Logf("rejected: %v", err)
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("failing took %v", d)
		}
	})
}

// TestTLSHandshakeFirstMismatchIsErrTimeout: an attempt cut by
// ConnectTimeout fails with ErrTimeout, every time. The server here never
// sends INFO, as a handshake_first server does to a plain client.
func TestTLSHandshakeFirstMismatchIsErrTimeout(t *testing.T) {
	s := startFake(t) // connections nobody takes are held open, silent
	for i := range 20 {
		err := connectErr(t, s.URL(), conn.ConnectTimeout(20*time.Millisecond))
		if !errors.Is(err, conn.ErrTimeout) {
			t.Fatalf("attempt %d: got %v, want ErrTimeout", i, err)
		}
	}
}

// TestTLSMinVersionRaised: a TLS config with MinVersion TLS 1.0 is raised
// to 1.2, so a server that speaks at most TLS 1.1 is refused.
func TestTLSMinVersionRaised(t *testing.T) {
	certs := natstest.GenerateCerts(t)
	old := natstest.NewServer(t, natstest.JetStream(false), natstest.TLS(certs), natstest.Configure(func(o *server.Options) {
		o.TLSConfig.MinVersion = tls.VersionTLS10
		o.TLSConfig.MaxVersion = tls.VersionTLS11
		o.TLSConfig.CipherSuites = nil
	}))
	weak := &tls.Config{MinVersion: tls.VersionTLS10, RootCAs: certs.CAPool}

	// Control: the old server does complete a TLS 1.1 handshake with a
	// client that allows it.
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(old.URL(), "nats://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.HasPrefix(line, "INFO ") {
		t.Fatalf("reading INFO: %q %v", line, err)
	}
	ctl := weak.Clone()
	ctl.ServerName = "127.0.0.1"
	tc := tls.Client(c, ctl)
	if err := tc.Handshake(); err != nil {
		t.Skipf("cannot set up a TLS 1.1 server here: %v", err)
	}
	if v := tc.ConnectionState().Version; v != tls.VersionTLS11 {
		t.Fatalf("control handshake negotiated %s", tls.VersionName(v))
	}

	err = connectErr(t, tlsURL(old), conn.TLS(weak))
	if err == nil {
		t.Fatal("connected over TLS < 1.2")
	}
	if !strings.Contains(err.Error(), "protocol version") {
		t.Fatalf("got %v, want a protocol version failure", err)
	}

	// Against a modern server the same config negotiates ≥ 1.2.
	s := natstest.NewServer(t, natstest.JetStream(false), natstest.TLS(certs))
	nc := connect(t, tlsURL(s), conn.TLS(weak))
	roundTrip(t, nc, "tlsver")
	for _, v := range serverTLSVersions(t, s) {
		if v != "1.2" && v != "1.3" {
			t.Fatalf("server reports TLS version %q", v)
		}
	}
	if weak.MinVersion != tls.VersionTLS10 {
		t.Fatal("the caller's tls.Config was modified")
	}
}

func TestTLSRequiredButServerPlain(t *testing.T) {
	certs := natstest.GenerateCerts(t)
	s := natstest.NewServer(t, natstest.JetStream(false))
	for name, tc := range map[string]struct {
		url  string
		opts []conn.Option
	}{
		"TLSURL":          {tlsURL(s), nil},
		"RootCAsNatsURL":  {s.URL(), []conn.Option{conn.RootCAs(certs.CAFile)}},
		"TLSConfigOption": {s.URL(), []conn.Option{conn.TLS(&tls.Config{RootCAs: certs.CAPool})}},
	} {
		t.Run(name, func(t *testing.T) {
			err := connectErr(t, tc.url, append(tc.opts, conn.UserInfo("u", "tls-only-secret"))...)
			if !errors.Is(err, conn.ErrTLSRequired) {
				t.Fatalf("got %v, want ErrTLSRequired", err)
			}
		})
	}
	// No CONNECT (and so no credential) went out in plaintext.
	eventually(t, "the server to see the clients go", func() bool { return s.Server().NumClients() == 0 })
	cz, err := s.Server().Connz(&server.ConnzOptions{State: server.ConnClosed, Username: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cz.Conns {
		if c.AuthorizedUser != "" || c.Name != "" || c.Lang != "" {
			t.Fatalf("server saw a CONNECT from a client that wanted TLS: %+v", c)
		}
	}
}

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
