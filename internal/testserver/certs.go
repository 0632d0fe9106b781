package testserver

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Certs is a throw-away PKI: a CA, a server certificate valid for
// 127.0.0.1, ::1 and localhost, and a client certificate, all signed by the
// CA with ECDSA P-256 keys. The PEM files live in a t.TempDir().
type Certs struct {
	Dir string

	CAFile         string // CA certificate
	ServerCertFile string
	ServerKeyFile  string
	ClientCertFile string
	ClientKeyFile  string

	// CA is the parsed CA certificate and CAPool a pool containing only it
	// (use it as tls.Config.RootCAs on the client side).
	CA     *x509.Certificate
	CAPool *x509.CertPool

	ServerCert tls.Certificate
	ClientCert tls.Certificate
}

// ClientCommonName is the subject CN of the client certificate.
const ClientCommonName = "natsio-test-client"

// GenerateCerts creates a fresh CA, server and client certificate for the
// test. It fails the test on error.
func GenerateCerts(t testing.TB) *Certs {
	t.Helper()
	c, err := generateCerts(t.TempDir())
	if err != nil {
		t.Fatalf("testserver: generating certificates: %v", err)
	}
	return c
}

func generateCerts(dir string) (*Certs, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "natsio-test-ca", Organization: []string{"natsio tests"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := sign(caTmpl, caTmpl, caKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}

	c := &Certs{
		Dir:            dir,
		CAFile:         filepath.Join(dir, "ca.pem"),
		ServerCertFile: filepath.Join(dir, "server-cert.pem"),
		ServerKeyFile:  filepath.Join(dir, "server-key.pem"),
		ClientCertFile: filepath.Join(dir, "client-cert.pem"),
		ClientKeyFile:  filepath.Join(dir, "client-key.pem"),
		CA:             ca,
		CAPool:         x509.NewCertPool(),
	}
	c.CAPool.AddCert(ca)
	if err := writePEM(c.CAFile, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}

	c.ServerCert, err = leaf(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "localhost"},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}, ca, caKey, c.ServerCertFile, c.ServerKeyFile)
	if err != nil {
		return nil, err
	}
	c.ClientCert, err = leaf(&x509.Certificate{
		Subject:     pkix.Name{CommonName: ClientCommonName},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, caKey, c.ClientCertFile, c.ClientKeyFile)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// leaf creates a key and a CA-signed certificate from tmpl, writes both as
// PEM files and returns them as a tls.Certificate.
func leaf(tmpl, ca *x509.Certificate, caKey crypto.Signer, certFile, keyFile string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	der, err := sign(tmpl, ca, key, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := writePEM(certFile, "CERTIFICATE", der); err != nil {
		return tls.Certificate{}, err
	}
	if err := writePEM(keyFile, "PRIVATE KEY", keyDER); err != nil {
		return tls.Certificate{}, err
	}
	return tls.LoadX509KeyPair(certFile, keyFile)
}

func sign(tmpl, parent *x509.Certificate, key *ecdsa.PrivateKey, parentKey crypto.Signer) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	return x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

// ServerTLS returns TLS options for Options.TLS using the server
// certificate; verify turns on mutual TLS (client certificates signed by
// the CA are required).
func (c *Certs) ServerTLS(verify bool) *TLSOptions {
	return &TLSOptions{
		CertFile: c.ServerCertFile,
		KeyFile:  c.ServerKeyFile,
		CAFile:   c.CAFile,
		Verify:   verify,
	}
}

// ClientTLSConfig returns a client tls.Config trusting only the test CA and
// presenting the client certificate. ServerName is left empty: tls.Dial
// fills it in from the dialed address, while code that upgrades an existing
// connection with tls.Client must set it ("127.0.0.1" or "localhost").
func (c *Certs) ClientTLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		RootCAs:      c.CAPool,
		Certificates: []tls.Certificate{c.ClientCert},
	}
}
