package testserver

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/natsio/natsio/natstest"
)

// Server is one embedded nats-server, a natstest.Server seen through the
// API the repository's tests were written against. It is safe for
// concurrent use.
type Server struct {
	ns *natstest.Server
}

// Start starts a server configured by opts, waits until it accepts
// connections and registers a cleanup that shuts it down. Any failure ends
// the test with t.Fatal.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	no, err := opts.natstest(false)
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	return &Server{ns: natstest.NewServer(t, no...)}
}

// NATSTest returns the natstest.Server underneath.
func (s *Server) NATSTest() *natstest.Server { return s.ns }

// Restart shuts the server down and starts it again on the same ports
// (client, WebSocket and cluster) with the same JetStream store directory,
// so streams and their messages survive. It returns once the new instance
// accepts connections.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if err := s.ns.Restart(); err != nil {
		t.Fatalf("testserver: %v", err)
	}
}

// Shutdown stops the server and waits until it is fully down. It is a no-op
// when the server is not running. URL and Port keep returning the old
// address, which makes it easy to test reconnects.
func (s *Server) Shutdown() { s.ns.Shutdown() }

// LameDuck puts the server into lame duck mode in the background
// (natstest.Server.LameDuck). The returned channel is closed when that has
// finished. Restart brings the server back afterwards.
func (s *Server) LameDuck() <-chan struct{} { return s.ns.LameDuck() }

// URL returns the client URL, nats://127.0.0.1:PORT (also with TLS; the
// server announces tls_required in its INFO).
func (s *Server) URL() string { return s.ns.URL() }

// WSURL returns ws://127.0.0.1:PORT (wss:// with WebSocket TLS), or "" when
// no WebSocket listener is configured.
func (s *Server) WSURL() string { return s.ns.WebSocketURL() }

// Port returns the client port.
func (s *Server) Port() int { return s.ns.Port() }

// ClusterPort returns the route listen port, or 0 outside a cluster.
func (s *Server) ClusterPort() int { return s.ns.ClusterPort() }

// Srv returns the running nats-server, or nil after Shutdown.
func (s *Server) Srv() *server.Server { return s.ns.Server() }

// StoreDir returns the JetStream store directory.
func (s *Server) StoreDir() string { return s.ns.StoreDir() }

// ClientCount returns the number of connected clients, 0 when not running.
func (s *Server) ClientCount() int { return s.ns.ClientCount() }

// Running reports whether the server is up (false after Shutdown or a
// completed lame duck shutdown).
func (s *Server) Running() bool { return s.ns.Running() }
