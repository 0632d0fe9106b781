package natstest

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

	"github.com/natsio/natsio/conn"
)

// ClientCommonName is the subject common name of the client certificate
// of Certs.
const ClientCommonName = "natstest-client"

// Certs is a throw-away PKI for TLS tests: a CA, a server certificate valid
// for 127.0.0.1, ::1 and localhost, and a client certificate, all signed by
// the CA with ECDSA P-256 keys and valid for 24 hours. The PEM files live in
// Dir.
type Certs struct {
	Dir string

	CAFile         string // CA certificate
	ServerCertFile string
	ServerKeyFile  string
	ClientCertFile string
	ClientKeyFile  string

	// CA is the parsed CA certificate and CAPool a pool holding only it
	// (the RootCAs of a client).
	CA     *x509.Certificate
	CAPool *x509.CertPool

	ServerCert tls.Certificate
	ClientCert tls.Certificate
}

// GenerateCerts makes a fresh Certs in a directory of tb's, removed when
// the test ends. A failure ends the test with tb.Fatalf.
func GenerateCerts(tb testing.TB) *Certs {
	tb.Helper()
	c, err := NewCerts(tb.TempDir())
	if err != nil {
		tb.Fatalf("natstest: generating certificates: %v", err)
	}
	return c
}

// NewCerts makes a fresh Certs with its files in dir (created if needed;
// removing it is the caller's business).
func NewCerts(dir string) (*Certs, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "natstest-ca", Organization: []string{"natstest"}},
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

	c.ServerCert, err = leafCert(&x509.Certificate{
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
	c.ClientCert, err = leafCert(&x509.Certificate{
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

// leafCert creates a key and a CA-signed certificate from tmpl, writes both
// as PEM files and returns them as a tls.Certificate.
func leafCert(tmpl, ca *x509.Certificate, caKey crypto.Signer, certFile, keyFile string) (tls.Certificate, error) {
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

// ClientTLSConfig returns a client configuration that trusts only the CA
// and presents the client certificate (which a server without MutualTLS
// ignores). ServerName is left empty: conn and tls.Dial fill it in from the
// address dialed; code that upgrades a connection with tls.Client must set
// it ("127.0.0.1" or "localhost"). Each call returns a new config.
func (c *Certs) ClientTLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		RootCAs:      c.CAPool,
		Certificates: []tls.Certificate{c.ClientCert},
	}
}

// ClientOption returns conn.TLS with ClientTLSConfig.
func (c *Certs) ClientOption() conn.Option { return conn.TLS(c.ClientTLSConfig()) }
