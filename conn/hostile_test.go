package conn_test

// Tests against a scripted fake server (internal/fakeserver): what a real
// server will not do. Scenario IDs refer to the fault table in
// RELIABILITY.md (F07, F12, F13, F14, F30, F35).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/proto"
)

// connectAsync connects in a goroutine (the fake server's side of the
// handshake runs in the test) and returns the result channel.
func connectAsync(url string, opts ...conn.Option) <-chan connectResult {
	ch := make(chan connectResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		start := time.Now()
		nc, err := conn.Connect(ctx, url, opts...)
		ch <- connectResult{nc, err, time.Since(start)}
	}()
	return ch
}

type connectResult struct {
	nc  *conn.Conn
	err error
	d   time.Duration
}

// ---- F07: handshake hang ----

// isTimeout accepts conn.ErrTimeout and, because of the bug pinned down by
// TestHandshakeTimeoutIsErrTimeout, a raw socket deadline error or (on a loaded
// machine, when the dial alone outlasts the connect timeout) a raw dial
// timeout.
func isTimeout(err error) bool {
	return errors.Is(err, conn.ErrTimeout) || errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, context.DeadlineExceeded)
}

func TestHandshakeTimeoutWithoutInfo(t *testing.T) {
	fs := startFake(t) // accepts, never sends a byte
	r := <-connectAsync(fs.URL(), conn.ConnectTimeout(200*time.Millisecond))
	if r.err == nil {
		r.nc.Close()
		t.Fatal("connected to a server that never sent INFO")
	}
	if !isTimeout(r.err) || !errors.Is(r.err, conn.ErrNoServers) {
		t.Fatalf("want ErrNoServers wrapping ErrTimeout, got %v", r.err)
	}
	if r.d < 200*time.Millisecond || r.d > 5*time.Second {
		t.Fatalf("connect failed after %v, want about the 200ms connect timeout", r.d)
	}
	if c := fs.firstClient(t); c != nil {
		waitClosed(t, c, "the client to close the silent connection")
		if n := len(c.Ops()); n != 0 {
			t.Fatalf("client sent %d ops before INFO", n)
		}
	}
}

func TestHandshakeTimeoutWithoutPong(t *testing.T) {
	fs := startFake(t, withScript(func(c *fakeserver.Client) {
		_ = c.SendInfo(nil) // then never a PONG
	}))
	r := <-connectAsync(fs.URL(), conn.ConnectTimeout(200*time.Millisecond))
	if r.err == nil {
		r.nc.Close()
		t.Fatal("connected without a PONG")
	}
	if !isTimeout(r.err) {
		t.Fatalf("want ErrTimeout, got %v", r.err)
	}
	if r.d < 200*time.Millisecond || r.d > 5*time.Second {
		t.Fatalf("connect failed after %v, want about the 200ms connect timeout", r.d)
	}
	c := fs.firstClient(t)
	if c == nil {
		return
	}
	waitClosed(t, c, "the client to close the connection")
	ops := c.Ops()
	// On a loaded machine the timeout may strike before CONNECT is sent.
	if len(ops) > 0 && (len(ops) != 2 || ops[0].Kind != proto.KindConnect || ops[1].Kind != proto.KindPing) {
		t.Fatalf("client sent %v, want CONNECT PING", opKinds(ops))
	}
	if c.ParseErr() != nil || len(c.Violations()) > 0 {
		t.Fatalf("parse error %v, violations %v", c.ParseErr(), c.Violations())
	}
}

