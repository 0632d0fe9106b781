package fakeserver_test

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/proto"
)

// selfSigned returns a server certificate for 127.0.0.1 and a pool that
// trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "fakeserver"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

// TestTLSAfterInfo: with WithTLS the INFO goes in plaintext, then the
// handshake, and from then on the client's operations are recorded
// decrypted and what the server sends is encrypted.
func TestTLSAfterInfo(t *testing.T) {
	cert, pool := selfSigned(t)
	s := fakeserver.New(t, fakeserver.WithTLS(&tls.Config{Certificates: []tls.Certificate{cert}}),
		fakeserver.WithHandler(fakeserver.Basic(fakeserver.DefaultInfo().With("tls_required", true))))
	rc := dial(t, s)
	if l := rc.line(); !strings.Contains(l, `"tls_required":true`) {
		t.Fatalf("info %q", l)
	}
	if rc.r.Buffered() != 0 {
		t.Fatal("bytes after the INFO before the handshake")
	}
	tc := tls.Client(rc.c, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.Write([]byte("CONNECT {\"tls_required\":true}\r\nPING\r\nPUB a 2\r\nhi\r\n")); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(tc)
	if l, err := r.ReadString('\n'); err != nil || l != "PONG\r\n" {
		t.Fatalf("got %q %v", l, err)
	}
	c, err := s.Client(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if op, err := c.Expect(ctxT(t), proto.KindPub); err != nil || string(op.Payload) != "hi" {
		t.Fatalf("pub %+v %v", op, err)
	}
	if err := c.SendMsg("a", 1, "", []byte("yo")); err != nil {
		t.Fatal(err)
	}
	if l, err := r.ReadString('\n'); err != nil || l != "MSG a 1 2\r\n" {
		t.Fatalf("got %q %v", l, err)
	}
}

// TestTLSHandshakeFailure: a client that does not speak TLS after the
// INFO makes SendInfo fail and the connection close, with nothing
// recorded.
func TestTLSHandshakeFailure(t *testing.T) {
	cert, _ := selfSigned(t)
	errs := make(chan error, 1)
	s := fakeserver.New(t, fakeserver.WithTLS(&tls.Config{Certificates: []tls.Certificate{cert}}),
		fakeserver.WithHandler(func(c *fakeserver.Client) {
			errs <- c.SendInfo(fakeserver.DefaultInfo().With("tls_required", true))
		}))
	rc := dial(t, s)
	rc.line()
	rc.write("CONNECT {}\r\nPING\r\n")
	if err := <-errs; err == nil {
		t.Fatal("the handshake succeeded with a plaintext client")
	}
	c, _ := s.Client(ctxT(t), 1)
	<-c.Done()
	if len(c.Ops()) != 0 || c.ParseErr() != nil {
		t.Fatalf("ops %v parse error %v", c.Ops(), c.ParseErr())
	}
}
