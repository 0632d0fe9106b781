package natstest

import (
	"context"
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
	"github.com/natsio/natsio/conn"
)

const (
	// loopback is the only address servers listen on.
	loopback = "127.0.0.1"
	// readyTimeout bounds how long a (re)started server may take to accept
	// connections.
	readyTimeout = 20 * time.Second
	// portFreeTimeout bounds how long Restart waits for its ports.
	portFreeTimeout = 10 * time.Second
	// connectTimeout bounds Server.Connect.
	connectTimeout = 30 * time.Second
)

// inProcessURL is what URL returns for a server without a client listener.
// The .invalid top-level domain never resolves, so only the in-process
// dialer can reach it.
const inProcessURL = "nats://in-process.natstest.invalid:4222"

// ErrNotRunning is the in-process dialer's error while the server is shut
// down: a connection then retries as it would against a refused socket.
var ErrNotRunning = errors.New("natstest: server not running")

// ErrClosed is returned by Restart after Close.
var ErrClosed = errors.New("natstest: server closed")

// Server is one embedded nats-server listening on a free loopback port
// (none with NoListener). It is safe for concurrent use. Make it with NewServer in a test or with
// Start elsewhere (TestMain, an Example, a program).
//
// The server keeps its ports and its store across Shutdown and Restart;
// Close (or, for NewServer, the end of the test) stops it for good and
// removes the temporary directories it made.
type Server struct {
	cfg     *config
	base    string // temporary directory of the server, removed by Close
	store   string
	conf    string // configuration file, or ""
	certs   *Certs
	cluster *clusterSpec
	sink    *logSink
	ready   func(*server.Server) error // extra readiness condition (leaf nodes)

	mu      sync.Mutex
	srv     *server.Server
	ports   ports
	wsTLS   bool
	ldmDone chan struct{}
	closed  bool
	user    *UserCreds // operator mode: the user Connect logs in as
	sysUser *UserCreds // operator mode: the user ConnectSystem logs in as

	// sysRemote links a leaf's system account to its hub's (SystemAccount).
	sysRemote *server.RemoteLeafOpts
}

// ports holds the listen ports of a server. Zero means "a free port" for
// the client, WebSocket and leaf node listeners and "none" for routes.
type ports struct {
	client, ws, cluster, leaf int
}

// clusterSpec is what a cluster adds to each node's options.
type clusterSpec struct {
	name   string
	routes []*url.URL
}

