package testserver

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

func TestStartURL(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{MaxPayload: 4096})

	if want := "nats://127.0.0.1:" + strconv.Itoa(s.Port()); s.URL() != want {
		t.Fatalf("URL() = %q, want %q", s.URL(), want)
	}
	if s.Port() <= 0 || s.Srv() == nil || s.StoreDir() == "" || s.WSURL() != "" {
		t.Fatalf("unexpected state: port %d srv %v store %q ws %q", s.Port(), s.Srv(), s.StoreDir(), s.WSURL())
	}

	c := dialRaw(t, s.URL())
	info := c.readInfo()
	if info["jetstream"] != true {
		t.Errorf("INFO jetstream = %v, want true", info["jetstream"])
	}
	if info["max_payload"] != float64(4096) {
		t.Errorf("INFO max_payload = %v, want 4096", info["max_payload"])
	}
	if info["port"] != float64(s.Port()) {
		t.Errorf("INFO port = %v, want %d", info["port"], s.Port())
	}
	c.mustConnect(nil)
	if n := s.ClientCount(); n != 1 {
		t.Errorf("ClientCount() = %d, want 1", n)
	}
	if m := c.jsRequest("$JS.API.INFO", nil); m["type"] != "io.nats.jetstream.api.v1.account_info_response" {
		t.Errorf("unexpected $JS.API.INFO reply %v", m)
	}

	s.Shutdown()
	if s.Running() || s.ClientCount() != 0 || s.Srv() != nil {
		t.Fatal("server still running after Shutdown")
	}
	s.Shutdown() // idempotent
}

func TestNoJetStream(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{NoJetStream: true})
	c := dialRaw(t, s.URL())
	if info := c.readInfo(); info["jetstream"] == true {
		t.Fatal("INFO announces JetStream although NoJetStream is set")
	}
}

func createStream(t *testing.T, c *rawConn, name string, replicas int) {
	t.Helper()
	c.jsRequest("$JS.API.STREAM.CREATE."+name, map[string]any{
		"name":         name,
		"subjects":     []string{strings.ToLower(name) + ".>"},
		"storage":      "file",
		"num_replicas": replicas,
	})
}

func streamMessages(t *testing.T, c *rawConn, name string) float64 {
	t.Helper()
	m := c.jsRequest("$JS.API.STREAM.INFO."+name, nil)
	cfg, _ := m["config"].(map[string]any)
	if cfg["name"] != name {
		t.Fatalf("STREAM.INFO.%s returned config %v", name, cfg)
	}
	state, _ := m["state"].(map[string]any)
	n, _ := state["messages"].(float64)
	return n
}

func TestRestartKeepsPortAndJetStream(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	port, store := s.Port(), s.StoreDir()

	c := dialRaw(t, s.URL())
	c.readInfo()
	c.mustConnect(nil)
	createStream(t, c, "X", 1)
	if ack := c.jsRequest("x.1", []byte("hello")); ack["stream"] != "X" {
		t.Fatalf("unexpected publish ack %v", ack)
	}

	s.Restart(t)
	if s.Port() != port || s.StoreDir() != store {
		t.Fatalf("after restart port %d store %q, want %d %q", s.Port(), s.StoreDir(), port, store)
	}
	if !s.Running() {
		t.Fatal("server not running after Restart")
	}

	// The old connection must have been closed by the shutdown.
	if _, err := c.next(); err == nil {
		t.Fatal("old connection still open after restart")
	}

	c2 := dialRaw(t, s.URL())
	c2.readInfo()
	c2.mustConnect(nil)
	if n := streamMessages(t, c2, "X"); n != 1 {
		t.Fatalf("stream X has %v messages after restart, want 1", n)
	}
}

