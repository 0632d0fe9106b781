package conn_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/proto"
)

// gossipPKI is a CA and server certificates for given host names.
type gossipPKI struct {
	ca    *x509.Certificate
	key   *ecdsa.PrivateKey
	roots *x509.CertPool
}

func newGossipPKI(t *testing.T) *gossipPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gossip test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	return &gossipPKI{ca: ca, key: key, roots: roots}
}

// server returns a TLS config for a server whose certificate names host.
func (p *gossipPKI) server(t *testing.T, host string) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

// gossipInfo is the INFO of the gossip matrix's servers: a nonce to sign,
// and tls_required over TLS.
func gossipInfo(tls bool) fakeserver.Info {
	return fakeserver.Info{"server_id": "G", "version": "2.15.2", "proto": 1, "headers": true,
		"max_payload": 1 << 20, "nonce": "gossip-nonce", "tls_required": tls}
}

// credFields are the CONNECT fields that carry credentials.
var credFields = []string{"user", "pass", "auth_token", "jwt", "nkey", "sig"}

// The gossip matrix: for a plaintext or TLS cluster, a gossiped IP or host
// name, and every kind of credential, what the CONNECT sent to the
// gossiped server holds. Over plaintext nothing at all (not even a nonce
// signature, which the server could relay) unless
// SendCredentialsToDiscovered; over TLS the credentials, once the
// certificate is verified: a gossiped IP against the named server's name,
// a gossiped host name against itself, or against the named server's name
// with PinDiscoveredServers.
func TestGossipCredentialMatrix(t *testing.T) {
	pki := newGossipPKI(t)
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	creds := []struct {
		name string
		url  string // userinfo in the URL
		opt  []conn.Option
		want []string // fields sent to the named server
	}{
		{"user-password", "", []conn.Option{conn.UserInfo("alice", "s3cret")}, []string{"user", "pass"}},
		{"url-user-password", "alice:s3cret@", nil, []string{"user", "pass"}},
		{"token", "", []conn.Option{conn.Token("t0ken")}, []string{"auth_token"}},
		{"url-token", "t0ken@", nil, []string{"auth_token"}},
		{"nkey", "", []conn.Option{conn.NKey(pub, kp.Sign)}, []string{"nkey", "sig"}},
		{"jwt", "", []conn.Option{conn.UserJWT(func() (string, error) { return "eyJ.fake.jwt", nil }, kp.Sign)}, []string{"jwt", "sig"}},
	}
	type mode struct {
		name     string
		tls      bool
		gossiped string // address gossiped
		certFor  string // name in the gossiped server's certificate
		opts     []conn.Option
		sent     bool // credentials reach the gossiped server
		reached  bool // the CONNECT reaches it at all
	}
	modes := []mode{
		{name: "plain-ip", gossiped: "10.9.9.9:4222", reached: true},
		{name: "plain-host", gossiped: "other.example:4222", reached: true},
		{name: "plain-ip-allowed", gossiped: "10.9.9.9:4222", opts: []conn.Option{conn.SendCredentialsToDiscovered()}, reached: true, sent: true},
		{name: "plain-host-allowed", gossiped: "other.example:4222", opts: []conn.Option{conn.SendCredentialsToDiscovered()}, reached: true, sent: true},
		{name: "tls-ip", tls: true, gossiped: "10.9.9.9:4222", certFor: "nats.example", reached: true, sent: true},
		{name: "tls-host", tls: true, gossiped: "other.example:4222", certFor: "other.example", reached: true, sent: true},
		{name: "tls-host-pinned", tls: true, gossiped: "other.example:4222", certFor: "other.example",
			opts: []conn.Option{conn.PinDiscoveredServers()}},
		{name: "tls-host-pinned-cluster-cert", tls: true, gossiped: "other.example:4222", certFor: "nats.example",
			opts: []conn.Option{conn.PinDiscoveredServers()}, reached: true, sent: true},
		{name: "tls-ip-wrong-cert", tls: true, gossiped: "10.9.9.9:4222", certFor: "other.example"},
	}
	for _, m := range modes {
		for _, cr := range creds {
			t.Run(m.name+"/"+cr.name, func(t *testing.T) {
				var namedTLS, gossipTLS *tls.Config
				scheme := "nats://"
				if m.tls {
					scheme = "tls://"
					namedTLS, gossipTLS = pki.server(t, "nats.example"), pki.server(t, m.certFor)
				}
				namedConnects := make(chan map[string]any, 4)
				gossipConnects := make(chan map[string]any, 4)
				// The named server closes the first connection right after
				// its handshake, so that the client moves to the gossiped
				// one.
				named := startFake(t, inMemoryAt("nats.example:4222"), withTLS(namedTLS),
					withScript(recordConnect(t, gossipInfo(m.tls).With("connect_urls", []string{m.gossiped}), namedConnects,
						pongThenHangUp(func(i int) bool { return i == 1 }))))
				gossiped := startFake(t, inMemoryAt(m.gossiped), withTLS(gossipTLS),
					withScript(recordConnect(t, gossipInfo(m.tls), gossipConnects, pongThenHangUp(func(int) bool { return false }))))
				failed := make(chan error, 16)
				opts := append([]conn.Option{conn.Dialer(dialFakes(named, gossiped)), conn.DontRandomize(), conn.PingInterval(time.Hour),
					conn.ReconnectWait(time.Hour), conn.TLS(&tls.Config{RootCAs: pki.roots}),
					conn.OnEvent(func(ev conn.Event) {
						if ev.Kind == conn.EventAttemptFailed && strings.Contains(ev.Server, m.gossiped) {
							failed <- ev.Err
						}
					})}, m.opts...)
				if !m.tls {
					opts[4] = conn.Name("plain") // no TLS option over plaintext
				}
				opts = append(opts, cr.opt...)
				nc, err := conn.Connect(ctxT(t), scheme+cr.url+"nats.example:4222", opts...)
				if err != nil {
					t.Fatal(err)
				}
				defer nc.Close()
				first := <-namedConnects
				for _, f := range cr.want {
					if first[f] == nil || first[f] == "" {
						t.Fatalf("the named server got no %s: %v", f, first)
					}
				}
				if !m.reached {
					if err := <-failed; err == nil {
						t.Fatal("attempt failed without a reason")
					}
					select {
					case cm := <-gossipConnects:
						t.Fatalf("the gossiped server got a CONNECT: %v", cm)
					default:
					}
					return
				}
				cm := <-gossipConnects
				for _, f := range credFields {
					has := cm[f] != nil && cm[f] != ""
					want := m.sent && contains(cr.want, f)
					if has != want {
						t.Fatalf("gossiped server: field %s present %v, want %v: %v", f, has, want, cm)
					}
				}
			})
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

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

// hugeGossipInfo is an INFO whose connect_urls fill most of 1 MiB (about 55k
// addresses), numbered from base.
func hugeGossipInfo(t *testing.T, base, n int) (string, int) {
	t.Helper()
	var b strings.Builder
	info, err := json.Marshal(fakeserver.DefaultInfo())
	if err != nil {
		t.Fatal(err)
	}
	b.Write(bytes.TrimSuffix(info, []byte("}")))
	b.WriteString(`,"connect_urls":[`)
	count := 0
	for i := base; i < base+n && b.Len() < proto.DefaultMaxInfoLine-64; i++ {
		if count > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"10.%d.%d.%d:4222"`, i>>16&255, i>>8&255, i&255)
		count++
	}
	b.WriteString("]}")
	return b.String(), count
}

// A server gossiping a 1 MiB INFO of about 55k addresses, at the handshake
// and again asynchronously: the pool stays bounded (at most 1024 servers),
// and the list is parsed without the connection's lock, so a Publish made
// while it is (from the hook that runs right after the parse) goes through
// at once; a pool merge under the lock would deadlock it.
func TestHugeGossip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		big, n := hugeGossipInfo(t, 0, 60000)
		if n < 50000 {
			t.Fatalf("only %d URLs fit", n)
		}
		async1, _ := hugeGossipInfo(t, 100000, 30000)
		async2, _ := hugeGossipInfo(t, 200000, 30000)
		var mu sync.Mutex
		pubs := 0
		sent := make(chan struct{})
		srv := startFake(t, inMemory(), withSession(func(c *fakeserver.Client) {
			if handshake(c, big) != nil {
				return
			}
			for _, info := range []string{async1, async2} {
				if c.SendInfo(info) != nil {
					return
				}
			}
			close(sent)
			serveOps(c, nil, func(op *proto.Op) {
				if op.Kind == proto.KindPub && string(op.Subject) == "during.info" {
					mu.Lock()
					pubs++
					mu.Unlock()
				}
			})
		}))
		defer srv.stop()
		var hooked atomic.Int32
		defer conn.SetGossipHook(func(nc *conn.Conn) {
			hooked.Add(1)
			if nc.IsConnected() {
				if err := nc.Publish("during.info", nil); err != nil {
					t.Errorf("publish during the gossip: %v", err)
				}
			}
		})()
		nc := srv.connect(t, conn.PingInterval(time.Hour))
		defer nc.Close()
		if got := len(nc.Servers()); got > 1024 {
			t.Fatalf("pool of %d servers after a %d-URL INFO", got, n)
		}
		<-sent
		if err := nc.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if hooked.Load() != 3 {
			t.Fatalf("the gossip hook ran %d times, want 3", hooked.Load())
		}
		if got := len(nc.Servers()); got > 1024 {
			t.Fatalf("pool of %d servers after the async INFOs", got)
		}
		nc.Close()
		srv.stop()
		mu.Lock()
		defer mu.Unlock()
		if pubs != 2 {
			t.Fatalf("%d publishes made during async INFOs reached the server, want 2", pubs)
		}
	})
}
