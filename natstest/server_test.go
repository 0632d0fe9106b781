package natstest_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

func TestNewServerDefaults(t *testing.T) {
	noLeaks(t)
	s := natstest.NewServer(t)
	if want := "nats://127.0.0.1:" + strconv.Itoa(s.Port()); s.URL() != want || s.Port() <= 0 {
		t.Fatalf("URL %q Port %d", s.URL(), s.Port())
	}
	if s.Server() == nil || !s.Running() || s.WebSocketURL() != "" || s.ClusterPort() != 0 ||
		s.LeafNodePort() != 0 || s.Certs() != nil {
		t.Fatalf("unexpected state: srv %v running %v ws %q cluster %d leaf %d",
			s.Server(), s.Running(), s.WebSocketURL(), s.ClusterPort(), s.LeafNodePort())
	}
	if fi, err := os.Stat(s.StoreDir()); err != nil || !fi.IsDir() {
		t.Fatalf("store %q: %v", s.StoreDir(), err)
	}
	nc := s.Connect(t)
	if !nc.ServerInfo().JetStream {
		t.Fatal("JetStream is off by default")
	}
	if n := s.ClientCount(); n != 1 {
		t.Fatalf("ClientCount %d, want 1", n)
	}
	js := newJS(t, nc)
	if _, err := js.AccountInfo(ctxT(t)); err != nil {
		t.Fatalf("AccountInfo: %v", err)
	}
	s.Shutdown()
	if s.Running() || s.Server() != nil || s.ClientCount() != 0 {
		t.Fatal("still running after Shutdown")
	}
	s.Shutdown() // idempotent
}

// TestStartClose: a server of Start removes its directories at Close and
// cannot be restarted afterwards.
func TestStartClose(t *testing.T) {
	noLeaks(t)
	s, err := natstest.Start(natstest.TLS(nil))
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{s.StoreDir(), s.Certs().Dir}
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("%s: %v", d, err)
		}
	}
	s.Close()
	s.Close() // idempotent
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Fatalf("%s still there after Close: %v", d, err)
		}
	}
	if err := s.Restart(); !errors.Is(err, natstest.ErrClosed) {
		t.Fatalf("Restart after Close: %v, want ErrClosed", err)
	}
}

func TestRestartKeepsPortAndStore(t *testing.T) {
	noLeaks(t)
	s := natstest.NewServer(t, natstest.WebSocket())
	url, ws, srv := s.URL(), s.WebSocketURL(), s.Server()
	nc := s.Connect(t, fastReconnect...)
	js := newJS(t, nc)
	ctx := ctxT(t)
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "KEEP", Subjects: []string{"keep.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "keep.1", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if s.URL() != url || s.WebSocketURL() != ws || s.Server() == srv {
		t.Fatalf("after Restart: URL %q (was %q) ws %q (was %q), same instance %v",
			s.URL(), url, s.WebSocketURL(), ws, s.Server() == srv)
	}
	eventually(t, "the client to reconnect", func() bool { return nc.Stats().Reconnects == 1 && nc.IsConnected() })
	st, err := js.Stream(ctx, "KEEP")
	if err != nil {
		t.Fatal(err)
	}
	if m, err := st.GetMsg(ctx, 1); err != nil || string(m.Data) != "one" {
		t.Fatalf("message after Restart: %v %v", m, err)
	}
	// Shutdown, then Restart: the way to test an outage.
	s.Shutdown()
	eventually(t, "the client to notice", func() bool { return !nc.IsConnected() })
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the second reconnect", func() bool { return nc.Stats().Reconnects == 2 && nc.IsConnected() })
}

func TestJetStreamOff(t *testing.T) {
	noLeaks(t)
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := s.Connect(t)
	if nc.ServerInfo().JetStream {
		t.Fatal("INFO announces JetStream")
	}
	if _, err := newJS(t, nc).AccountInfo(ctxT(t)); err == nil {
		t.Fatal("AccountInfo succeeded without JetStream")
	}
}