func TestLameDuck(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{LameDuckDuration: time.Second, LameDuckGracePeriod: 100 * time.Millisecond})
	c := dialRaw(t, s.URL())
	c.readInfo()
	c.mustConnect(nil)

	done := s.LameDuck()
	sawLDM := false
	for {
		line, err := c.readLine()
		if err != nil {
			break // closed by the server
		}
		if strings.HasPrefix(line, "INFO ") && decodeInfo(t, line)["ldm"] == true {
			sawLDM = true
		}
		if line == "PING" {
			c.send("PONG\r\n")
		}
	}
	if !sawLDM {
		t.Error(`no INFO with "ldm":true before the connection closed`)
	}
	select {
	case <-done:
	case <-time.After(ioTimeout):
		t.Fatal("lame duck shutdown did not finish")
	}
	if s.Running() {
		t.Fatal("server still running after lame duck shutdown")
	}

	s.Restart(t)
	c2 := dialRaw(t, s.URL())
	c2.readInfo()
	c2.mustConnect(nil)
}

func TestCluster(t *testing.T) {
	t.Parallel()
	c := StartCluster(t, 3, Options{})
	srvs := c.Servers()
	if len(srvs) != 3 || len(strings.Split(c.URLs(), ",")) != 3 {
		t.Fatalf("want 3 servers, got %d (%s)", len(srvs), c.URLs())
	}
	leader := c.Leader()
	if leader == nil {
		t.Fatal("no meta leader after StartCluster")
	}
	for i, s := range srvs {
		if !s.Srv().JetStreamIsClustered() {
			t.Errorf("server %d is not JetStream clustered", i)
		}
		if s.ClusterPort() == 0 {
			t.Errorf("server %d has no cluster port", i)
		}
	}

	conn := dialRaw(t, srvs[0].URL())
	info := conn.readInfo()
	if urls, _ := info["connect_urls"].([]any); len(urls) != 3 {
		t.Errorf("INFO connect_urls = %v, want 3 entries", info["connect_urls"])
	}
	conn.mustConnect(map[string]any{"no_responders": true})
	createStream(t, conn, "R", 3)
	// Publish once the R3 stream has a leader. Even then the leader's
	// interest in r.> may not have reached srvs[0] over the routes yet,
	// so jsPublish retries (with one message id) until it is acked.
	c.WaitStreamLeader(t, "", "R")
	if ack := conn.jsPublish("r.1", "r1", []byte("hi")); ack["stream"] != "R" {
		t.Fatalf("unexpected publish ack %v", ack)
	}

	// Restart a server that is not the meta leader and check it is back.
	idx := 0
	for i, s := range srvs {
		if s != c.Leader() {
			idx = i
			break
		}
	}
	port, clusterPort := srvs[idx].Port(), srvs[idx].ClusterPort()
	c.Restart(t, idx)
	if srvs[idx].Port() != port || srvs[idx].ClusterPort() != clusterPort {
		t.Fatal("restarted cluster member changed its ports")
	}
	conn2 := dialRaw(t, srvs[idx].URL())
	conn2.readInfo()
	conn2.mustConnect(nil)
	// The restarted member may have led R: STREAM.INFO waits for a leader.
	c.WaitStreamLeader(t, "", "R")
	if n := streamMessages(t, conn2, "R"); n != 1 {
		t.Fatalf("stream R has %v messages, want 1", n)
	}
}

func TestTLS(t *testing.T) {
	t.Parallel()
	certs := GenerateCerts(t)
	s := Start(t, Options{TLS: certs.ServerTLS(false)})

	c := dialRaw(t, s.URL())
	if info := c.readInfo(); info["tls_required"] != true {
		t.Fatalf("INFO tls_required = %v, want true", info["tls_required"])
	}
	if err := c.upgradeTLS(certs.ClientTLSConfig()); err != nil {
		t.Fatalf("TLS handshake: %v", err)
	}
	c.mustConnect(nil)
}

func TestMutualTLS(t *testing.T) {
	t.Parallel()
	certs := GenerateCerts(t)
	s := Start(t, Options{TLS: certs.ServerTLS(true)})

	c := dialRaw(t, s.URL())
	info := c.readInfo()
	if info["tls_required"] != true || info["tls_verify"] != true {
		t.Fatalf("INFO tls_required/tls_verify = %v/%v, want true/true", info["tls_required"], info["tls_verify"])
	}
	if err := c.upgradeTLS(certs.ClientTLSConfig()); err != nil {
		t.Fatalf("TLS handshake: %v", err)
	}
	c.mustConnect(nil)

	// Without a client certificate the server must refuse (with TLS 1.3
	// the failure may only surface on the first read).
	bad := dialRaw(t, s.URL())
	bad.readInfo()
	noCert := &tls.Config{RootCAs: certs.CAPool}
	if err := bad.upgradeTLS(noCert); err == nil {
		bad.send("CONNECT {}\r\nPING\r\n")
		if line, err := bad.next(); err == nil && line == "PONG" {
			t.Fatal("server accepted a client without certificate")
		}
	}
}

