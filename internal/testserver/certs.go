package testserver

import (
	"testing"

	"github.com/natsio/natsio/natstest"
)

// Certs is a throw-away PKI (natstest.Certs): a CA, a server certificate
// valid for 127.0.0.1, ::1 and localhost, and a client certificate. The PEM
// files live in a t.TempDir().
type Certs struct {
	*natstest.Certs
}

// ClientCommonName is the subject CN of the client certificate.
const ClientCommonName = natstest.ClientCommonName

// GenerateCerts creates a fresh CA, server and client certificate for the
// test. It fails the test on error.
func GenerateCerts(t testing.TB) *Certs {
	t.Helper()
	return &Certs{natstest.GenerateCerts(t)}
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
