package conn_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/memnet"
	"github.com/natsio/natsio/proto"
)

// This file is the one fake-server harness of conn's tests: a scripted
// server (internal/fakeserver) for what a real server will not do, and the
// way to connect a conn.Conn to it. [startFake] starts it over loopback
// TCP, or with [inMemory] on an in-memory listener for a test inside a
// testing/synctest bubble (every wait of the server is then a durable
// block and the fake clock stays exact). What the server does on each
// connection is a script: a handler given with [withScript] (connection
// kept open after it returns) or [withSession] (connection closed when it
// returns). The scripts below cover the usual parts: the handshake,
// answering PINGs, refusing credentials, echoing requests and feeding a
// subscription; a test pushes arbitrary bytes with Client.Send and stalls
// by not reading (Client.StopReading) or not answering. [withWebSocket]
// serves below the NATS protocol instead: the script answers the client's
// WebSocket upgrade request and plays frames on the raw connection.

// fakeAddr is the address of the in-memory listener of [inMemory].
const (
	fakeAddr = "fake:4222"
	fakeURL  = "nats://" + fakeAddr
)

// fake is a running scripted server. Its fakeserver.Server methods (URL,
// Accept, Client, Clients, Accepted, Violations, Close…) are promoted.
type fake struct {
	*fakeserver.Server
	// mem is the in-memory listener (inMemory), nil over TCP. A test may
	// close it to refuse further connections: those already accepted
	// stay.
	mem *memnet.Listener
	// ws holds what each withWebSocket script returned, by connection.
	ws *wsResults
}

type fakeSetup struct {
	mem    string // in-memory listener address, "" for TCP
	script func(*fakeserver.Client)
	hangUp bool // close each connection when its script returns
	tls    *tls.Config
	ws     wsScript
}

// fakeOpt configures startFake.
type fakeOpt func(*fakeSetup)

// inMemory serves on an in-memory listener at fakeAddr: for a test inside
// a testing/synctest bubble, where startFake must be called too.
func inMemory() fakeOpt { return inMemoryAt(fakeAddr) }

// inMemoryAt is inMemory on the in-memory address addr (host:port).
func inMemoryAt(addr string) fakeOpt { return func(s *fakeSetup) { s.mem = addr } }

// withScript runs h on its own goroutine for every connection; the
// connection stays open after h returns, until the client, the test or
// the server's Close ends it. Without a script connections are queued for
// Accept/Client and never sent a byte (a silent server).
func withScript(h func(c *fakeserver.Client)) fakeOpt {
	return func(s *fakeSetup) { s.script, s.hangUp = h, false }
}

// withSession is withScript, but the server hangs up when h returns.
func withSession(h func(c *fakeserver.Client)) fakeOpt {
	return func(s *fakeSetup) { s.script, s.hangUp = h, true }
}

// withTLS switches every connection to TLS after its first INFO (which
// should say tls_required), as fakeserver.WithTLS.
func withTLS(cfg *tls.Config) fakeOpt { return func(s *fakeSetup) { s.tls = cfg } }

// startFake starts a scripted server, closed by t.Cleanup (or stop).
func startFake(t testing.TB, opts ...fakeOpt) *fake {
	t.Helper()
	var s fakeSetup
	for _, o := range opts {
		o(&s)
	}
	f := &fake{}
	var fo []fakeserver.Option
	if s.ws != nil {
		f.ws = &wsResults{}
		s.script, s.hangUp = f.ws.serve(s.ws), true
		fo = append(fo, fakeserver.WithRawStream())
	}
	if h := s.script; h != nil {
		if s.hangUp {
			h = func(c *fakeserver.Client) {
				defer c.Close()
				s.script(c)
			}
		}
		fo = append(fo, fakeserver.WithHandler(h))
	}
	if s.tls != nil {
		fo = append(fo, fakeserver.WithTLS(s.tls))
	}
	switch {
	case s.mem != "":
		f.mem = memnet.Listen(s.mem)
		f.Server = fakeserver.Serve(t, f.mem, fo...)
	default:
		f.Server = fakeserver.New(t, fo...)
	}
	if f.ws != nil {
		// Before the server's Close: the scripts end with their
		// connection (the client's Close, or the safety deadline).
		t.Cleanup(func() {
			for _, c := range f.Clients() {
				if err := f.ws.wait(c.Index()); err != nil {
					t.Errorf("fake WebSocket server, connection %d: %v", c.Index(), err)
				}
			}
		})
	}
	return f
}

// url is the server's URL (nats://fake:4222 with inMemory).
func (f *fake) url() string { return f.URL() }