func TestTLSHandshakeStallTimesOut(t *testing.T) {
	fs := startFake(t, withScript(func(c *fakeserver.Client) {
		c.Discard() // the ClientHello is not NATS protocol
		_ = c.SendInfo(fakeserver.DefaultInfo().With("tls_required", true))
	}))
	r := <-connectAsync(fs.URL(), conn.ConnectTimeout(200*time.Millisecond))
	if r.err == nil {
		r.nc.Close()
		t.Fatal("connected through a TLS handshake that never completed")
	}
	if !isTimeout(r.err) {
		t.Fatalf("want ErrTimeout, got %v", r.err)
	}
	if r.d > 5*time.Second {
		t.Fatalf("connect failed after %v, want about the 200ms connect timeout", r.d)
	}
	if c := fs.firstClient(t); c != nil {
		waitClosed(t, c, "the client to close the connection")
		// Normally the client was inside the TLS handshake (it sent a
		// ClientHello); on a loaded machine the timeout may come first.
		t.Logf("client sent %d bytes of TLS handshake", c.Discarded())
	}
}

// TestHandshakeTimeoutIsErrTimeout: a handshake that times out fails with an
// error matching conn.ErrTimeout, every time.
func TestHandshakeTimeoutIsErrTimeout(t *testing.T) {
	fs := startFake(t) // silent
	for i := range 10 {
		r := <-connectAsync(fs.URL(), conn.ConnectTimeout(50*time.Millisecond))
		if r.err == nil {
			r.nc.Close()
			t.Fatal("connected to a silent server")
		}
		if !errors.Is(r.err, conn.ErrTimeout) || !errors.Is(r.err, context.DeadlineExceeded) {
			t.Fatalf("attempt %d: %v does not match both conn.ErrTimeout and context.DeadlineExceeded", i, r.err)
		}
	}
	// Ended by the caller's deadline rather than the connect timeout: the
	// same two matches, as for any call that ran out of time.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := conn.Connect(ctx, fs.URL(), conn.ConnectTimeout(time.Minute))
	if !errors.Is(err, conn.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("connect ended by ctx's deadline: %v does not match both conn.ErrTimeout and context.DeadlineExceeded", err)
	}
}

func opKinds(ops []proto.Op) []string {
	var out []string
	for _, op := range ops {
		out = append(out, op.Kind.String())
	}
	return out
}

// ---- F12: authentication expired ----

type countingJWT struct{ n atomic.Int32 }

func (j *countingJWT) opt() conn.Option {
	return conn.UserJWT(func() (string, error) {
		return fmt.Sprintf("jwt-%d", j.n.Add(1)), nil
	}, func(nonce []byte) ([]byte, error) { return []byte("sig:" + string(nonce)), nil })
}

// connectJWT returns the jwt field of a CONNECT.
func connectJWT(t *testing.T, js []byte) string {
	t.Helper()
	var cm struct {
		JWT string `json:"jwt"`
		Sig string `json:"sig"`
	}
	if err := json.Unmarshal(js, &cm); err != nil {
		t.Fatalf("CONNECT %s: %v", js, err)
	}
	if cm.Sig == "" {
		t.Fatalf("CONNECT without nonce signature: %s", js)
	}
	return cm.JWT
}

// TestAuthExpiredReconnect: a live connection gets -ERR 'User
// Authentication Expired'; the client reports it as a *ServerError,
// reconnects, and calls the JWT callback again for the new CONNECT.
func TestAuthExpiredReconnect(t *testing.T) {
	fs := startFake(t, withScript(refuseAuth("User Authentication Expired", func(int) bool { return false })))
	var jwt countingJWT
	ev := &testutil.Events{}
	nc := fs.connect(t, jwt.opt(), testutil.FastReconnect(), ev.Opt())
	c1 := fs.client(t, 1)
	if err := c1.SendErr("User Authentication Expired"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })

	e, _, _ := ev.First(conn.EventServerError)
	var se *conn.ServerError
	if !errors.As(e.Err, &se) || !errors.Is(se, conn.ErrAuthExpired) || !se.Fatal() {
		t.Fatalf("server error event %v, want *ServerError matching ErrAuthExpired (events: %v)", e.Err, ev)
	}
	d, _, _ := ev.First(conn.EventDisconnected)
	if !errors.Is(d.Err, conn.ErrAuthExpired) {
		t.Fatalf("disconnected with %v, want ErrAuthExpired", d.Err)
	}
	waitClosed(t, c1, "the client to drop the expired connection")
	if got := jwt.n.Load(); got != 2 {
		t.Fatalf("JWT callback called %d times, want 2 (once per connection)", got)
	}
	for i := 1; i <= 2; i++ {
		op := fs.client(t, i).Ops()[0]
		if got, want := connectJWT(t, op.Text), fmt.Sprintf("jwt-%d", i); got != want {
			t.Fatalf("connection %d sent %q, want the fresh %q", i, got, want)
		}
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatalf("flush after reconnect: %v", err)
	}
}