func TestMemoryStore(t *testing.T) {
	noLeaks(t)
	s := natstest.NewServer(t, natstest.MemoryStore())
	js := newJS(t, s.Connect(t))
	ctx := ctxT(t)
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "MEM", Subjects: []string{"mem"}, Storage: jsapi.StorageMemory}); err != nil {
		t.Fatalf("memory stream: %v", err)
	}
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "FILE", Subjects: []string{"file"}, Storage: jsapi.StorageFile}); err == nil {
		t.Fatal("a file stream was created on a memory-only server")
	}
	// FileStore undoes it.
	s2 := natstest.NewServer(t, natstest.MemoryStore(), natstest.FileStore())
	if _, err := newJS(t, s2.Connect(t)).CreateStream(ctx, jsapi.StreamConfig{Name: "FILE", Subjects: []string{"file"}}); err != nil {
		t.Fatalf("file stream: %v", err)
	}
}

func TestStoreDirNameMaxPayloadPing(t *testing.T) {
	noLeaks(t)
	dir := t.TempDir()
	s := natstest.NewServer(t, natstest.StoreDir(dir), natstest.Name("alpha"), natstest.MaxPayload(4096),
		natstest.PingInterval(time.Minute, 3))
	if s.StoreDir() != dir {
		t.Fatalf("StoreDir %q, want %q", s.StoreDir(), dir)
	}
	nc := s.Connect(t)
	info := nc.ServerInfo()
	if info.ServerName != "alpha" || info.MaxPayload != 4096 {
		t.Fatalf("INFO name %q max payload %d", info.ServerName, info.MaxPayload)
	}
	vz, err := s.Server().Varz(nil)
	if err != nil || vz.PingInterval != time.Minute || vz.MaxPingsOut != 3 {
		t.Fatalf("varz ping %v max %d: %v", vz.PingInterval, vz.MaxPingsOut, err)
	}
	if _, err := newJS(t, nc).CreateStream(ctxT(t), jsapi.StreamConfig{Name: "S", Subjects: []string{"s"}}); err != nil {
		t.Fatal(err)
	}
	s.Shutdown()
	if entries, err := os.ReadDir(dir); err != nil || len(entries) == 0 {
		t.Fatalf("the given store %s holds %v (%v)", dir, entries, err)
	}
}

