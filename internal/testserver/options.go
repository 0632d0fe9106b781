package testserver

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/natsio/natsio/natstest"
)

// Defaults that differ from nats-server's own defaults, chosen so that tests
// involving lame duck mode finish quickly.
const (
	DefaultLameDuckDuration    = natstest.DefaultLameDuckDuration
	DefaultLameDuckGracePeriod = natstest.DefaultLameDuckGracePeriod
)

// Options configures a test server. The zero value starts a JetStream enabled
// server without authentication or TLS on a random loopback port. Each field
// maps onto a natstest option.
type Options struct {
	// NoJetStream disables JetStream. Zero value: JetStream is enabled.
	NoJetStream bool

	// StoreDir is the JetStream store directory. Zero value: a fresh
	// temporary directory per server. It is kept across Restart, so
	// JetStream data survives restarts. A store_dir in ConfigText is
	// ignored.
	StoreDir string

	// Port is the client port. Zero value: a random free port chosen by
	// the kernel. Setting a fixed port is discouraged; it exists to bring a
	// server back on a port a previous server used.
	Port int

	// ServerName sets server_name. Zero value: the server's generated ID
	// (StartCluster always names its servers).
	ServerName string

	// ClusterName is only used by StartCluster. Zero value: "natsio-test".
	ClusterName string

	// User and Password require username/password authentication.
	User     string
	Password string

	// Token requires token authentication. It cannot be combined with
	// User or NKeys.
	Token string

	// NKeys lists user nkey public keys ("U...") that may connect
	// (see NKeyUser). May be combined with User/Password.
	NKeys []string

	// TLS enables TLS on the client port when non-nil.
	TLS *TLSOptions

	// WebSocket enables a WebSocket listener on a random port when non-nil.
	WebSocket *WebSocketOptions

	// MaxPayload overrides max_payload. Zero value: server default (1 MiB).
	MaxPayload int32

	// PingInterval and MaxPingsOut override ping_interval and ping_max.
	// Zero values: server defaults (2m and 2).
	PingInterval time.Duration
	MaxPingsOut  int

	// LameDuckDuration and LameDuckGracePeriod configure lame duck mode.
	// Zero values: DefaultLameDuckDuration and DefaultLameDuckGracePeriod
	// (much shorter than nats-server's 2m/10s). The grace period must be
	// shorter than the duration.
	LameDuckDuration    time.Duration
	LameDuckGracePeriod time.Duration

	// ConfigText, when not empty, is written to a nats-server config file
	// and loaded before the other fields are applied on top of it
	// (natstest.ConfigText).
	ConfigText string

	// Debug and Trace enable debug and protocol trace logging. They only
	// take effect when NATSIO_TEST_SERVER_LOG is set (see package doc).
	Debug bool
	Trace bool

	// Configure, when not nil, is called with the final server options
	// right before the server is created (also on every restart)
	// (natstest.Configure).
	Configure func(*server.Options)
}

// TLSOptions configures TLS for the client (or WebSocket) listener. Paths are
// typically taken from GenerateCerts, see Certs.ServerTLS.
type TLSOptions struct {
	CertFile string // server certificate (PEM)
	KeyFile  string // server private key (PEM)
	CAFile   string // CA used to verify client certificates (PEM)

	// Verify requires clients to present a certificate signed by CAFile
	// (mutual TLS).
	Verify bool

	// HandshakeFirst makes the server expect the TLS handshake before it
	// sends INFO (handshake_first). Ignored for WebSocket.
	HandshakeFirst bool
}

// WebSocketOptions configures the WebSocket listener. The zero value is a
// plain (ws://) listener without compression on a random port.
type WebSocketOptions struct {
	// Compression lets the server negotiate permessage-deflate.
	Compression bool
	// TLS turns the listener into wss:// when non-nil.
	TLS *TLSOptions
}

// tlsTimeoutSeconds is generous because handshakes are slow under -race.
const tlsTimeoutSeconds = 5

func (o *TLSOptions) certs() *natstest.Certs {
	return &natstest.Certs{CAFile: o.CAFile, ServerCertFile: o.CertFile, ServerKeyFile: o.KeyFile}
}

// natstest returns the natstest options for o. With cluster the fields
// that StartCluster decides itself are left out.
func (o *Options) natstest(cluster bool) ([]natstest.Option, error) {
	opts := []natstest.Option{natstest.JetStream(!o.NoJetStream)}
	add := func(oo ...natstest.Option) { opts = append(opts, oo...) }
	if o.StoreDir != "" {
		add(natstest.StoreDir(o.StoreDir))
	}
	if !cluster && o.ServerName != "" {
		add(natstest.Name(o.ServerName))
	}
	if o.User != "" {
		add(natstest.UserPassword(o.User, o.Password))
	}
	if o.Token != "" {
		add(natstest.Token(o.Token))
	}
	if len(o.NKeys) > 0 {
		add(natstest.NKeyUsers(o.NKeys...))
	}
	if t := o.TLS; t != nil {
		if t.Verify {
			add(natstest.MutualTLS(t.certs()))
		} else {
			add(natstest.TLS(t.certs()))
		}
		if t.HandshakeFirst {
			add(natstest.TLSHandshakeFirst())
		}
	}
	if ws := o.WebSocket; ws != nil {
		if ws.Compression {
			add(natstest.WebSocketCompression())
		} else {
			add(natstest.WebSocket())
		}
	}
	if o.MaxPayload != 0 {
		add(natstest.MaxPayload(o.MaxPayload))
	}
	if o.PingInterval != 0 || o.MaxPingsOut != 0 {
		add(natstest.PingInterval(o.PingInterval, o.MaxPingsOut))
	}
	if o.LameDuckDuration != 0 || o.LameDuckGracePeriod != 0 {
		add(natstest.LameDuckDuration(orDefault(o.LameDuckDuration, DefaultLameDuckDuration),
			orDefault(o.LameDuckGracePeriod, DefaultLameDuckGracePeriod)))
	}
	if o.ConfigText != "" {
		add(natstest.ConfigText(o.ConfigText))
	}
	if o.Debug {
		add(natstest.Debug())
	}
	if o.Trace {
		add(natstest.Trace())
	}
	if ws := o.WebSocket; ws != nil && ws.TLS != nil {
		// A wss listener on a server whose client port may be plain:
		// natstest only knows TLS on both, so it is set up here.
		wt := ws.TLS
		if wt.CertFile == "" || wt.KeyFile == "" {
			return nil, errors.New("WebSocket TLS needs CertFile and KeyFile")
		}
		cfg, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: wt.CertFile, KeyFile: wt.KeyFile,
			CaFile: wt.CAFile, Verify: wt.Verify, Timeout: tlsTimeoutSeconds})
		if err != nil {
			return nil, fmt.Errorf("WebSocket TLS: %w", err)
		}
		add(natstest.Configure(func(so *server.Options) {
			so.Websocket.TLSConfig, so.Websocket.NoTLS = cfg, false
		}))
	}
	if !cluster && o.Port != 0 {
		port := o.Port
		add(natstest.Configure(func(so *server.Options) { so.Port = port }))
	}
	if o.Configure != nil {
		add(natstest.Configure(o.Configure))
	}
	return opts, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
