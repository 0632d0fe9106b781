package testserver

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

const (
	// readyTimeout bounds how long a (re)started server may take to accept
	// connections.
	readyTimeout = 20 * time.Second
	// portFreeTimeout bounds how long Restart waits for its ports.
	portFreeTimeout = 10 * time.Second
)

// Server is one embedded nats-server. It is safe for concurrent use.
type Server struct {
	opts     Options
	confFile string
	storeDir string
	cluster  *clusterSpec
	sink     *logSink

	mu      sync.Mutex
	srv     *server.Server
	ports   ports
	ldmDone chan struct{}
}

// Start starts a server configured by opts, waits until it accepts
// connections and registers a cleanup that shuts it down. Any failure ends
// the test with t.Fatal.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := newServer(t, opts, nil, ports{client: opts.Port})
	if err := s.start(); err != nil {
		t.Fatalf("testserver: start: %v", err)
	}
	return s
}

// newServer prepares (but does not start) a server. The temporary
// directories are created before the cleanup is registered so that the
// cleanup, which runs first, stops the server before they are removed.
func newServer(t testing.TB, opts Options, cl *clusterSpec, p ports) *Server {
	t.Helper()
	s := &Server{opts: opts, storeDir: opts.StoreDir, cluster: cl, ports: p, sink: newLogSink(t)}
	if s.storeDir == "" {
		s.storeDir = t.TempDir()
	}
	if opts.ConfigText != "" {
		s.confFile = filepath.Join(t.TempDir(), "nats-server.conf")
		if err := os.WriteFile(s.confFile, []byte(opts.ConfigText), 0o600); err != nil {
			t.Fatalf("testserver: writing config: %v", err)
		}
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.sink.close()
	})
	return s
}

// start creates and starts a server instance on the remembered ports (or
// random ones the first time) and records the ports actually bound.
func (s *Server) start() error {
	s.mu.Lock()
	p := s.ports
	s.mu.Unlock()

	so, err := serverOptions(&s.opts, s.confFile, s.storeDir, p, s.cluster)
	if err != nil {
		return err
	}
	srv, err := server.NewServer(so)
	if err != nil {
		return err
	}
	name := srv.Name()
	if so.ServerName == "" && len(name) > 8 {
		name = name[:8] // the generated ID is long and unreadable
	}
	lg := &runLogger{sink: s.sink, prefix: "[" + name + "] "}
	debug, trace := s.sink.levels(&s.opts)
	srv.SetLoggerV2(lg, debug, trace, false)
	srv.Start()

	if err := waitReady(srv, lg); err != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
		return err
	}

	np := ports{client: srv.Addr().(*net.TCPAddr).Port}
	if s.opts.WebSocket != nil {
		u, err := url.Parse(srv.WebsocketURL())
		if err == nil {
			np.ws, err = strconv.Atoi(u.Port())
		}
		if err != nil {
			srv.Shutdown()
			srv.WaitForShutdown()
			return fmt.Errorf("websocket port: %w", err)
		}
	}
	if ca := srv.ClusterAddr(); ca != nil {
		np.cluster = ca.Port
	}

	s.mu.Lock()
	s.srv, s.ports = srv, np
	s.mu.Unlock()
	return nil
}

// waitReady polls until srv accepts connections, failing early when the
// server reported a fatal error (for example a port already in use).
func waitReady(srv *server.Server, lg *runLogger) error {
	return waitFor(readyTimeout, func() error {
		if msg := lg.fatalError(); msg != "" {
			return errStop{fmt.Errorf("server failed: %s", msg)}
		}
		if !srv.ReadyForConnections(50 * time.Millisecond) {
			return errors.New("server not ready for connections")
		}
		return nil
	})
}

