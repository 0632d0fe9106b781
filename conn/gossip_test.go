package conn_test

import (
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
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/memnet"
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

// gossipServe answers connections on l: INFO (with tls_required when cfg
// is set, and a nonce), TLS, then it records the CONNECT JSON and answers
// the PING. first, when set, makes it close the first connection right
// after the handshake (so that the client moves to a gossiped server).
func gossipServe(t *testing.T, l *memnet.Listener, cfg *tls.Config, info map[string]any, connects chan<- map[string]any, closeFirst bool) {
	info = maps(info, map[string]any{"server_id": "G", "version": "2.15.2", "proto": 1, "headers": true,
		"max_payload": 1 << 20, "nonce": "gossip-nonce", "tls_required": cfg != nil})
	opts := []fakeserver.Option{fakeserver.WithHandler(func(c *fakeserver.Client) {
		ctx := c.Context()
		if c.SendInfo(info) != nil {
			return
		}
		js, err := c.ExpectConnect(ctx)
		if err != nil {
			return
		}
		var cm map[string]any
		if json.Unmarshal(js, &cm) != nil {
			return
		}
		connects <- cm
		if _, err := c.Expect(ctx, proto.KindPing); err != nil {
			return
		}
		if c.SendPong() != nil || closeFirst && c.Index() == 1 {
			c.Close()
		}
	})}
	if cfg != nil {
		opts = append(opts, fakeserver.WithTLS(cfg))
	}
	fakeserver.Serve(t, l, opts...)
}

func maps(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range b {
		out[k] = v
	}
	for k, v := range a {
		out[k] = v
	}
	return out
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
				named := memnet.Listen("nats.example:4222")
				gossiped := memnet.Listen(m.gossiped)
				var namedTLS, gossipTLS *tls.Config
				scheme := "nats://"
				if m.tls {
					scheme = "tls://"
					namedTLS, gossipTLS = pki.server(t, "nats.example"), pki.server(t, m.certFor)
				}
				namedConnects := make(chan map[string]any, 4)
				gossipConnects := make(chan map[string]any, 4)
				gossipServe(t, named, namedTLS, map[string]any{"connect_urls": []string{m.gossiped}}, namedConnects, true)
				gossipServe(t, gossiped, gossipTLS, nil, gossipConnects, false)
				dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
					switch addr {
					case "nats.example:4222":
						return named.Dial(ctx, network, addr)
					case m.gossiped:
						return gossiped.Dial(ctx, network, addr)
					}
					return nil, fmt.Errorf("no route to %s", addr)
				}
				failed := make(chan error, 16)
				opts := append([]conn.Option{conn.Dialer(dial), conn.DontRandomize(), conn.PingInterval(time.Hour),
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