func TestConfigTextAndConfigure(t *testing.T) {
	noLeaks(t)
	var calls int
	s := natstest.NewServer(t, natstest.ConfigText("max_connections: 7\n"),
		natstest.Configure(func(o *server.Options) { calls++; o.MaxControlLine = 2048 }))
	vz, err := s.Server().Varz(nil)
	if err != nil || vz.MaxConn != 7 || vz.MaxControlLine != 2048 {
		t.Fatalf("max_connections %d max_control_line %d: %v", vz.MaxConn, vz.MaxControlLine, err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Fatalf("Configure called %d times over a start and a restart", calls)
	}
}

func TestInvalidOptions(t *testing.T) {
	noLeaks(t)
	for name, opts := range map[string][]natstest.Option{
		"token and user":   {natstest.Token("t"), natstest.UserPassword("u", "p")},
		"operator and pwd": {natstest.OperatorMode(natstest.NewOperator()), natstest.UserPassword("u", "p")},
		"lame duck grace":  {natstest.LameDuckDuration(time.Second, time.Second)},
		"tls without cert": {natstest.TLS(&natstest.Certs{})},
		"bad config":       {natstest.ConfigText("this is { not a config")},
	} {
		s, err := natstest.Start(opts...)
		if err == nil {
			s.Close()
			t.Errorf("%s: Start succeeded", name)
		}
	}
}

func TestUserPassword(t *testing.T) {
	noLeaks(t)
	s := natstest.NewServer(t, natstest.UserPassword("alice", "s3cret"))
	roundTrip(t, s.Connect(t), "auth.user")
	if err := connectErr(t, s.URL()); err == nil {
		t.Fatal("connected without credentials")
	}
	if err := connectErr(t, s.URL(), conn.UserInfo("alice", "wrong")); err == nil {
		t.Fatal("connected with a wrong password")
	}
}

func TestToken(t *testing.T) {
	noLeaks(t)
	s := natstest.NewServer(t, natstest.Token("tok"))
	roundTrip(t, s.Connect(t), "auth.token")
	if err := connectErr(t, s.URL(), conn.Token("other")); err == nil {
		t.Fatal("connected with a wrong token")
	}
}

func TestNKeyUsers(t *testing.T) {
	noLeaks(t)
	u, other := natstest.NewNKeyUser(), natstest.NewNKeyUser()
	if !strings.HasPrefix(u.PublicKey, "U") || !strings.HasPrefix(string(u.Seed), "SU") {
		t.Fatalf("nkey %q seed prefix %q", u.PublicKey, u.Seed[:2])
	}
	s := natstest.NewServer(t, natstest.NKeyUsers(u.PublicKey), natstest.UserPassword("bob", "pw"))
	roundTrip(t, s.Connect(t, u.Option()), "auth.nkey")
	roundTrip(t, s.Connect(t), "auth.nkey.user") // the password user, next to the nkey
	if err := connectErr(t, s.URL(), other.Option()); err == nil {
		t.Fatal("an unknown nkey connected")
	}
}

func TestAccounts(t *testing.T) {
	noLeaks(t)
	s := natstest.NewServer(t, natstest.Accounts(
		natstest.Account{Name: "ORDERS", JetStream: true, Users: []natstest.User{{Name: "o1", Password: "p1"}, {Name: "o2", Password: "p2"}}},
		natstest.Account{Name: "BILLING", Users: []natstest.User{{Name: "b", Password: "pb"}}},
	))
	o1 := s.Connect(t, conn.UserInfo("o1", "p1"))
	o2 := s.Connect(t, conn.UserInfo("o2", "p2"))
	b := s.Connect(t, conn.UserInfo("b", "pb"))
	ctx := ctxT(t)

	// o1 and o2 share their account; b sees none of it.
	sub, _ := o2.Subscribe("x")
	bsub, _ := b.Subscribe("x")
	o2.Flush(ctx)
	b.Flush(ctx)
	o1.Publish("x", []byte("hi"))
	if m, err := sub.NextMsg(ctx); err != nil || string(m.Data) != "hi" {
		t.Fatalf("same account: %v %v", m, err)
	}
	if _, err := newJS(t, o1).AccountInfo(ctx); err != nil {
		t.Fatalf("JetStream of ORDERS: %v", err)
	}
	if _, err := newJS(t, b).AccountInfo(ctx); err == nil {
		t.Fatal("BILLING has JetStream")
	}
	short, cancel := contextWithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if m, err := bsub.NextMsg(short); err == nil {
		t.Fatalf("a message crossed accounts: %v", m)
	}
	if err := connectErr(t, s.URL()); err == nil {
		t.Fatal("connected without credentials")
	}
}

func TestOperatorMode(t *testing.T) {
	noLeaks(t)
	op := natstest.NewOperator()
	other := op.AddAccount("OTHER", false)
	s := natstest.NewServer(t, natstest.OperatorMode(op))
	ctx := ctxT(t)

	nc := s.Connect(t) // a user of APP made for the server
	if _, err := newJS(t, nc).AccountInfo(ctx); err != nil {
		t.Fatalf("JetStream of APP: %v", err)
	}
	carol := op.App.NewUser("carol")
	if !strings.Contains(carol.Text(), carol.JWT) || !strings.Contains(carol.Text(), string(carol.Seed)) {
		t.Fatal("creds text without the JWT or the seed")
	}
	viaFile := s.Connect(t, conn.UserCredentials(carol.File(t)))
	roundTrip(t, viaFile, "op.app")

	// A user of another account does not see APP's messages.
	dave := s.Connect(t, other.NewUser("dave").Option())
	dsub, _ := dave.Subscribe("op.cross")
	dave.Flush(ctx)
	viaFile.Publish("op.cross", []byte("x"))
	viaFile.Flush(ctx)
	short, cancel := contextWithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if m, err := dsub.NextMsg(short); err == nil {
		t.Fatalf("a message crossed accounts: %v", m)
	}
	if err := connectErr(t, s.URL()); err == nil {
		t.Fatal("connected without credentials in operator mode")
	}
}

func TestTLS(t *testing.T) {
	noLeaks(t)
	s := natstest.NewServer(t, natstest.TLS(nil))
	c := s.Certs()
	if c == nil || c.CAPool == nil {
		t.Fatal("no generated certificates")
	}
	nc := s.Connect(t)
	if !nc.ServerInfo().TLSRequired {
		t.Fatal("INFO does not require TLS")
	}
	roundTrip(t, nc, "tls")
	// A client of its own, with the CA only (no client certificate).
	roundTrip(t, s.Connect(t, conn.RootCAs(c.CAFile)), "tls.ca")
	if err := connectErr(t, "nats://"+hostPort(s.URL())); err == nil {
		t.Fatal("connected without trusting the CA")
	}
}

func TestMutualTLS(t *testing.T) {
	noLeaks(t)
	certs := natstest.GenerateCerts(t)
	s := natstest.NewServer(t, natstest.MutualTLS(certs))
	if s.Certs() != certs {
		t.Fatal("Certs does not return the given set")
	}
	roundTrip(t, s.Connect(t), "mtls")
	ctx := ctxT(t)
	nc, err := conn.Connect(ctx, s.URL(), certs.ClientOption())
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	if err := connectErr(t, s.URL(), conn.RootCAs(certs.CAFile)); err == nil {
		t.Fatal("connected without a client certificate")
	}
}

func TestTLSHandshakeFirst(t *testing.T) {
	noLeaks(t)
	s := natstest.NewServer(t, natstest.TLSHandshakeFirst())
	roundTrip(t, s.Connect(t), "tls.first")
	if err := connectErr(t, s.URL(), s.Certs().ClientOption(), conn.ConnectTimeout(300*time.Millisecond)); err == nil {
		t.Fatal("connected without handshake first")
	}
}

func TestWebSocket(t *testing.T) {
	noLeaks(t)
	s := natstest.NewServer(t, natstest.WebSocketCompression())
	ws := s.WebSocketURL()
	if !strings.HasPrefix(ws, "ws://127.0.0.1:") {
		t.Fatalf("WebSocketURL %q", ws)
	}
	roundTrip(t, s.Connect(t), "tcp")
	ctx := ctxT(t)
	nc, err := conn.Connect(ctx, ws, conn.WebSocketCompression())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	roundTrip(t, nc, "ws")
}

func TestWebSocketTLS(t *testing.T) {
	noLeaks(t)
	s := natstest.NewServer(t, natstest.TLS(nil), natstest.WebSocket())
	ws := s.WebSocketURL()
	if !strings.HasPrefix(ws, "wss://127.0.0.1:") {
		t.Fatalf("WebSocketURL %q", ws)
	}
	nc, err := conn.Connect(ctxT(t), ws, s.Certs().ClientOption())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	roundTrip(t, nc, "wss")
}

func TestLameDuck(t *testing.T) {
	noLeaks(t)
	s := natstest.NewServer(t, natstest.LameDuckDuration(500*time.Millisecond, 100*time.Millisecond))
	nc := s.Connect(t, fastReconnect...)
	done := s.LameDuck()
	if s.LameDuck() != done {
		t.Fatal("a second LameDuck started another")
	}
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("lame duck mode did not end")
	}
	if s.Running() {
		t.Fatal("running after lame duck mode")
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the client to come back", nc.IsConnected)
}

func TestNoListenerInProcess(t *testing.T) {
	noLeaks(t)
	s := natstest.NewServer(t, natstest.NoListener())
	srv := s.Server()
	if srv.Addr() != nil || s.Port() != 0 {
		t.Fatalf("a server without listener listens on %v (port %d)", srv.Addr(), s.Port())
	}
	if !strings.Contains(s.URL(), ".invalid") {
		t.Fatalf("URL %q", s.URL())
	}
	nc := s.Connect(t, fastReconnect...) // in-process by itself
	roundTrip(t, nc, "inproc")
	if n := s.ClientCount(); n != 1 {
		t.Fatalf("ClientCount %d", n)
	}
	// JetStream works, and the store survives a restart reached in-process.
	js := newJS(t, nc)
	ctx := ctxT(t)
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "IP", Subjects: []string{"ip"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the in-process reconnect", func() bool { return nc.Stats().Reconnects == 1 && nc.IsConnected() })
	if _, err := js.Stream(ctx, "IP"); err != nil {
		t.Fatal(err)
	}
	// Without the in-process dialer the placeholder URL leads nowhere.
	if err := connectErr(t, s.URL()); err == nil {
		t.Fatal("connected to a server without listener over the network")
	}
	// While the server is down the dialer fails with ErrNotRunning.
	s.Shutdown()
	if err := connectErr(t, s.URL(), s.InProcess()); !errors.Is(err, natstest.ErrNotRunning) {
		t.Fatalf("dial while down: %v, want ErrNotRunning", err)
	}
}

// TestInProcessNextToTCP: a listening server takes in-process clients too.
func TestInProcessNextToTCP(t *testing.T) {
	noLeaks(t)
	s := natstest.NewServer(t)
	tcp := s.Connect(t)
	inproc := s.ConnectInProcess(t)
	ctx := ctxT(t)
	sub, _ := tcp.Subscribe("mixed")
	tcp.Flush(ctx)
	inproc.Publish("mixed", []byte("from the pipe"))
	if m, err := sub.NextMsg(ctx); err != nil || string(m.Data) != "from the pipe" {
		t.Fatalf("%v %v", m, err)
	}
	cz, err := s.Server().Connz(nil)
	if err != nil || cz.NumConns != 2 {
		t.Fatalf("connz: %d conns, %v", cz.NumConns, err)
	}
}

func TestCerts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	c, err := natstest.NewCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{c.CAFile, c.ServerCertFile, c.ServerKeyFile, c.ClientCertFile, c.ClientKeyFile} {
		if filepath.Dir(f) != dir {
			t.Fatalf("%s not in %s", f, dir)
		}
		if _, err := os.Stat(f); err != nil {
			t.Fatal(err)
		}
	}
	if !c.CA.IsCA || c.ClientCert.Leaf == nil && len(c.ClientCert.Certificate) == 0 {
		t.Fatal("bad certificates")
	}
	cfg := c.ClientTLSConfig()
	if cfg.RootCAs != c.CAPool || len(cfg.Certificates) != 1 || cfg == c.ClientTLSConfig() {
		t.Fatal("ClientTLSConfig")
	}
}

func hostPort(url string) string {
	_, hp, _ := strings.Cut(url, "://")
	return hp
}

// logTB captures what a server logs to its testing.TB.
type logTB struct {
	testing.TB
	mu    sync.Mutex
	lines []string
}

func (l *logTB) Logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logTB) has(tag string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, tag) {
			return true
		}
	}
	return false
}

func TestLogging(t *testing.T) {
	noLeaks(t)
	quiet := &logTB{TB: t}
	natstest.NewServer(quiet, natstest.Trace())
	if len(quiet.lines) != 0 {
		t.Fatalf("logged without %s: %q", natstest.LogEnv, quiet.lines[0])
	}

	t.Setenv(natstest.LogEnv, "1")
	notices := &logTB{TB: t}
	s := natstest.NewServer(notices, natstest.Name("logged"))
	s.Connect(t)
	if !notices.has("[logged] [INF] ") || notices.has("[TRC]") || notices.has("[DBG]") {
		t.Fatalf("notices only: %q", notices.lines)
	}
	traces := &logTB{TB: t}
	s = natstest.NewServer(traces, natstest.Trace())
	s.Connect(t)
	if !traces.has("[TRC]") || !traces.has("[DBG]") {
		t.Fatal("no traces with Trace")
	}
	debug := &logTB{TB: t}
	natstest.NewServer(debug, natstest.Debug())
	if !debug.has("[DBG]") || debug.has("[TRC]") {
		t.Fatal("Debug: no debug lines, or traces")
	}
}
