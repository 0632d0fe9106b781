package conn_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
)

// logRecord is one captured log line.
type logRecord struct {
	msg   string
	attrs map[string]string
}

// logRecorder is a slog.Handler keeping every record (all levels).
type logRecorder struct {
	mu   *sync.Mutex
	recs *[]logRecord
}

func newLogRecorder() *logRecorder {
	return &logRecorder{mu: new(sync.Mutex), recs: new([]logRecord)}
}

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (h *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return h }

func (h *logRecorder) WithGroup(string) slog.Handler { return h }

func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{msg: r.Message, attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	h.mu.Lock()
	*h.recs = append(*h.recs, rec)
	h.mu.Unlock()
	return nil
}

func (h *logRecorder) records() []logRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(*h.recs)
}

func (h *logRecorder) option() conn.Option { return conn.Logger(slog.New(h)) }

// waitPool waits until nc's pool holds n servers.
func waitPool(t *testing.T, nc *conn.Conn, n int) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d servers in the pool", n), func() bool { return len(nc.Servers()) == n })
}

// recvEventually publishes on pub until sub receives a message: interest
// propagates between cluster members asynchronously.
func recvEventually(t *testing.T, pub *conn.Conn, sub *conn.Subscription, subject string) {
	t.Helper()
	eventually(t, "message through the cluster on "+subject, func() bool {
		if err := pub.Publish(subject, []byte("ping")); err != nil {
			return false
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		m, err := sub.NextMsg(ctx)
		return err == nil && string(m.Data) == "ping"
	})
}

func startCluster(t *testing.T, opts ...natstest.Option) *natstest.Cluster {
	t.Helper()
	return natstest.NewCluster(t, 3, append([]natstest.Option{natstest.JetStream(false)}, opts...)...)
}

func TestClusterDiscoverServers(t *testing.T) {
	c := startCluster(t)
	srvs := c.Nodes()
	var rec testutil.Events
	nc := connect(t, srvs[0].URL(), rec.Opt())
	// The INFO of a formed cluster lists every member in connect_urls.
	waitPool(t, nc, 3)
	got := nc.Servers()
	for _, s := range srvs {
		if !slices.Contains(got, s.URL()) {
			t.Fatalf("pool %v lacks %s", got, s.URL())
		}
	}
	if nc.ConnectedURL() != srvs[0].URL() {
		t.Fatalf("connected to %q, want %q", nc.ConnectedURL(), srvs[0].URL())
	}
}

func TestClusterIgnoreDiscoveredServers(t *testing.T) {
	c := startCluster(t)
	srvs := c.Nodes()
	// Control: without the option the same server's gossip fills the pool.
	control := connect(t, srvs[0].URL())
	waitPool(t, control, 3)

	var rec testutil.Events
	nc := connect(t, srvs[0].URL(), conn.IgnoreDiscoveredServers(), rec.Opt())
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	// A topology change makes server 0 send further INFOs with
	// connect_urls to its clients.
	if err := c.Restart(2); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := nc.Servers(); len(got) != 1 || got[0] != srvs[0].URL() {
		t.Fatalf("IgnoreDiscoveredServers: pool is %v", got)
	}
	if rec.Has(conn.EventDiscovered) {
		t.Fatal("EventDiscovered with IgnoreDiscoveredServers")
	}
}

func TestClusterFailoverToDiscoveredServer(t *testing.T) {
	c := startCluster(t)
	srvs := c.Nodes()
	var rec testutil.Events
	nc := connect(t, srvs[0].URL(), testutil.FastReconnect(), rec.Opt())
	waitPool(t, nc, 3)
	sub, err := nc.Subscribe("failover.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	pub := connect(t, srvs[2].URL(), conn.IgnoreDiscoveredServers())
	recvEventually(t, pub, sub, "failover.before")

	c.Kill(0)
	eventually(t, "reconnect to another member", func() bool {
		u := nc.ConnectedURL()
		return u != "" && u != srvs[0].URL() && rec.Has(conn.EventReconnected)
	})
	if u := nc.ConnectedURL(); u != srvs[1].URL() && u != srvs[2].URL() {
		t.Fatalf("reconnected to %q, not a cluster member", u)
	}
	if e, _ := rec.Find(conn.EventReconnected, nil); e.Server != nc.ConnectedURL() {
		t.Fatalf("EventReconnected for %q, connected to %q", e.Server, nc.ConnectedURL())
	}
	// The subscription was restored on the new server.
	recvEventually(t, pub, sub, "failover.after")
	if !sub.IsValid() {
		t.Fatal("subscription closed by failover")
	}
}

func TestLameDuckMovesClient(t *testing.T) {
	// A long grace period: the client must leave by itself, long before
	// the server would start closing clients.
	c := startCluster(t, natstest.LameDuckDuration(10*time.Second, 5*time.Second))
	srvs := c.Nodes()
	var rec testutil.Events
	nc := connect(t, srvs[0].URL(), testutil.FastReconnect(), conn.DontRandomize(), rec.Opt())
	waitPool(t, nc, 3)
	sub, err := nc.Subscribe("ldm.>")
	if err != nil {
		t.Fatal(err)
	}
	var cbMu sync.Mutex
	var cbGot []string
	if _, err := nc.SubscribeFunc("ldmcb", func(m *conn.Msg) {
		cbMu.Lock()
		cbGot = append(cbGot, string(m.Data))
		cbMu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	pub := connect(t, srvs[2].URL(), conn.IgnoreDiscoveredServers())
	recvEventually(t, pub, sub, "ldm.before")

	done := srvs[0].LameDuck()
	eventually(t, "EventLameDuck, disconnect and reconnect elsewhere", func() bool {
		return rec.Has(conn.EventLameDuck) && rec.Has(conn.EventDisconnected) && rec.Has(conn.EventReconnected)
	})
	select {
	case <-done:
		t.Fatal("lame duck shutdown finished before the client moved")
	default:
	}
	if e, _ := rec.Find(conn.EventLameDuck, nil); e.Server != srvs[0].URL() {
		t.Fatalf("lame duck event for %q, want %q", e.Server, srvs[0].URL())
	}
	// The client left on its own (forced reconnect), it was not cut.
	if e, ok := rec.Find(conn.EventDisconnected, nil); !ok || !errors.Is(e.Err, conn.ErrForcedReconnect) {
		t.Fatalf("disconnect reason %v, want ErrForcedReconnect", e.Err)
	}
	u := nc.ConnectedURL()
	if u == srvs[0].URL() || (u != srvs[1].URL() && u != srvs[2].URL()) {
		t.Fatalf("connected to %q after lame duck", u)
	}
	recvEventually(t, pub, sub, "ldm.after")
	eventually(t, "callback subscription delivers after the move", func() bool {
		if err := pub.Publish("ldmcb", []byte("x")); err != nil {
			return false
		}
		cbMu.Lock()
		defer cbMu.Unlock()
		return len(cbGot) > 0
	})
	if nc.Stats().Reconnects != 1 {
		t.Fatalf("reconnects = %d, want 1", nc.Stats().Reconnects)
	}
}

// blockingHandler is a slog.Handler that blocks on the record with
// message msg until release is closed (or 2 s pass): a slow log sink.
type blockingHandler struct {
	msg     string
	release <-chan struct{}
}

func (h blockingHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h blockingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }

func (h blockingHandler) WithGroup(string) slog.Handler { return h }

func (h blockingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		select {
		case <-h.release:
		case <-time.After(2 * time.Second):
		}
	}
	return nil
}

// TestClusterFailoverEventOrder: EventDisconnected is delivered before the
// EventReconnected of the reconnect it caused, whatever the speed of the
// logger or of OnDisconnect hooks.
func TestClusterFailoverEventOrder(t *testing.T) {
	c := startCluster(t)
	srvs := c.Nodes()
	reconnected := make(chan struct{})
	var rec testutil.Events
	nc := connect(t, srvs[0].URL(), testutil.FastReconnect(), rec.Opt(),
		conn.Logger(slog.New(blockingHandler{msg: "nats: disconnected", release: reconnected})))
	waitPool(t, nc, 3)
	var once sync.Once
	nc.OnReconnect(func() { once.Do(func() { close(reconnected) }) })
	c.Kill(0)
	eventually(t, "disconnect and reconnect events", func() bool {
		return rec.Has(conn.EventDisconnected) && rec.Has(conn.EventReconnected)
	})
	// The named server, its wait over while the logger blocked, is tried
	// before the gossiped ones: failed attempts may come in between.
	var kinds []string
	for _, e := range rec.All() {
		if e.Kind != conn.EventAttemptFailed {
			kinds = append(kinds, e.Kind.String())
		}
	}
	order := strings.Join(kinds, ",")
	if !strings.Contains(order, "disconnected,reconnected") {
		t.Fatalf("events delivered as %s", order)
	}
}

// TestClusterCredentialsWithheldFromDiscovered: by default a password is
// not sent to a gossiped server over plaintext, so failing over to one
// fails authorization; the client comes back only to the named server.
func TestClusterCredentialsWithheldFromDiscovered(t *testing.T) {
	const user, pass = "clu", "cluster-pass-9f3a1"
	c := startCluster(t, natstest.UserPassword(user, pass))
	srvs := c.Nodes()
	var rec testutil.Events
	logs := newLogRecorder()
	nc := connect(t, srvs[0].URL(), conn.UserInfo(user, pass), testutil.FastReconnect(), rec.Opt(), logs.option())
	waitPool(t, nc, 3)
	sub, err := nc.Subscribe("creds.>")
	if err != nil {
		t.Fatal(err)
	}
	nc.Flush(ctxT(t))

	c.Kill(0)
	// Both discovered members reject the credential-less CONNECT.
	authFailed := func(url string) bool {
		for _, r := range logs.records() {
			if r.msg == "nats: reconnect attempt failed" && r.attrs["server"] == url &&
				strings.Contains(strings.ToLower(r.attrs["err"]), "authorization violation") {
				return true
			}
		}
		return false
	}
	eventually(t, "authorization failures at the discovered servers", func() bool {
		return authFailed(srvs[1].URL()) && authFailed(srvs[2].URL())
	})
	if rec.Has(conn.EventReconnected) || nc.IsConnected() {
		t.Fatalf("reconnected to %q without sending credentials?", nc.ConnectedURL())
	}
	for _, r := range logs.records() {
		for k, v := range r.attrs {
			if strings.Contains(v, pass) {
				t.Fatalf("log %q attr %s holds the password", r.msg, k)
			}
		}
	}

	// The named server (credentials allowed) takes the client back.
	if err := c.Restart(0); err != nil {
		t.Fatal(err)
	}
	eventually(t, "reconnect to the named server", func() bool { return nc.ConnectedURL() == srvs[0].URL() })
	pub := connect(t, srvs[1].URL(), conn.UserInfo(user, pass), conn.IgnoreDiscoveredServers())
	recvEventually(t, pub, sub, "creds.back")
}

func TestClusterSendCredentialsToDiscovered(t *testing.T) {
	const user, pass = "clu", "cluster-pass-9f3a1"
	for _, viaURL := range []bool{false, true} {
		t.Run(map[bool]string{false: "UserInfo", true: "URLUserInfo"}[viaURL], func(t *testing.T) {
			if viaURL {
			}
			c := startCluster(t, natstest.UserPassword(user, pass))
			srvs := c.Nodes()
			opts := []conn.Option{conn.SendCredentialsToDiscovered(), testutil.FastReconnect()}
			u := srvs[0].URL()
			if viaURL {
				u = strings.Replace(u, "nats://", "nats://"+user+":"+pass+"@", 1)
			} else {
				opts = append(opts, conn.UserInfo(user, pass))
			}
			nc := connect(t, u, opts...)
			waitPool(t, nc, 3)
			sub, err := nc.Subscribe("creds.>")
			if err != nil {
				t.Fatal(err)
			}
			nc.Flush(ctxT(t))

			c.Kill(0)
			eventually(t, "reconnect to a discovered member", func() bool {
				u := nc.ConnectedURL()
				return u == srvs[1].URL() || u == srvs[2].URL()
			})
			pub := connect(t, srvs[1].URL(), conn.UserInfo(user, pass), conn.IgnoreDiscoveredServers())
			recvEventually(t, pub, sub, "creds.moved")
			for _, s := range append(nc.Servers(), nc.ConnectedURL()) {
				if strings.Contains(s, pass) {
					t.Fatalf("URL list leaks the password: %q", s)
				}
			}
		})
	}
}

// TestClusterTLSCredentialsToDiscovered: over verified TLS a discovered
// member gets the credentials without any opt-in (the gossiped URL keeps
// the tls scheme).
func TestClusterTLSCredentialsToDiscovered(t *testing.T) {
	const user, pass = "tlsu", "tls-cluster-pass-4b"
	certs := natstest.GenerateCerts(t)
	c := startCluster(t, natstest.UserPassword(user, pass), natstest.TLS(certs))
	srvs := c.Nodes()
	nc := connect(t, tlsURL(srvs[0]), conn.RootCAs(certs.CAFile), conn.UserInfo(user, pass), testutil.FastReconnect())
	waitPool(t, nc, 3)
	for _, s := range nc.Servers() {
		if !strings.HasPrefix(s, "tls://") {
			t.Fatalf("gossiped server %q lost the tls scheme", s)
		}
	}
	sub, err := nc.Subscribe("tlscreds")
	if err != nil {
		t.Fatal(err)
	}
	nc.Flush(ctxT(t))
	c.Kill(0)
	eventually(t, "reconnect to a discovered TLS member", func() bool {
		u := nc.ConnectedURL()
		return u == tlsURL(srvs[1]) || u == tlsURL(srvs[2])
	})
	pub := connect(t, tlsURL(srvs[2]), conn.RootCAs(certs.CAFile), conn.UserInfo(user, pass), conn.IgnoreDiscoveredServers())
	recvEventually(t, pub, sub, "tlscreds")
}

// connectRecorder is the scripted server of the discovery and credential
// tests, over loopback TCP: it records the CONNECT JSON of every client.
type connectRecorder struct {
	t *testing.T
	*fake
	info     map[string]any
	connects chan map[string]any
	// onPong, when set, runs after the PONG that completes a connection's
	// handshake; PINGs are answered once it returns.
	onPong func(c *fakeserver.Client)
	// reject answers CONNECT with an authorization error.
	reject bool
	// started is set by start: the fields are read from then on.
	started atomic.Bool
}

// newConnectRecorder starts the server on a free port; the test may
// change the fields (info included) until start, and connects after it.
func newConnectRecorder(t *testing.T, info map[string]any) *connectRecorder {
	t.Helper()
	f := &connectRecorder{t: t, connects: make(chan map[string]any, 64)}
	f.fake = startFake(t, withScript(f.serve))
	_, p, _ := net.SplitHostPort(f.Addr())
	port, _ := strconv.Atoi(p)
	base := map[string]any{
		"server_id": "FAKE" + strconv.Itoa(port), "version": "2.11.0", "proto": 1,
		"host": "127.0.0.1", "port": port, "headers": true, "max_payload": 1 << 20,
	}
	for k, v := range info {
		base[k] = v
	}
	f.info = base
	return f
}

func (f *connectRecorder) addr() string { return f.Addr() }

// start serves connections from now on, until the test ends.
func (f *connectRecorder) start() { f.started.Store(true) }

// serve is the script: recordConnect once started.
func (f *connectRecorder) serve(c *fakeserver.Client) {
	if !f.started.Load() {
		f.t.Errorf("a client connected to %s before the test started it", f.addr())
		c.Close()
		return
	}
	recordConnect(f.t, f.info, f.connects, f.afterConnect)(c)
}

// afterConnect refuses the client (reject) or completes its handshake and
// runs onPong.
func (f *connectRecorder) afterConnect(c *fakeserver.Client) {
	if f.reject {
		_ = c.SendErr("Authorization Violation")
		c.Close()
		return
	}
	if _, err := c.Expect(c.Context(), proto.KindPing); err != nil || c.SendPong() != nil {
		return
	}
	if f.onPong != nil {
		f.onPong(c)
	}
	c.ServeBasic()
}

// TestDiscoverFromInitialInfo: the connect_urls of the INFO received during
// the handshake populate the pool (a cluster formed before the client
// connects sends no further INFO).
func TestDiscoverFromInitialInfo(t *testing.T) {
	b := newConnectRecorder(t, nil)
	b.start()
	a := newConnectRecorder(t, nil)
	a.info["connect_urls"] = []string{a.addr(), b.addr()}
	a.start()
	nc := connect(t, a.url())
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	got := nc.Servers()
	if !slices.Contains(got, b.url()) || len(got) != 2 {
		t.Fatalf("pool after initial INFO: %v, want %s and %s", got, a.url(), b.url())
	}
}

// discoveredConnect connects to a fake server A with opts; A gossips a fake
// server B in an async INFO and drops the client once it has learnt B; it
// returns the CONNECT that B received.
func discoveredConnect(t *testing.T, urlCreds string, opts ...conn.Option) map[string]any {
	t.Helper()
	b := newConnectRecorder(t, map[string]any{"auth_required": true})
	b.reject = true
	b.start()
	drop := make(chan struct{})
	a := newConnectRecorder(t, map[string]any{"auth_required": true})
	a.onPong = func(c *fakeserver.Client) {
		_ = c.SendInfo(map[string]any{
			"server_id": "A", "version": "2.11.0", "proto": 1, "headers": true,
			"max_payload": 1 << 20, "connect_urls": []string{a.addr(), b.addr()},
		})
		<-drop
		c.Close()
	}
	a.start()
	t.Cleanup(func() {
		select {
		case <-drop:
		default:
			close(drop)
		}
	})
	u := a.url()
	if urlCreds != "" {
		u = "nats://" + urlCreds + "@" + a.addr()
	}
	nc := connect(t, u, append(opts, testutil.FastReconnect())...)
	first := <-a.connects
	waitPool(t, nc, 2)
	close(drop)
	var got map[string]any
	select {
	case got = <-b.connects:
	case <-ctxT(t).Done():
		t.Fatal("client never tried the discovered server")
	}
	nc.Close()
	// The named server got the credentials.
	if first["user"] == nil && first["pass"] == nil && first["auth_token"] == nil {
		t.Fatalf("named server got no credentials: %v", first)
	}
	return got
}

var discoveredCredCases = []struct {
	name     string
	urlCreds string
	opts     []conn.Option
}{
	{"UserInfo", "", []conn.Option{conn.UserInfo("ann", "pw-7c1e")}},
	{"URLUserInfo", "ann:pw-7c1e", nil},
	{"Token", "", []conn.Option{conn.Token("tok-5d2b")}},
	{"URLToken", "tok-5d2b", nil},
}

func TestDiscoveredPlaintextServerGetsNoCredentials(t *testing.T) {
	for _, tc := range discoveredCredCases {
		t.Run(tc.name, func(t *testing.T) {
			got := discoveredConnect(t, tc.urlCreds, tc.opts...)
			for _, k := range []string{"user", "pass", "auth_token"} {
				if v, ok := got[k]; ok {
					t.Fatalf("discovered plaintext server received %s=%v", k, v)
				}
			}
		})
	}
}

func TestDiscoveredServerGetsCredentialsWhenAllowed(t *testing.T) {
	for _, tc := range discoveredCredCases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.urlCreds != "" {
			}
			got := discoveredConnect(t, tc.urlCreds, append(tc.opts, conn.SendCredentialsToDiscovered())...)
			if got["pass"] != "pw-7c1e" && got["auth_token"] != "tok-5d2b" {
				t.Fatalf("with SendCredentialsToDiscovered the server got %v", got)
			}
		})
	}
}
