package testserver

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// loopback is the only address test servers listen on.
const loopback = "127.0.0.1"

// Defaults that differ from nats-server's own defaults, chosen so that tests
// involving lame duck mode finish quickly.
const (
	DefaultLameDuckDuration    = 2 * time.Second
	DefaultLameDuckGracePeriod = 200 * time.Millisecond
)

// Options configures a test server. The zero value starts a JetStream enabled
// server without authentication or TLS on a random loopback port.
type Options struct {
	// NoJetStream disables JetStream. Zero value: JetStream is enabled.
	NoJetStream bool

	// StoreDir is the JetStream store directory. Zero value: a fresh
	// t.TempDir() per server. It is kept across Restart, so JetStream
	// data survives restarts. A store_dir in ConfigText is ignored.
	StoreDir string

	// Port is the client port. Zero value: -1, a random free port chosen
	// by the kernel. Setting a fixed port is discouraged; it exists to
	// bring a server back on a port a previous server used.
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
	// and loaded with server.ProcessConfigFile before the other fields are
	// applied on top of it. Use it for accounts, operator/JWT mode (see
	// OperatorSetup.Config) and anything else not covered here. The client
	// listen address, ports, JetStream on/off and store_dir are always
	// decided by this package.
	ConfigText string

	// Debug and Trace enable debug and protocol trace logging. They only
	// take effect when NATSIO_TEST_SERVER_LOG is set (see package doc).
	Debug bool
	Trace bool

	// Configure, when not nil, is called with the final server options
	// right before the server is created (also on every restart). It is
	// the last-resort escape hatch for anything not covered above (for
	// example JetStreamMaxMemory). Restart reuses the ports that were
	// actually bound, whatever set them.
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

func (o *TLSOptions) config() (*server.TLSConfigOpts, error) {
	if o.CertFile == "" || o.KeyFile == "" {
		return nil, errors.New("TLS needs CertFile and KeyFile")
	}
	if o.Verify && o.CAFile == "" {
		return nil, errors.New("TLS Verify needs CAFile")
	}
	return &server.TLSConfigOpts{
		CertFile:       o.CertFile,
		KeyFile:        o.KeyFile,
		CaFile:         o.CAFile,
		Verify:         o.Verify,
		HandshakeFirst: o.HandshakeFirst,
		Timeout:        tlsTimeoutSeconds,
	}, nil
}

// ports holds the listen ports of one server instance. A zero value means
// "random" (-1) for the client and WebSocket listeners and "no cluster".
type ports struct {
	client, ws, cluster int
}

// clusterSpec is what StartCluster adds to each member's options.
type clusterSpec struct {
	name   string
	routes []*url.URL
}

// serverOptions turns Options into nats-server options. confFile is the
// written ConfigText (or ""), p the ports to use.
func serverOptions(o *Options, confFile, storeDir string, p ports, cl *clusterSpec) (*server.Options, error) {
	so := &server.Options{}
	if confFile != "" {
		var err error
		if so, err = server.ProcessConfigFile(confFile); err != nil {
			return nil, fmt.Errorf("loading ConfigText: %w", err)
		}
	}
	so.Host = loopback
	so.Port = randomIfZero(p.client)
	so.NoSigs = true
	so.NoLog = true // the logger is installed explicitly, see log.go
	if o.ServerName != "" {
		so.ServerName = o.ServerName
	}

	so.JetStream = !o.NoJetStream
	so.StoreDir = storeDir

	if err := applyAuth(o, so); err != nil {
		return nil, err
	}

	if o.TLS != nil {
		tc, err := o.TLS.config()
		if err != nil {
			return nil, err
		}
		if so.TLSConfig, err = server.GenTLSConfig(tc); err != nil {
			return nil, fmt.Errorf("TLS: %w", err)
		}
		so.TLS = true
		so.TLSVerify = o.TLS.Verify
		so.TLSTimeout = tlsTimeoutSeconds
		so.TLSHandshakeFirst = o.TLS.HandshakeFirst
	}

	if ws := o.WebSocket; ws != nil {
		so.Websocket.Host = loopback
		so.Websocket.Port = randomIfZero(p.ws)
		so.Websocket.Compression = ws.Compression
		so.Websocket.NoTLS = ws.TLS == nil
		if ws.TLS != nil {
			tc, err := ws.TLS.config()
			if err != nil {
				return nil, fmt.Errorf("WebSocket: %w", err)
			}
			tc.HandshakeFirst = false
			if so.Websocket.TLSConfig, err = server.GenTLSConfig(tc); err != nil {
				return nil, fmt.Errorf("WebSocket TLS: %w", err)
			}
		}
	}

	if o.MaxPayload != 0 {
		so.MaxPayload = o.MaxPayload
	}
	if o.PingInterval != 0 {
		so.PingInterval = o.PingInterval
	}
	if o.MaxPingsOut != 0 {
		so.MaxPingsOut = o.MaxPingsOut
	}
	so.LameDuckDuration = orDefault(o.LameDuckDuration, DefaultLameDuckDuration)
	so.LameDuckGracePeriod = orDefault(o.LameDuckGracePeriod, DefaultLameDuckGracePeriod)

	if cl != nil {
		so.Cluster.Name = cl.name
		so.Cluster.Host = loopback
		so.Cluster.Port = p.cluster
		so.Routes = cl.routes
	}

	if o.Configure != nil {
		o.Configure(so)
	}
	return so, nil
}

func applyAuth(o *Options, so *server.Options) error {
	if o.Token != "" {
		if o.User != "" || len(o.NKeys) > 0 {
			return errors.New("testserver: Token cannot be combined with User or NKeys")
		}
		so.Authorization = o.Token
		return nil
	}
	if len(o.NKeys) == 0 {
		if o.User != "" {
			so.Username, so.Password = o.User, o.Password
		}
		return nil
	}
	// With nkey users the server ignores the single user/password pair,
	// so it has to go into the users list.
	for _, pub := range o.NKeys {
		so.Nkeys = append(so.Nkeys, &server.NkeyUser{Nkey: pub})
	}
	if o.User != "" {
		so.Users = append(so.Users, &server.User{Username: o.User, Password: o.Password})
	}
	return nil
}

func randomIfZero(port int) int {
	if port == 0 {
		return server.RANDOM_PORT
	}
	return port
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
