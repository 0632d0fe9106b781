package fakeserver

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"testing"
)

// ErrClosed is returned by Accept after Close, and by a Client's methods
// once its connection has closed and nothing is left to read.
var ErrClosed = errors.New("fakeserver: closed")

// Server is a scripted NATS server; see the package documentation.
type Server struct {
	t       testing.TB
	ln      net.Listener
	handler func(*Client)
	tls     *tls.Config
	raw     bool

	mu      sync.Mutex
	clients []*Client // every accepted connection, in order
	queue   []*Client // accepted, not yet taken by Accept
	wake    chan struct{}
	closed  bool

	wg sync.WaitGroup // accept loop, readers, handlers
}

// Option configures a Server.
type Option func(*Server)

// WithHandler runs h on its own goroutine for every accepted connection;
// Accept then never returns them. h must return when the connection closes
// (see Client.Context).
func WithHandler(h func(c *Client)) Option {
	return func(s *Server) { s.handler = h }
}

// WithTLS makes every connection switch to TLS right after the first INFO
// sent on it, as a server whose INFO says tls_required does: that
// SendInfo performs the server's side of the TLS handshake with cfg and
// returns its error (the connection is then closed). From then on what
// the client sends is decrypted before it is recorded and everything sent
// is encrypted. The INFO itself should carry "tls_required": true.
func WithTLS(cfg *tls.Config) Option {
	return func(s *Server) { s.tls = cfg }
}

// WithRawStream leaves each connection's byte stream to the test: the
// server never reads what the client sends (nothing is parsed or
// recorded; Next waits until the connection closes) and the handler reads
// and writes Client.Conn itself. It is for a layer below the NATS
// protocol, such as a WebSocket upgrade and its frames. Done is closed
// once the connection is closed by Client.Close or Server.Close.
func WithRawStream() Option {
	return func(s *Server) { s.raw = true }
}

// Basic returns a handler that completes the handshake with info (nil for
// DefaultInfo()) and then answers PINGs (ServeBasic), recording everything
// the client sends.
func Basic(info any) func(*Client) {
	return func(c *Client) {
		_, _ = c.Handshake(c.Context(), info)
	}
}

// New starts a fake server on 127.0.0.1 on a free port. It is closed by
// t.Cleanup.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fakeserver: listen: %v", err)
	}
	return Serve(t, ln, opts...)
}

// Serve starts a fake server accepting connections from ln: a TCP
// listener, or an in-memory one (a *memnet.Listener, whose Dial the client
// is given as its dialer) for tests inside a testing/synctest bubble,
// where the server must then be started too. The server owns ln: Close
// closes it. If the test closes ln first (to refuse further connections),
// the connections already accepted are kept. It is closed by t.Cleanup.
func Serve(t testing.TB, ln net.Listener, opts ...Option) *Server {
	t.Helper()
	s := &Server{t: t, ln: ln, wake: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	s.wg.Add(1)
	go s.acceptLoop()
	t.Cleanup(s.Close)
	return s
}

// Addr returns the listening address, host:port (for an in-memory
// listener, the address it was given).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL returns "nats://" + Addr().
func (s *Server) URL() string { return "nats://" + s.Addr() }

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return
			}
			continue
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = nc.Close()
			return
		}
		c := newClient(s, nc, len(s.clients)+1)
		s.clients = append(s.clients, c)
		s.wg.Add(1)
		go c.readLoop()
		if s.handler != nil {
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.handler(c)
			}()
		} else {
			s.queue = append(s.queue, c)
		}
		s.notifyLocked()
		s.mu.Unlock()
	}
}

// notifyLocked wakes everyone waiting for a change of the server. s.mu held.
func (s *Server) notifyLocked() {
	close(s.wake)
	s.wake = make(chan struct{})
}

// Accept returns the next accepted connection not yet taken, waiting until
// one arrives, ctx ends or the server closes. Without a handler every
// connection is queued for Accept.
func (s *Server) Accept(ctx context.Context) (*Client, error) {
	return s.await(ctx, func() *Client {
		if len(s.queue) == 0 {
			return nil
		}
		c := s.queue[0]
		s.queue = s.queue[1:]
		return c
	})
}

// await waits until take, called under s.mu whenever the server's state
// changes, returns a connection, ctx ends or the server closes.
func (s *Server) await(ctx context.Context, take func() *Client) (*Client, error) {
	for {
		s.mu.Lock()
		if c := take(); c != nil {
			s.mu.Unlock()
			return c, nil
		}
		if s.closed {
			s.mu.Unlock()
			return nil, ErrClosed
		}
		wake := s.wake
		s.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// Accepted returns the number of connections accepted so far.
func (s *Server) Accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.clients)
}

// Clients returns every connection accepted so far, open or closed, in
// accept order.
func (s *Server) Clients() []*Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Client(nil), s.clients...)
}

// Client returns the i-th accepted connection (1-based), waiting until it
// has been accepted, ctx ends or the server closes.
func (s *Server) Client(ctx context.Context, i int) (*Client, error) {
	return s.await(ctx, func() *Client {
		if len(s.clients) < i {
			return nil
		}
		return s.clients[i-1]
	})
}

// ParseErrors returns the parse errors of every connection (at most one per
// connection, which was then closed).
func (s *Server) ParseErrors() []error {
	var errs []error
	for _, c := range s.Clients() {
		if err := c.ParseErr(); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Violations returns the content violations of every connection.
func (s *Server) Violations() []error {
	var errs []error
	for _, c := range s.Clients() {
		errs = append(errs, c.Violations()...)
	}
	return errs
}

// Close closes the listener and every connection, then waits for the
// accept loop, the readers and the handlers to return. It is safe to call
// more than once; it must not be called from a handler.
func (s *Server) Close() {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	clients := append([]*Client(nil), s.clients...)
	if !already {
		s.notifyLocked()
	}
	s.mu.Unlock()
	if !already {
		_ = s.ln.Close()
	}
	for _, c := range clients {
		c.shut()
	}
	s.wg.Wait()
}