// TestAuthRefusedOnceThenAccepted: the connection is lost, the first
// reconnect attempt is refused with 'User Authentication Expired', the
// next (with a fresh JWT) is accepted.
func TestAuthRefusedOnceThenAccepted(t *testing.T) {
	fs := startFake(t, withScript(refuseAuth("User Authentication Expired", func(i int) bool { return i == 2 })))
	var jwt countingJWT
	ev := &testutil.Events{}
	nc := fs.connect(t, jwt.opt(), testutil.FastReconnect(), ev.Opt())
	nc.ForceReconnect()
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	waitClosed(t, fs.client(t, 2), "the client to drop the refused attempt")
	if got := jwt.n.Load(); got != 3 {
		t.Fatalf("JWT callback called %d times, want 3 (once per attempt)", got)
	}
	for i := 1; i <= 3; i++ {
		op := fs.client(t, i).Ops()[0]
		if got, want := connectJWT(t, op.Text), fmt.Sprintf("jwt-%d", i); got != want {
			t.Fatalf("connection %d sent %q, want the fresh %q", i, got, want)
		}
	}
	if nc.IsClosed() || fs.Accepted() != 3 {
		t.Fatalf("closed %v, %d connections", nc.IsClosed(), fs.Accepted())
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

// TestAuthErrorOnReconnectReported: the connection is lost for another
// reason and the reconnect attempt is refused with 'User Authentication
// Expired'. The refusal must reach the application as an event carrying the
// *ServerError, not only a log line.
func TestAuthErrorOnReconnectReported(t *testing.T) {
	fs := startFake(t, withScript(refuseAuth("User Authentication Expired", func(i int) bool { return i == 2 })))
	var jwt countingJWT
	ev := &testutil.Events{}
	nc := fs.connect(t, jwt.opt(), testutil.FastReconnect(), ev.Opt())
	nc.ForceReconnect()
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	if jwt.n.Load() != 3 {
		t.Fatalf("JWT callback called %d times, want 3", jwt.n.Load())
	}
	if !ev.Any(0, conn.ErrAuthExpired) {
		t.Fatalf("no event reported the refused attempt's ErrAuthExpired; events: %v", ev)
	}
}

// TestRepeatedAuthErrorCloses: when every reconnect attempt is refused
// with the same authentication error, the client stops retrying and closes
// with that error (RELIABILITY.md F12: "If the same auth error comes back
// twice, close").
func TestRepeatedAuthErrorCloses(t *testing.T) {
	fs := startFake(t, withScript(refuseAuth("User Authentication Expired", func(i int) bool { return i >= 2 })))
	var jwt countingJWT
	ev := &testutil.Events{}
	nc := fs.connect(t, jwt.opt(), testutil.FastReconnect(), ev.Opt())
	nc.ForceReconnect()
	select {
	case <-nc.Closed():
	case <-time.After(5 * time.Second):
		t.Fatalf("still retrying after %d refused attempts", fs.Accepted()-1)
	}
	if err := nc.Err(); !errors.Is(err, conn.ErrAuthExpired) {
		t.Fatalf("closed with %v, want ErrAuthExpired", err)
	}
}

// ---- F13: maximum connections exceeded ----

func TestMaxConnectionsExceededRetries(t *testing.T) {
	// Connection 1 is accepted; the server then drops it; attempts 2 and 3
	// are refused as a server at max_connections does (INFO, -ERR, close);
	// attempt 4 is accepted.
	fs := startFake(t, withScript(func(c *fakeserver.Client) {
		if c.Index() == 2 || c.Index() == 3 {
			_ = c.SendInfo(nil)
			_ = c.SendErr("maximum connections exceeded")
			<-c.Context().Done()
			return
		}
		_, _ = c.Handshake(c.Context(), nil)
	}))
	ev := &testutil.Events{}
	nc := fs.connect(t, testutil.FastReconnect(), ev.Opt())
	sub, err := nc.Subscribe("f13")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	fs.client(t, 1).Close()
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	if fs.Accepted() != 4 {
		t.Fatalf("%d connections, want 4", fs.Accepted())
	}
	for i := 2; i <= 3; i++ {
		waitClosed(t, fs.client(t, i), "the client to hang up on a refused attempt")
	}
	if nc.IsClosed() || ev.Count(conn.EventClosed) != 0 {
		t.Fatal("max connections exceeded closed the connection")
	}
	if got := nc.Stats().Reconnects; got != 1 {
		t.Fatalf("Reconnects = %d, want 1", got)
	}
	// The subscription is restored on the accepted connection and works.
	c4 := fs.client(t, 4)
	if op, err := c4.Expect(ctxT(t), proto.KindSub); err != nil || string(op.Subject) != "f13" {
		t.Fatalf("resubscribe: %v %v", op, err)
	}
	if err := c4.SendMsg("f13", 1, "", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(ctxT(t)); err != nil || string(m.Data) != "hi" {
		t.Fatalf("message after reconnect: %v %v", m, err)
	}
}

// ---- F14: oversized MSG from the server ----

func TestOversizedMsgFromServer(t *testing.T) {
	fs := startFake(t, withScript(fakeserver.Basic(nil))) // max_payload 1 MiB
	ev := &testutil.Events{}
	nc := fs.connect(t, testutil.FastReconnect(), ev.Opt())
	sub, _ := nc.Subscribe("foo")
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	c1 := fs.client(t, 1)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	// Claims 9 MiB against an advertised 1 MiB, and starts sending it. The
	// client's inbound bound is max(4 × max_payload, 8 MiB) + 64 KiB (see
	// handshake.go: servers deliver more than max_payload in JetStream
	// replies), so 9 MiB is beyond it; a 2 MiB claim is accepted by design.
	_ = c1.Send([]byte("MSG foo 1 9437184\r\n" + strings.Repeat("x", 1024)))
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 4<<20 {
		t.Fatalf("allocated %d bytes handling an oversized MSG", d)
	}
	pe, _, _ := ev.First(conn.EventProtocolError)
	if !conn.IsProtocolError(pe.Err) || !errors.Is(pe.Err, proto.ErrPayloadTooLarge) {
		t.Fatalf("protocol error event %v, want ErrPayloadTooLarge (events: %v)", pe.Err, ev)
	}
	if d, _, _ := ev.First(conn.EventDisconnected); !errors.Is(d.Err, proto.ErrPayloadTooLarge) {
		t.Fatalf("disconnected with %v", d.Err)
	}
	waitClosed(t, c1, "the client to drop the connection")
	if sub.Delivered() != 0 {
		t.Fatal("oversized message delivered")
	}
	// Reconnected to the fake; the subscription is back and works.
	c2 := fs.client(t, 2)
	if _, err := c2.Expect(ctxT(t), proto.KindSub); err != nil {
		t.Fatal(err)
	}
	c2.SendMsg("foo", 1, "", []byte("small"))
	if m, err := sub.NextMsg(ctxT(t)); err != nil || string(m.Data) != "small" {
		t.Fatalf("after reconnect: %v %v", m, err)
	}
}

// ---- F30: INFO updates ----

func TestAsyncInfoDiscovery(t *testing.T) {
	fs := startFake(t, withScript(fakeserver.Basic(nil)))
	valid := []string{"10.0.0.1:4222", "[::1]:4223", "h2.example:4224"}
	malformed := []string{"bad", ":4222", "host:", "a:b:c", "", "nats://h6.example:4222"}
	gossip := fakeserver.DefaultInfo().With("connect_urls", append(append([]string{}, valid...), malformed...))

	ev := &testutil.Events{}
	nc := fs.connect(t, ev.Opt(), conn.DontRandomize())
	ign := fs.connect(t, conn.IgnoreDiscoveredServers())
	for i := 1; i <= 2; i++ {
		if err := fs.client(t, i).SendInfo(gossip); err != nil {
			t.Fatal(err)
		}
	}
	// A flush completes after the INFO sent before its PONG was handled.
	for _, c := range []*conn.Conn{nc, ign} {
		if err := c.Flush(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{fs.URL()}
	for _, u := range valid {
		want = append(want, "nats://"+u)
	}
	got := nc.Servers()
	if !slices.Equal(sorted(got), sorted(want)) {
		t.Errorf("pool after gossip:\n got %q\nwant %q (malformed entries must be skipped)", got, want)
	}
	if got[0] != fs.URL() {
		t.Errorf("named server no longer first: %q", got)
	}
	// Events are delivered asynchronously.
	eventually(t, "the discovered event", func() bool { return ev.Count(conn.EventDiscovered) == 1 })
	if got := ign.Servers(); !slices.Equal(got, []string{fs.URL()}) {
		t.Errorf("IgnoreDiscoveredServers: pool %q", got)
	}
	// The same INFO again adds nothing.
	fs.client(t, 1).SendInfo(gossip)
	nc.Flush(ctxT(t))
	if got := nc.Servers(); len(got) != len(want) {
		t.Errorf("repeated gossip grew the pool to %q", got)
	}
	if !nc.IsConnected() {
		t.Error("gossip with malformed entries dropped the connection")
	}
}

// TestGossipMalformedPortOrHostSkipped: an entry whose port is not a number in
// 1..65535, or whose host is not a host name, is malformed.
func TestGossipMalformedPortOrHostSkipped(t *testing.T) {
	fs := startFake(t, withScript(fakeserver.Basic(nil)))
	nc := fs.connect(t)
	bad := []string{"h3.example:abc", "h4.example:99999", "h5.example:-1", "h 7:4222"}
	fs.client(t, 1).SendInfo(fakeserver.DefaultInfo().With("connect_urls", bad))
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := nc.Servers(); len(got) != 1 {
		t.Fatalf("malformed gossip added to the pool: %q", got)
	}
}

// TestGossipDuplicateInOneInfo: the same URL twice in one connect_urls list is
// one pool entry.
func TestGossipDuplicateInOneInfo(t *testing.T) {
	fs := startFake(t, withScript(fakeserver.Basic(nil)))
	nc := fs.connect(t)
	fs.client(t, 1).SendInfo(fakeserver.DefaultInfo().With("connect_urls",
		[]string{"10.0.0.1:4222", "10.0.0.1:4222", "10.0.0.1:4222"}))
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := nc.Servers(); len(got) != 2 {
		t.Fatalf("pool %q, want the named server and 10.0.0.1:4222 once", got)
	}
}

// TestGossipedIPKeepsTLSName: a gossiped IP address is verified against
// the TLS name of the server the user named, not against the IP.
func TestGossipedIPKeepsTLSName(t *testing.T) {
	fs := startFake(t, withScript(fakeserver.Basic(nil)))
	// The user names a host; the dialer takes it to the fake server.
	redirect := conn.Dialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, fs.Addr())
	})
	nc := connect(t, "nats://nats.example.test:4222", redirect)
	fs.client(t, 1).SendInfo(fakeserver.DefaultInfo().With("connect_urls",
		[]string{"10.9.8.7:4222", "node2.example.test:4222"}))
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	names := conn.ServerTLSNames(nc)
	if got := names["10.9.8.7:4222"]; got != "nats.example.test" {
		t.Errorf("gossiped IP verified as %q, want the named host", got)
	}
	if got := names["node2.example.test:4222"]; got != "node2.example.test" {
		t.Errorf("gossiped host verified as %q, want itself", got)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// ---- F35: garbage from the server ----

func TestGarbageFromServer(t *testing.T) {
	isProto := func(sentinel error) func(error) bool {
		return func(err error) bool { return conn.IsProtocolError(err) && errors.Is(err, sentinel) }
	}
	isServer := func(kind error) func(error) bool {
		return func(err error) bool {
			var se *conn.ServerError
			return errors.As(err, &se) && errors.Is(err, kind)
		}
	}
	cases := []struct {
		name  string
		bytes string
		ok    func(error) bool
		event conn.EventKind
	}{
		{"unknown op", "Ivan\r\n", isProto(proto.ErrUnknownOp), conn.EventProtocolError},
		{"leading blank", " PING\r\n", isProto(proto.ErrUnknownOp), conn.EventProtocolError},
		{"unknown -ERR", "-ERR 'x'\r\n", isServer(conn.ErrServerOther), conn.EventServerError},
		{"header size above total", "HMSG foo 1 20 10\r\n0123456789\r\n", isProto(proto.ErrHeaderSize), conn.EventProtocolError},
		{"header below minimum", "HMSG foo 1 4 6\r\nNATS\r\n\r\n", isProto(proto.ErrHeaderSize), conn.EventProtocolError},
		{"oversized header", "HMSG foo 1 10000000 10000010\r\nNATS/1.0\r\n", isProto(proto.ErrPayloadTooLarge), conn.EventProtocolError},
		{"size beyond any bound", "MSG foo 1 999999999\r\n", isProto(proto.ErrPayloadTooLarge), conn.EventProtocolError},
		{"payload without CRLF", "MSG foo 1 3\r\nabcXX", isProto(proto.ErrMissingCRLF), conn.EventProtocolError},
		{"size overflow", "MSG foo 1 99999999999999999999\r\n", isProto(proto.ErrSize), conn.EventProtocolError},
		{"negative size", "MSG foo 1 -3\r\n", isProto(proto.ErrSize), conn.EventProtocolError},
		{"too many args", "MSG foo 1 bar baz 3\r\n", isProto(proto.ErrArgs), conn.EventProtocolError},
		{"control line without end", "MSG foo 1 " + strings.Repeat("9", 64<<10), isProto(proto.ErrControlLine), conn.EventProtocolError},
		{"bad async INFO", "INFO {\"max_payload\":\r\n", conn.IsProtocolError, conn.EventProtocolError},
		{"INFO max_payload 0", "INFO {\"max_payload\":0}\r\n", conn.IsProtocolError, conn.EventProtocolError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := startFake(t, withScript(fakeserver.Basic(nil)))
			ev := &testutil.Events{}
			nc := fs.connect(t, testutil.FastReconnect(), ev.Opt())
			sub, _ := nc.Subscribe("foo")
			if err := nc.Flush(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			c1 := fs.client(t, 1)
			// The client may hang up before a long input is written.
			_ = c1.Send([]byte(tc.bytes))
			eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
			d, _, _ := ev.First(conn.EventDisconnected)
			if !tc.ok(d.Err) {
				t.Fatalf("disconnected with %v (%T); events: %v", d.Err, d.Err, ev)
			}
			if e, _, ok := ev.First(tc.event); !ok || !tc.ok(e.Err) {
				t.Fatalf("no %v event with the typed error; events: %v", tc.event, ev)
			}
			waitClosed(t, c1, "the client to drop the connection")
			if sub.Delivered() != 0 {
				t.Fatal("garbage delivered as a message")
			}
			// Reconnected to the fake server: resubscribed and working.
			c2 := fs.client(t, 2)
			if op, err := c2.Expect(ctxT(t), proto.KindSub); err != nil || string(op.Subject) != "foo" {
				t.Fatalf("resubscribe: %v %v", op, err)
			}
			c2.SendMsg("foo", 1, "", []byte("ok"))
			if m, err := sub.NextMsg(ctxT(t)); err != nil || string(m.Data) != "ok" {
				t.Fatalf("after reconnect: %v %v", m, err)
			}
			if err := nc.Flush(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			for _, c := range fs.Clients() {
				if c.ParseErr() != nil || len(c.Violations()) > 0 {
					t.Fatalf("client sent bad bytes: %v %v", c.ParseErr(), c.Violations())
				}
			}
		})
	}
}

// TestNonFatalOdditiesDroppedAndCounted: input that is wrong but does not break the
// stream is dropped and counted without losing the connection: an HMSG
// whose header block is not NATS/1.0, a MSG for an unknown sid, a PONG
// nobody asked for.
func TestNonFatalOdditiesDroppedAndCounted(t *testing.T) {
	fs := startFake(t, withScript(fakeserver.Basic(nil)))
	ev := &testutil.Events{}
	nc := fs.connect(t, testutil.FastReconnect(), ev.Opt())
	sub, _ := nc.Subscribe("foo")
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	c1 := fs.client(t, 1)
	c1.SendHMsg("foo", 1, "", []byte("XATS/1.0\r\n\r\n"), []byte("bad"))
	c1.SendMsg("foo", 99, "", []byte("nobody"))
	c1.SendPong()
	c1.SendPong()
	c1.SendMsg("foo", 1, "", []byte("good"))
	m, err := sub.NextMsg(ctxT(t))
	if err != nil || string(m.Data) != "good" {
		t.Fatalf("next: %v %v (bad-header message must not be delivered)", m, err)
	}
	st := nc.Stats()
	if st.BadHeaders != 1 || st.UnknownSID != 1 {
		t.Fatalf("BadHeaders %d UnknownSID %d, want 1 and 1", st.BadHeaders, st.UnknownSID)
	}
	eventually(t, "bad header event", func() bool { return ev.Any(conn.EventProtocolError, proto.ErrBadHeader) })
	if !nc.IsConnected() || ev.Count(conn.EventDisconnected) != 0 || fs.Accepted() != 1 {
		t.Fatalf("connection lost; events: %v", ev)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

// TestUnsolicitedPongDoesNotAnswerFlush: PONGs without an outstanding
// PING are ignored; they must not answer a later Flush.
func TestUnsolicitedPongDoesNotAnswerFlush(t *testing.T) {
	var c1 *fakeserver.Client
	ready := make(chan struct{})
	fs := startFake(t, withScript(func(c *fakeserver.Client) {
		// Manual handshake: no automatic PONGs.
		c.SendInfo(nil)
		if _, err := c.ExpectConnect(c.Context()); err != nil {
			return
		}
		if _, err := c.Expect(c.Context(), proto.KindPing); err != nil {
			return
		}
		c1 = c
		close(ready)
		c.SendPong()
	}))
	nc := fs.connect(t, conn.PingInterval(time.Hour), conn.MaxPingsOutstanding(2))
	<-ready
	sub, _ := nc.Subscribe("foo")
	if _, err := c1.Expect(ctxT(t), proto.KindSub); err != nil {
		t.Fatal(err)
	}
	c1.Send([]byte("PONG\r\nPONG\r\nPONG\r\n"))
	c1.SendMsg("foo", 1, "", []byte("after pongs"))
	if _, err := sub.NextMsg(ctxT(t)); err != nil { // the PONGs were read
		t.Fatal(err)
	}
	flushed := make(chan error, 1)
	go func() { flushed <- nc.Flush(ctxT(t)) }()
	if _, err := c1.Expect(ctxT(t), proto.KindPing); err != nil {
		t.Fatal(err)
	}
	if n := conn.PendingPongs(nc); n != 1 {
		t.Fatalf("%d PINGs outstanding, want 1", n)
	}
	select {
	case err := <-flushed:
		t.Fatalf("Flush returned %v before its PONG was sent", err)
	default:
	}
	c1.SendPong()
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if !nc.IsConnected() {
		t.Fatal("disconnected")
	}
}
