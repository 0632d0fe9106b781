package natscontext

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nkeys"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

// DefaultURL is the server of a context without a URL.
const DefaultURL = "nats://127.0.0.1:4222"

var (
	// ErrNotFound reports a context that has no file, or no selected
	// context when one was asked for.
	ErrNotFound = errors.New("natscontext: context not found")
	// ErrInvalidName reports a context name that is empty or holds "..",
	// "/", "\" or a control byte.
	ErrInvalidName = errors.New("natscontext: invalid context name")
	// ErrUnsupported reports a setting natsio cannot honour (a SOCKS proxy,
	// the Windows certificate store, an nsc lookup, a secret reference
	// other than a file path).
	ErrUnsupported = errors.New("natscontext: unsupported context setting")
	// ErrConflict reports a context with more than one kind of
	// authentication (user, creds, nkey, nsc, user_jwt), or a TLS
	// certificate without its key.
	ErrConflict = errors.New("natscontext: conflicting context settings")
)

// Context is one context file of the nats CLI. The JSON names are the
// nats CLI's, so a Context read and saved keeps every field it wrote.
// The file paths (Creds, NKey, Cert, Key, CA) may start with ~ and hold
// $VARIABLES; a "file://" prefix is accepted too.
type Context struct {
	// Name is the file's name without ".json" (set by Load).
	Name        string `json:"name,omitempty"`
	Description string `json:"description"`
	// URL is the server URL, or several separated by commas.
	URL        string `json:"url"`
	SocksProxy string `json:"socks_proxy"`
	Token      string `json:"token"`
	User       string `json:"user"`
	Password   string `json:"password"`
	// Creds is a credentials file (a user JWT and its nkey seed).
	Creds string `json:"creds"`
	// NKey is a user nkey seed file.
	NKey string `json:"nkey"`
	// Cert and Key are a TLS client certificate and its key; CA a file of
	// certificate authorities to trust.
	Cert string `json:"cert"`
	Key  string `json:"key"`
	CA   string `json:"ca"`
	// NSC is the nats CLI's deprecated nsc profile lookup.
	NSC string `json:"nsc"`
	// JetStreamDomain and JetStreamAPIPrefix route JetStream requests
	// (see JSOptions); JetStreamEventPrefix is kept for the nats CLI.
	JetStreamDomain      string `json:"jetstream_domain"`
	JetStreamAPIPrefix   string `json:"jetstream_api_prefix"`
	JetStreamEventPrefix string `json:"jetstream_event_prefix"`
	InboxPrefix          string `json:"inbox_prefix"`
	// UserJWT and UserSeed authenticate with a JWT and the seed that
	// signs the server's nonce.
	UserJWT     string `json:"user_jwt"`
	UserSeed    string `json:"user_seed"`
	ColorScheme string `json:"color_scheme"`
	// TLSFirst performs the TLS handshake before the server's INFO.
	TLSFirst            bool     `json:"tls_first"`
	WindowsCertStore    string   `json:"windows_cert_store"`
	WindowsCertMatchBy  string   `json:"windows_cert_match_by"`
	WindowsCertMatch    string   `json:"windows_cert_match"`
	WindowsCACertsMatch []string `json:"windows_ca_certs_match"`

	warnings []string // see Warnings
}

// ServerURL returns the context's URL, or DefaultURL when it has none.
func (c *Context) ServerURL() string {
	if strings.TrimSpace(c.URL) == "" {
		return DefaultURL
	}
	return c.URL
}

// Validate reports a context that cannot be used as written: more than
// one kind of authentication, a certificate without its key, or a setting
// natsio cannot honour.
func (c *Context) Validate() error {
	var kinds []string
	for _, k := range []struct{ name, v string }{
		{"user", c.User}, {"creds", c.Creds}, {"nkey", c.NKey}, {"nsc", c.NSC}, {"user_jwt", c.UserJWT},
	} {
		if k.v != "" {
			kinds = append(kinds, k.name)
		}
	}
	if len(kinds) > 1 {
		return fmt.Errorf("%w: only one of %s may be set", ErrConflict, strings.Join(kinds, ", "))
	}
	if (c.Cert == "") != (c.Key == "") {
		return fmt.Errorf("%w: cert and key go together", ErrConflict)
	}
	if c.Password != "" && c.User == "" {
		return fmt.Errorf("%w: password without user", ErrConflict)
	}
	if c.UserSeed != "" && c.UserJWT == "" {
		return fmt.Errorf("%w: user_seed without user_jwt", ErrConflict)
	}
	for _, u := range []struct{ name, v string }{
		{"socks_proxy", c.SocksProxy}, {"nsc", c.NSC}, {"windows_cert_store", c.WindowsCertStore},
	} {
		if u.v != "" {
			return fmt.Errorf("%w: %s", ErrUnsupported, u.name)
		}
	}
	if c.UserJWT != "" && c.UserSeed == "" {
		return fmt.Errorf("%w: user_jwt without user_seed (natsio needs the seed to sign the server's nonce)", ErrUnsupported)
	}
	if c.JetStreamDomain != "" && c.JetStreamAPIPrefix != "" {
		return fmt.Errorf("%w: jetstream_domain and jetstream_api_prefix exclude each other", ErrConflict)
	}
	for _, p := range []struct{ name, v string }{
		{"creds", c.Creds}, {"nkey", c.NKey}, {"cert", c.Cert}, {"key", c.Key}, {"ca", c.CA},
	} {
		if _, err := expandPath(p.v); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrUnsupported, p.name, err)
		}
	}
	return nil
}