func TestTLSHandshakeFirst(t *testing.T) {
	t.Parallel()
	certs := GenerateCerts(t)
	opts := certs.ServerTLS(false)
	opts.HandshakeFirst = true
	s := Start(t, Options{TLS: opts})

	cfg := certs.ClientTLSConfig()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: ioTimeout}, "tcp", hostPort(s.URL()), cfg)
	if err != nil {
		t.Fatalf("TLS dial: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &rawConn{t: t, conn: conn, r: bufio.NewReader(conn)}
	c.readInfo()
	c.mustConnect(nil)
}

func TestWebSocket(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{WebSocket: &WebSocketOptions{Compression: true}})
	ws := s.WSURL()
	if !strings.HasPrefix(ws, "ws://127.0.0.1:") || ws == "ws://127.0.0.1:0" {
		t.Fatalf("WSURL() = %q", ws)
	}

	conn, err := net.DialTimeout("tcp", hostPort(ws), ioTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(ioTimeout))
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"+
		"Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n", hostPort(ws))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading upgrade response: %v", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade status %q, want 101", resp.Status)
	}
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); !strings.Contains(ext, "permessage-deflate") {
		t.Errorf("compression not negotiated, extensions %q", ext)
	}

	// The WebSocket port is kept across restarts.
	s.Restart(t)
	if s.WSURL() != ws {
		t.Fatalf("WSURL after restart %q, want %q", s.WSURL(), ws)
	}
}

func TestAuth(t *testing.T) {
	t.Parallel()
	seed, pub := NKeyUser(t)
	kp, err := nkeys.FromSeed(seed)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(info map[string]any) string {
		nonce, _ := info["nonce"].(string)
		sig, err := kp.Sign([]byte(nonce))
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(sig)
	}

	cases := []struct {
		name    string
		opts    Options
		connect func(info map[string]any) map[string]any
		ok      bool
	}{
		{"user", Options{User: "u", Password: "p"}, func(map[string]any) map[string]any {
			return map[string]any{"user": "u", "pass": "p"}
		}, true},
		{"user-bad-password", Options{User: "u", Password: "p"}, func(map[string]any) map[string]any {
			return map[string]any{"user": "u", "pass": "x"}
		}, false},
		{"token", Options{Token: "s3cr3t"}, func(map[string]any) map[string]any {
			return map[string]any{"auth_token": "s3cr3t"}
		}, true},
		{"no-credentials", Options{Token: "s3cr3t"}, func(map[string]any) map[string]any { return nil }, false},
		{"nkey", Options{NKeys: []string{pub}}, func(info map[string]any) map[string]any {
			return map[string]any{"nkey": pub, "sig": sign(info)}
		}, true},
		{"nkey-and-user", Options{NKeys: []string{pub}, User: "u", Password: "p"}, func(map[string]any) map[string]any {
			return map[string]any{"user": "u", "pass": "p"}
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := tc.opts
			opts.NoJetStream = true
			s := Start(t, opts)
			c := dialRaw(t, s.URL())
			info := c.readInfo()
			if info["auth_required"] != true {
				t.Fatalf("INFO auth_required = %v", info["auth_required"])
			}
			got := c.connect(tc.connect(info))
			if tc.ok && got != "PONG" {
				t.Fatalf("expected PONG, got %q", got)
			}
			if !tc.ok && !strings.Contains(got, "Authorization Violation") {
				t.Fatalf("expected Authorization Violation, got %q", got)
			}
		})
	}
}