// NewServer starts a server configured by opts, waits until it accepts
// connections and stops it when tb's test ends (tb.Cleanup), removing its
// temporary store. A failure to start ends the test with tb.Fatalf, so call
// it from the test's goroutine.
func NewServer(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	cfg, err := newConfig(opts)
	if err != nil {
		tb.Fatalf("natstest: %v", err)
	}
	s, err := startServer(tb, cfg, nil, ports{})
	if err != nil {
		tb.Fatalf("natstest: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Start starts a server configured by opts and waits until it accepts
// connections. It needs no testing.TB: use it in TestMain, an Example
// function or a program, and call Close when done (in TestMain before
// os.Exit, which runs no deferred calls). Server logs, when turned on with
// LogEnv, go to standard error.
func Start(opts ...Option) (*Server, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return startServer(nil, cfg, nil, ports{})
}

// startServer prepares and starts a server; on failure nothing is left
// behind.
func startServer(tb testing.TB, cfg *config, cl *clusterSpec, p ports) (*Server, error) {
	s, err := newServer(tb, cfg, cl, p)
	if err != nil {
		return nil, err
	}
	if err := s.start(); err != nil {
		s.Close()
		return nil, fmt.Errorf("start: %w", err)
	}
	return s, nil
}

// newServer prepares (but does not start) a server: its temporary
// directory, store, certificates and configuration file.
func newServer(tb testing.TB, cfg *config, cl *clusterSpec, p ports) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	base, err := os.MkdirTemp("", "natstest-*")
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, base: base, store: cfg.storeDir, cluster: cl, ports: p, sink: newLogSink(tb)}
	fail := func(err error) (*Server, error) {
		s.Close()
		return nil, err
	}
	if s.store == "" {
		s.store = filepath.Join(base, "store")
	}
	if t := cfg.tls; t != nil {
		s.certs = t.certs
		if s.certs == nil {
			if s.certs, err = NewCerts(filepath.Join(base, "certs")); err != nil {
				return fail(fmt.Errorf("certificates: %w", err))
			}
		}
	}
	if text := cfg.fileText(); text != "" {
		s.conf = filepath.Join(base, "nats-server.conf")
		if err := os.WriteFile(s.conf, []byte(text), 0o600); err != nil {
			return fail(fmt.Errorf("writing configuration: %w", err))
		}
	}
	if cfg.operator != nil {
		s.user = cfg.operator.App.NewUser("natstest")
	}
	return s, nil
}

// start creates and starts a server instance on the remembered ports (or
// free ones the first time) and records the ports actually bound.
func (s *Server) start() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	p := s.ports
	s.mu.Unlock()

	so, err := s.serverOptions(p)
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
	debug, trace := s.sink.levels(s.cfg)
	srv.SetLoggerV2(lg, debug, trace, false)
	srv.Start()

	stop := func(err error) error {
		srv.Shutdown()
		srv.WaitForShutdown()
		return err
	}
	if err := waitReady(srv, lg, s.ready); err != nil {
		return stop(err)
	}
	np, wsTLS, err := boundPorts(srv, so)
	if err != nil {
		return stop(err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return stop(ErrClosed)
	}
	s.srv, s.ports, s.wsTLS = srv, np, wsTLS
	s.mu.Unlock()
	return nil
}

// boundPorts reads the ports srv listens on.
func boundPorts(srv *server.Server, so *server.Options) (ports, bool, error) {
	var np ports
	if a, ok := srv.Addr().(*net.TCPAddr); ok {
		np.client = a.Port
	}
	wsTLS := false
	if so.Websocket.Port != 0 {
		u, err := url.Parse(srv.WebsocketURL())
		if err == nil {
			np.ws, err = strconv.Atoi(u.Port())
		}
		if err != nil {
			return np, false, fmt.Errorf("websocket port: %w", err)
		}
		wsTLS = u.Scheme == "wss"
	}
	if ca := srv.ClusterAddr(); ca != nil {
		np.cluster = ca.Port
	}
	if so.LeafNode.Port != 0 {
		vz, err := srv.Varz(nil)
		if err != nil || vz.LeafNode.Port <= 0 {
			return np, false, fmt.Errorf("leaf node port: %v", err)
		}
		np.leaf = vz.LeafNode.Port
	}
	return np, wsTLS, nil
}

// waitReady polls until srv accepts connections (and extra holds), failing
// early when the server reported a fatal error such as a port in use.
func waitReady(srv *server.Server, lg *runLogger, extra func(*server.Server) error) error {
	return waitFor(readyTimeout, func() error {
		if msg := lg.fatalError(); msg != "" {
			return errStop{fmt.Errorf("server failed: %s", msg)}
		}
		if !srv.ReadyForConnections(50 * time.Millisecond) {
			return errors.New("server not ready for connections")
		}
		if extra != nil {
			return extra(srv)
		}
		return nil
	})
}

// Restart shuts the server down (if it is running) and starts it again on
// the same ports (client, WebSocket, route and leaf node) with the same
// JetStream store, so streams, consumers and their messages survive. It
// returns once the new instance accepts connections, or with an error:
// ErrClosed after Close, a port that stayed in use, or the server's own
// failure. Connected clients see a disconnect and reconnect on their own.
func (s *Server) Restart() error {
	s.Shutdown()
	s.mu.Lock()
	p, closed := s.ports, s.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	for _, port := range []int{p.client, p.ws, p.cluster, p.leaf} {
		if err := waitPortFree(port); err != nil {
			return fmt.Errorf("natstest: restart: %w", err)
		}
	}
	if err := s.start(); err != nil {
		return fmt.Errorf("natstest: restart: %w", err)
	}
	return nil
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

// Shutdown stops the server and waits until it is fully down; clients are
// disconnected. It is a no-op when the server is not running. The store,
// the ports and URL stay, so Restart brings the same server back: the way
// to test an outage and a reconnect.
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

// Close shuts the server down for good and removes its temporary
// directories (not one given with StoreDir). Restart fails afterwards.
// Close is idempotent; NewServer's servers are closed at the end of the
// test.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.Shutdown()
	s.sink.close()
	if s.base != "" {
		_ = os.RemoveAll(s.base)
	}
}

// LameDuck puts the server into lame duck mode in the background: it stops
// accepting clients, tells connected ones (INFO "ldm":true), closes them
// spread over the lame duck duration after the grace period (see
// LameDuckDuration) and shuts down. The returned channel is closed once
// that is over; Restart brings the server back afterwards.
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

// URL returns the client URL, nats://127.0.0.1:PORT, also with TLS (the
// server asks for TLS in its INFO) and after Shutdown. A server made with
// NoListener has no port: URL then returns a placeholder that resolves
// nowhere, for use with InProcess.
func (s *Server) URL() string {
	if s.cfg.noListen {
		return inProcessURL
	}
	return "nats://" + net.JoinHostPort(loopback, strconv.Itoa(s.Port()))
}

// WebSocketURL returns ws://127.0.0.1:PORT (wss:// with TLS), or "" without
// the WebSocket option.
func (s *Server) WebSocketURL() string {
	s.mu.Lock()
	port, wsTLS := s.ports.ws, s.wsTLS
	s.mu.Unlock()
	if port == 0 {
		return ""
	}
	scheme := "ws://"
	if wsTLS {
		scheme = "wss://"
	}
	return scheme + net.JoinHostPort(loopback, strconv.Itoa(port))
}

// Port returns the client port, 0 with NoListener.
func (s *Server) Port() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ports.client
}