// dial dials the server: over its in-memory listener (inMemory), else TCP.
func (f *fake) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if f.mem != nil {
		return f.mem.Dial(ctx, network, addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// tryConnect connects to the server with opts (the in-memory dialer
// first in a bubble, so a later Dialer option wins). A connection made is
// closed by t.Cleanup.
func (f *fake) tryConnect(t testing.TB, ctx context.Context, opts ...conn.Option) (*conn.Conn, error) {
	t.Helper()
	if f.mem != nil {
		opts = append([]conn.Option{conn.Dialer(f.mem.Dial)}, opts...)
	}
	nc, err := conn.Connect(ctx, f.url(), opts...)
	if err == nil {
		t.Cleanup(func() { nc.Close() })
	}
	return nc, err
}

// dialFakes is a dialer (for conn.Dialer) that reaches each server of fs
// at its address (f.dial: in memory for inMemoryAt), and no other
// address: for a test that connects to several.
func dialFakes(fs ...*fake) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		for _, f := range fs {
			if f.Addr() == addr {
				return f.dial(ctx, network, addr)
			}
		}
		return nil, fmt.Errorf("no route to %s", addr)
	}
}

// connect is tryConnect that fails the test on an error (after 10 s out
// of a bubble, where the script decides).
func (f *fake) connect(t testing.TB, opts ...conn.Option) *conn.Conn {
	t.Helper()
	ctx := context.Background()
	if f.mem == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	nc, err := f.tryConnect(t, ctx, opts...)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	return nc
}

// connectAsync connects in a goroutine, for a test that plays the
// server's side of the handshake itself, and returns the result: within
// 20 s (of fake time in a bubble). The test closes a connection made.
func (f *fake) connectAsync(opts ...conn.Option) <-chan connectResult {
	if f.mem != nil {
		opts = append([]conn.Option{conn.Dialer(f.mem.Dial)}, opts...)
	}
	ch := make(chan connectResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		start := time.Now()
		nc, err := conn.Connect(ctx, f.url(), opts...)
		ch <- connectResult{nc, err, time.Since(start)}
	}()
	return ch
}

// connectResult is what connectAsync's Connect returned, and after how
// long.
type connectResult struct {
	nc  *conn.Conn
	err error
	d   time.Duration
}

// stop waits until the client has closed its end of every connection (the
// scripts return then) and closes the server. In a bubble the test calls
// it before it ends: a connection left open would block the bubble.
func (f *fake) stop() {
	for _, c := range f.Clients() {
		<-c.Done()
	}
	f.Close()
}

// client returns the i-th connection (from 1), failing the test after the
// usual bound.
func (f *fake) client(t testing.TB, i int) *fakeserver.Client {
	t.Helper()
	c, err := f.Client(ctxT(t), i)
	if err != nil {
		t.Fatalf("connection %d to the fake server: %v", i, err)
	}
	return c
}

// firstClient returns the first connection, or nil when the client never
// got that far (its dial timed out on a loaded machine).
func (f *fake) firstClient(t testing.TB) *fakeserver.Client {
	t.Helper()
	if f.Accepted() == 0 {
		t.Log("the dial itself timed out; nothing reached the fake server")
		return nil
	}
	return f.client(t, 1)
}

// waitClosed waits until the fake connection c has been closed.
func waitClosed(t testing.TB, c *fakeserver.Client, what string) {
	t.Helper()
	select {
	case <-c.Done():
	case <-ctxT(t).Done():
		t.Fatalf("timed out waiting for %s", what)
	}
}

// ---- scripts ----

// handshake plays the server's side of the handshake on c: INFO (info;
// nil for fakeserver.DefaultInfo()), the client's CONNECT and PING, PONG.
// Unlike Client.Handshake it answers later PINGs only if the script does.
func handshake(c *fakeserver.Client, info any) error {
	if err := c.SendInfo(info); err != nil {
		return err
	}
	if _, err := c.ExpectConnect(c.Context()); err != nil {
		return err
	}
	op, err := c.Next(c.Context())
	if err != nil {
		return err
	}
	if op.Kind != proto.KindPing {
		return fmt.Errorf("handshake: got %v, want PING", op.Kind)
	}
	return c.SendPong()
}

// serveOps answers every PING with a PONG (unless pong is set and returns
// false) and hands every op to f (if set), until the connection ends.
func serveOps(c *fakeserver.Client, pong func() bool, f func(*proto.Op)) {
	for {
		op, err := c.Next(c.Context())
		if err != nil {
			return
		}
		if op.Kind == proto.KindPing && (pong == nil || pong()) {
			if c.SendPong() != nil {
				return
			}
		}
		if f != nil {
			f(op)
		}
	}
}

// authInfo is an INFO that asks for credentials, with a nonce to sign.
func authInfo() fakeserver.Info {
	return fakeserver.DefaultInfo().With("auth_required", true).With("nonce", "n0nce")
}