// Restart shuts the server down and starts it again on the same ports
// (client, WebSocket and cluster) with the same JetStream store directory,
// so streams and their messages survive. It returns once the new instance
// accepts connections.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Shutdown()
	s.mu.Lock()
	p := s.ports
	s.mu.Unlock()
	for _, port := range []int{p.client, p.ws, p.cluster} {
		if err := waitPortFree(port); err != nil {
			t.Fatalf("testserver: restart: %v", err)
		}
	}
	if err := s.start(); err != nil {
		t.Fatalf("testserver: restart: %v", err)
	}
}

func waitPortFree(port int) error {
	if port <= 0 {
		return nil
	}
	addr := net.JoinHostPort(loopback, strconv.Itoa(port))
	return waitFor(portFreeTimeout, func() error {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("port %d still in use: %w", port, err)
		}
		return l.Close()
	})
}

// Shutdown stops the server and waits until it is fully down. It is a no-op
// when the server is not running. URL and Port keep returning the old
// address, which makes it easy to test reconnects.
func (s *Server) Shutdown() {
	s.mu.Lock()
	srv, ldm := s.srv, s.ldmDone
	s.srv, s.ldmDone = nil, nil
	s.mu.Unlock()
	if srv != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
	}
	if ldm != nil {
		<-ldm
	}
}

// LameDuck puts the server into lame duck mode in the background
// (server.LameDuckShutdown): it stops accepting clients, sends them an INFO
// with "ldm":true, closes them spread over LameDuckDuration after
// LameDuckGracePeriod, and shuts down. The returned channel is closed when
// that has finished. Restart brings the server back afterwards.
func (s *Server) LameDuck() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ldmDone != nil {
		return s.ldmDone
	}
	done := make(chan struct{})
	if s.srv == nil {
		close(done)
		return done
	}
	s.ldmDone = done
	srv := s.srv
	go func() {
		defer close(done)
		srv.LameDuckShutdown()
	}()
	return done
}

// URL returns the client URL, nats://127.0.0.1:PORT (also with TLS; the
// server announces tls_required in its INFO).
func (s *Server) URL() string {
	return "nats://" + net.JoinHostPort(loopback, strconv.Itoa(s.Port()))
}

// WSURL returns ws://127.0.0.1:PORT (wss:// with WebSocket TLS), or "" when
// no WebSocket listener is configured.
func (s *Server) WSURL() string {
	if s.opts.WebSocket == nil {
		return ""
	}
	s.mu.Lock()
	port := s.ports.ws
	s.mu.Unlock()
	scheme := "ws://"
	if s.opts.WebSocket.TLS != nil {
		scheme = "wss://"
	}
	return scheme + net.JoinHostPort(loopback, strconv.Itoa(port))
}

// Port returns the client port.
func (s *Server) Port() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ports.client
}

// ClusterPort returns the route listen port, or 0 outside a cluster.
func (s *Server) ClusterPort() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ports.cluster
}

// Srv returns the running nats-server, or nil after Shutdown.
func (s *Server) Srv() *server.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv
}

// StoreDir returns the JetStream store directory.
func (s *Server) StoreDir() string { return s.storeDir }

// ClientCount returns the number of connected clients, 0 when not running.
func (s *Server) ClientCount() int {
	if srv := s.Srv(); srv != nil {
		return srv.NumClients()
	}
	return 0
}

// Running reports whether the server is up (false after Shutdown or a
// completed lame duck shutdown).
func (s *Server) Running() bool {
	srv := s.Srv()
	return srv != nil && srv.Running()
}

// errStop wraps an error that makes waitFor give up immediately.
type errStop struct{ error }

func (e errStop) Unwrap() error { return e.error }

// waitFor polls cond with a small exponential backoff until it returns nil,
// returns an errStop, or timeout passes (then the last error is returned).
func waitFor(timeout time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	delay := 5 * time.Millisecond
	for {
		err := cond()
		if err == nil {
			return nil
		}
		var stop errStop
		if errors.As(err, &stop) {
			return stop.error
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %v: %w", timeout, err)
		}
		time.Sleep(delay)
		if delay < 100*time.Millisecond {
			delay *= 2
		}
	}
}
