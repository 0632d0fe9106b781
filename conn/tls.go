package conn

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// TLS sets the TLS configuration and requires TLS. The config is cloned;
// if its MinVersion is lower than TLS 1.2 it is raised. ServerName is set
// per server unless given here.
func TLS(cfg *tls.Config) Option {
	return Option{func(o *options) error {
		if cfg == nil {
			return invalid("nil TLS config")
		}
		o.tlsConfig = cfg.Clone()
		o.secure = true
		return nil
	}}
}

// RootCAs trusts the PEM certificates in files (instead of the system pool)
// and requires TLS.
func RootCAs(files ...string) Option {
	return Option{func(o *options) error {
		pool := x509.NewCertPool()
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return fmt.Errorf("%w: root CA: %v", ErrInvalidOption, err)
			}
			if !pool.AppendCertsFromPEM(b) {
				return fmt.Errorf("%w: root CA %s: no certificate", ErrInvalidOption, f)
			}
		}
		o.tlsCfg().RootCAs = pool
		o.secure = true
		return nil
	}}
}

// ClientCert presents the certificate and key in PEM files (mutual TLS) and
// requires TLS.
func ClientCert(certFile, keyFile string) Option {
	return Option{func(o *options) error {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return fmt.Errorf("%w: client certificate: %v", ErrInvalidOption, err)
		}
		o.tlsCfg().Certificates = []tls.Certificate{cert}
		o.secure = true
		return nil
	}}
}

// TLSHandshakeFirst performs the TLS handshake before the server's INFO,
// for servers configured with handshake_first. It requires TLS.
func TLSHandshakeFirst() Option {
	return Option{func(o *options) error {
		o.tlsFirst = true
		o.secure = true
		return nil
	}}
}

func (o *options) tlsCfg() *tls.Config {
	if o.tlsConfig == nil {
		o.tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return o.tlsConfig
}

// clientTLS returns the TLS config for a server whose TLS name is host.
func (o *options) clientTLS(host string) *tls.Config {
	cfg := o.tlsCfg().Clone()
	if cfg.MinVersion < tls.VersionTLS12 {
		cfg.MinVersion = tls.VersionTLS12
	}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	return cfg
}