// ClusterPort returns the route port, 0 outside a cluster.
func (s *Server) ClusterPort() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ports.cluster
}

// LeafNodePort returns the leaf node listener's port, 0 without LeafNodes.
func (s *Server) LeafNodePort() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ports.leaf
}

// Server returns the running nats-server for what this package does not
// cover (monitoring structures such as Varz and Connz, JetStream state), or
// nil while the server is shut down. Each Restart makes a new instance.
func (s *Server) Server() *server.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv
}

// StoreDir returns the JetStream store directory.
func (s *Server) StoreDir() string { return s.store }

// Certs returns the certificates the server presents, nil without TLS.
func (s *Server) Certs() *Certs { return s.certs }

// ClientCount returns the number of connected clients, 0 when the server
// is not running.
func (s *Server) ClientCount() int {
	if srv := s.Server(); srv != nil {
		return srv.NumClients()
	}
	return 0
}

// Running reports whether the server is up: false after Shutdown, Close or
// a completed lame duck shutdown.
func (s *Server) Running() bool {
	srv := s.Server()
	return srv != nil && srv.Running()
}

// InProcess returns a conn.Option that connects to the server through
// nats-server's in-process pipe (server.InProcessConn) instead of a socket,
// whatever URL conn.Connect is given (use URL). The application's code is
// exercised unchanged, and the server needs no listener (NoListener).
// Reconnects reach the instance running at that moment, so a Restart is
// survived like over TCP; while the server is down the dial fails with
// ErrNotRunning.
func (s *Server) InProcess() conn.Option {
	return conn.Dialer(func(ctx context.Context, _, _ string) (net.Conn, error) {
		srv := s.Server()
		if srv == nil {
			return nil, ErrNotRunning
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return srv.InProcessConn()
	})
}

// Connect connects to the server with what it requires (the user and
// password, token, TLS trust and client certificate, or operator-mode user
// it was configured with; the in-process dialer with NoListener), followed
// by opts, and closes the connection when tb's test ends. A failure ends
// the test with tb.Fatalf.
func (s *Server) Connect(tb testing.TB, opts ...conn.Option) *conn.Conn {
	tb.Helper()
	return connectTB(tb, s.URL(), append(s.ConnectOptions(), opts...))
}

// ConnectInProcess is Connect through the in-process pipe (InProcess): the
// connection opens no socket.
func (s *Server) ConnectInProcess(tb testing.TB, opts ...conn.Option) *conn.Conn {
	tb.Helper()
	return connectTB(tb, s.URL(), append(s.ConnectOptions(), append([]conn.Option{s.InProcess()}, opts...)...))
}

// ConnectOptions returns the options Connect uses before its own: the
// server's credentials and TLS trust, and InProcess with NoListener. Pass
// them to conn.Connect when the connection must outlive a test.
func (s *Server) ConnectOptions() []conn.Option {
	var o []conn.Option
	switch {
	case s.cfg.token != "":
		o = append(o, conn.Token(s.cfg.token))
	case s.cfg.user != "":
		o = append(o, conn.UserInfo(s.cfg.user, s.cfg.pass))
	case s.user != nil:
		o = append(o, s.user.Option())
	}
	return append(o, s.transportOptions()...)
}

// transportOptions are the options that reach the server: TLS trust and
// the in-process dialer of a server without a listener.
func (s *Server) transportOptions() []conn.Option {
	var o []conn.Option
	if s.certs != nil {
		o = append(o, conn.TLS(s.certs.ClientTLSConfig()))
		if s.cfg.tls.handshakeFirst {
			o = append(o, conn.TLSHandshakeFirst())
		}
	}
	if s.cfg.noListen {
		o = append(o, s.InProcess())
	}
	return o
}

func connectTB(tb testing.TB, url string, opts []conn.Option) *conn.Conn {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tb.Context(), connectTimeout)
	defer cancel()
	nc, err := conn.Connect(ctx, url, opts...)
	if err != nil {
		tb.Fatalf("natstest: connect to %s: %v", url, err)
	}
	tb.Cleanup(func() { _ = nc.Close() })
	return nc
}

// errStop wraps an error that makes waitFor give up at once.
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