// Options returns the connection options the context describes:
// authentication, TLS and the inbox prefix (the URL is ServerURL, the
// JetStream settings JSOptions). Options given after them to conn.Connect
// override them. It fails with ErrConflict or ErrUnsupported (see
// Validate) before reading any file; files are read when conn.Connect
// applies the options.
func (c *Context) Options() ([]conn.Option, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	path := func(p string) string { s, _ := expandPath(p); return s }
	var opts []conn.Option
	switch {
	case c.User != "":
		opts = append(opts, conn.UserInfo(c.User, c.Password))
	case c.Creds != "":
		opts = append(opts, conn.UserCredentials(path(c.Creds)))
	case c.NKey != "":
		opts = append(opts, conn.NKeyFromSeedFile(path(c.NKey)))
	case c.UserJWT != "":
		jwt, seed := c.UserJWT, c.UserSeed
		opts = append(opts, conn.UserJWT(func() (string, error) { return jwt, nil }, func(nonce []byte) ([]byte, error) {
			kp, err := nkeys.FromSeed([]byte(seed))
			if err != nil {
				return nil, fmt.Errorf("%w: user_seed", conn.ErrBadCredentials)
			}
			defer kp.Wipe()
			return kp.Sign(nonce)
		}))
	}
	if c.Token != "" {
		opts = append(opts, conn.Token(c.Token))
	}
	if c.Cert != "" {
		opts = append(opts, conn.ClientCert(path(c.Cert), path(c.Key)))
	}
	if c.CA != "" {
		opts = append(opts, conn.RootCAs(path(c.CA)))
	}
	if c.TLSFirst {
		opts = append(opts, conn.TLSHandshakeFirst())
	}
	if c.InboxPrefix != "" {
		opts = append(opts, conn.InboxPrefix(c.InboxPrefix))
	}
	return opts, nil
}

// JSOptions returns the jsapi options of the context's JetStream domain or
// API prefix (none when it has neither).
func (c *Context) JSOptions() []jsapi.Option {
	switch {
	case c.JetStreamDomain != "":
		return []jsapi.Option{jsapi.Domain(c.JetStreamDomain)}
	case c.JetStreamAPIPrefix != "":
		return []jsapi.Option{jsapi.APIPrefix(c.JetStreamAPIPrefix)}
	}
	return nil
}

// Connect loads the context name ("" for the selected one; a name, never
// a path: see Load) and connects to its servers with its options, then
// opts (which override them). The connection's JetStream settings are the
// context's JSOptions. The context's Warnings are logged with slog's
// default logger.
func Connect(ctx context.Context, name string, opts ...conn.Option) (*conn.Conn, error) {
	c, err := Load(name)
	if err != nil {
		return nil, err
	}
	c.logWarnings()
	copts, err := c.Options()
	if err != nil {
		return nil, err
	}
	return conn.Connect(ctx, c.ServerURL(), append(copts, opts...)...)
}

// expandPath turns a context's file reference into a path: "file://"
// removed, $VARIABLES expanded, a leading ~ made the home directory.
// Other schemes (op://, nsc://, env://, data:) are not supported.
func expandPath(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		p = rest
	} else if i := strings.Index(p, "://"); i > 0 || strings.HasPrefix(p, "data:") {
		scheme := p
		if i > 0 {
			scheme = p[:i+3]
		} else {
			scheme = "data:"
		}
		return "", fmt.Errorf("secret reference %s is not supported (give a file path)", scheme)
	}
	p = os.ExpandEnv(p)
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		p = filepath.Join(home, p[1:])
	}
	return p, nil
}