func TestOperatorMode(t *testing.T) {
	t.Parallel()
	op := Operator(t)
	s := Start(t, Options{ConfigText: op.Config()})
	credsFile := op.UserCreds(t, "alice")

	data, err := os.ReadFile(credsFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "-----BEGIN NATS USER JWT-----\n") ||
		!strings.Contains(string(data), "------END NATS USER JWT------\n") ||
		!strings.Contains(string(data), "-----BEGIN USER NKEY SEED-----\n") {
		t.Fatalf("creds file is not in the decorated format:\n%s", data)
	}
	userJWT, err := jwt.ParseDecoratedJWT(data)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := jwt.ParseDecoratedUserNKey(data)
	if err != nil {
		t.Fatal(err)
	}
	uc, err := jwt.DecodeUserClaims(userJWT)
	if err != nil || uc.Name != "alice" || uc.Issuer != op.Account.PublicKey {
		t.Fatalf("user claims %+v, err %v", uc, err)
	}

	c := dialRaw(t, s.URL())
	info := c.readInfo()
	nonce, _ := info["nonce"].(string)
	if nonce == "" {
		t.Fatal("no nonce in INFO in operator mode")
	}
	sig, err := kp.Sign([]byte(nonce))
	if err != nil {
		t.Fatal(err)
	}
	c.mustConnect(map[string]any{"jwt": userJWT, "sig": base64.RawURLEncoding.EncodeToString(sig)})
	createStream(t, c, "OP", 1)

	// A user of an account the server does not know is rejected.
	other := Operator(t)
	otherJWT, otherSeed := other.Account.User(t, "mallory")
	okp, err := nkeys.FromSeed(otherSeed)
	if err != nil {
		t.Fatal(err)
	}
	bad := dialRaw(t, s.URL())
	binfo := bad.readInfo()
	bsig, _ := okp.Sign([]byte(binfo["nonce"].(string)))
	if got := bad.connect(map[string]any{"jwt": otherJWT, "sig": base64.RawURLEncoding.EncodeToString(bsig)}); got == "PONG" {
		t.Fatal("server accepted a user of a foreign operator")
	}
}

func TestGenerateCerts(t *testing.T) {
	t.Parallel()
	certs := GenerateCerts(t)
	for _, f := range []string{certs.CAFile, certs.ServerCertFile, certs.ServerKeyFile, certs.ClientCertFile, certs.ClientKeyFile} {
		if _, err := os.Stat(f); err != nil {
			t.Fatal(err)
		}
	}
	srvLeaf, err := x509.ParseCertificate(certs.ServerCert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"localhost", "127.0.0.1"} {
		if _, err := srvLeaf.Verify(x509.VerifyOptions{DNSName: name, Roots: certs.CAPool}); err != nil {
			t.Errorf("server cert for %s: %v", name, err)
		}
	}
	cliLeaf, err := x509.ParseCertificate(certs.ClientCert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cliLeaf.Verify(x509.VerifyOptions{Roots: certs.CAPool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client cert: %v", err)
	}
	if cliLeaf.Subject.CommonName != ClientCommonName {
		t.Errorf("client CN %q", cliLeaf.Subject.CommonName)
	}
}

func TestFormatCreds(t *testing.T) {
	t.Parallel()
	op := Operator(t)
	userJWT, seed := op.Account.User(t, "bob", func(uc *jwt.UserClaims) { uc.Pub.Allow.Add("foo") })
	text := []byte(FormatCreds(userJWT, seed))
	gotJWT, err := jwt.ParseDecoratedJWT(text)
	if err != nil || gotJWT != userJWT {
		t.Fatalf("ParseDecoratedJWT = %q, %v", gotJWT, err)
	}
	kp, err := jwt.ParseDecoratedUserNKey(text)
	if err != nil {
		t.Fatal(err)
	}
	if gotSeed, _ := kp.Seed(); string(gotSeed) != string(seed) {
		t.Fatal("seed does not round-trip")
	}
	uc, err := jwt.DecodeUserClaims(userJWT)
	if err != nil || !uc.Pub.Allow.Contains("foo") {
		t.Fatalf("modifier not applied: %+v %v", uc, err)
	}
}