// refuseAuth is a script that sends authInfo, answers the CONNECT of the
// connections whose index reject(i) is true with -ERR errText and waits
// for the client to hang up, and serves the others (fakeserver.Basic).
func refuseAuth(errText string, reject func(i int) bool) func(*fakeserver.Client) {
	return func(c *fakeserver.Client) {
		if err := c.SendInfo(authInfo()); err != nil {
			return
		}
		if _, err := c.ExpectConnect(c.Context()); err != nil {
			return
		}
		if reject(c.Index()) {
			_ = c.SendErr(errText)
			<-c.Context().Done() // the client must close it
			return
		}
		c.ServeBasic()
	}
}

// recordConnect is a script that sends info, decodes the client's CONNECT
// JSON and sends it to connects (dropped when connects is full), then
// runs then (if set) with the PINGs not yet answered. It fails the test
// on a CONNECT that does not decode.
func recordConnect(t testing.TB, info any, connects chan<- map[string]any, then func(c *fakeserver.Client)) func(*fakeserver.Client) {
	return func(c *fakeserver.Client) {
		if c.SendInfo(info) != nil {
			return
		}
		js, err := c.ExpectConnect(c.Context())
		if err != nil {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(js, &m); err != nil {
			t.Errorf("fake server: bad CONNECT %q", js)
			c.Close()
			return
		}
		select {
		case connects <- m:
		default:
		}
		if then != nil {
			then(c)
			return
		}
		c.ServeBasic()
	}
}

// pongThenHangUp is recordConnect's then for a server that answers the
// PING of the handshake and no later one, and closes connection i (from
// 1) right after that PONG when hangUp(i).
func pongThenHangUp(hangUp func(i int) bool) func(*fakeserver.Client) {
	return func(c *fakeserver.Client) {
		if _, err := c.Expect(c.Context(), proto.KindPing); err != nil {
			return
		}
		if c.SendPong() != nil || hangUp(c.Index()) {
			c.Close()
		}
	}
}

// echoFeed is a script that completes the handshake, answers each request
// after delay with its own payload (except those to "silent"), and sends
// feed to the subscription on "feed" each time push gets a value.
func echoFeed(delay time.Duration, push <-chan struct{}, feed string) func(*fakeserver.Client) {
	return func(c *fakeserver.Client) {
		if handshake(c, nil) != nil {
			return
		}
		go func() {
			for range push {
				_ = c.SendTo("feed", "", nil, []byte(feed))
			}
		}()
		serveOps(c, nil, func(op *proto.Op) {
			if op.Kind != proto.KindPub || len(op.Reply) == 0 || string(op.Subject) == "silent" {
				return
			}
			time.Sleep(delay)
			_ = c.SendTo(string(op.Reply), "", nil, op.Payload)
		})
	}
}

// ---- WebSocket ----

// wsScript plays the server's side of a WebSocket connection: c is the raw
// connection, br reads what the client sends after req, its upgrade
// request (already read). It answers the upgrade or not (wsAccept), then
// plays frames. Its error fails the test.
type wsScript func(c net.Conn, br *bufio.Reader, req *http.Request) error

// withWebSocket serves WebSocket below the NATS protocol: for every
// connection the server reads the client's HTTP upgrade request and runs
// h on the raw connection (fakeserver.WithRawStream), then hangs up. What
// h returns is checked when the test ends, after the client's Close, or
// earlier with f.wsResult. Use f.wsURL.
func withWebSocket(h wsScript) fakeOpt { return func(s *fakeSetup) { s.ws = h } }

// wsURL is the server's ws:// URL.
func (f *fake) wsURL() *url.URL { return &url.URL{Scheme: "ws", Host: f.Addr()} }

// wsResult waits for the withWebSocket script of the first connection to
// return and returns its error.
func (f *fake) wsResult(t testing.TB) error {
	t.Helper()
	return f.ws.wait(f.client(t, 1).Index())
}

// wsResults is what each connection's withWebSocket script returned.
type wsResults struct {
	mu   sync.Mutex
	byIx map[int]*wsResult
}

type wsResult struct {
	done chan struct{}
	err  error
}

func (r *wsResults) of(i int) *wsResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byIx == nil {
		r.byIx = map[int]*wsResult{}
	}
	x := r.byIx[i]
	if x == nil {
		x = &wsResult{done: make(chan struct{})}
		r.byIx[i] = x
	}
	return x
}

// wait waits for the script of connection i (accepted) to return.
func (r *wsResults) wait(i int) error {
	x := r.of(i)
	<-x.done
	return x.err
}

// serve is the fakeserver script running h after the upgrade request.
func (r *wsResults) serve(h wsScript) func(*fakeserver.Client) {
	return func(fc *fakeserver.Client) {
		x := r.of(fc.Index())
		defer close(x.done)
		c := fc.Conn()
		_ = c.SetDeadline(time.Now().Add(2 * time.Minute)) // a safety net against a hang, not a bound under test
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			x.err = fmt.Errorf("reading request: %w", err)
			return
		}
		x.err = h(c, br, req)
	}
}
