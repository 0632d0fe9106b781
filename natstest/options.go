package natstest

import (
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsio/natsio/conn"
)

// Defaults that differ from nats-server's own, chosen so that tests of lame
// duck mode finish quickly.
const (
	DefaultLameDuckDuration    = 2 * time.Second
	DefaultLameDuckGracePeriod = 200 * time.Millisecond
)

// DefaultClusterName names the clusters of NewCluster and StartCluster
// unless ClusterName is given.
const DefaultClusterName = "natstest"

// Option configures a server made by NewServer, Start, NewCluster,
// StartCluster, NewLeaf or StartLeaf. Options are applied in order; a later
// option of the same kind replaces an earlier one, except Configure, whose
// functions all run.
type Option struct{ f func(*config) }

// apply applies o to c; the zero Option is invalid.
func (o Option) apply(c *config) error {
	if o.f == nil {
		return fmt.Errorf("%w: zero natstest.Option", conn.ErrInvalidOption)
	}
	o.f(c)
	return nil
}

// config is what the options describe. It is copied per server.
type config struct {
	noJetStream  bool
	memoryStore  bool
	storeDir     string
	name         string
	clusterName  string
	domain       string
	maxPayload   int32
	user, pass   string
	token        string
	nkeys        []string
	accounts     []Account
	operator     *Operator
	tls          *tlsSpec
	ws           *wsSpec
	noListen     bool
	leafListener bool
	pingInterval time.Duration
	maxPingsOut  int
	ldmDuration  time.Duration
	ldmGrace     time.Duration
	configText   string
	debug, trace bool
	configure    []func(*server.Options)
	sysAccount   bool // SystemAccount

	// leafRemote is set by StartLeaf: the hub's leaf node URL.
	leafRemote string
}

type tlsSpec struct {
	certs          *Certs // nil: generate a set for the server
	verify         bool
	handshakeFirst bool
}

type wsSpec struct {
	compression bool
}

func newConfig(opts []Option) (*config, error) {
	c := &config{}
	for _, o := range opts {
		if err := o.apply(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// clone returns a copy that does not share the slices of c.
func (c *config) clone() *config {
	n := *c
	n.nkeys = append([]string(nil), c.nkeys...)
	n.accounts = append([]Account(nil), c.accounts...)
	n.configure = append([]func(*server.Options){}, c.configure...)
	if c.tls != nil {
		t := *c.tls
		n.tls = &t
	}
	if c.ws != nil {
		w := *c.ws
		n.ws = &w
	}
	return &n
}

// JetStream turns JetStream on (the default) or off.
func JetStream(on bool) Option {
	return Option{func(c *config) { c.noJetStream = !on }}
}

// MemoryStore makes the server accept memory streams only: nothing is
// written to disk, and creating a stream with file storage fails with the
// server's "insufficient storage resources" error. Use it to check that an
// application asks for the storage it means, or to keep a test off the
// disk. It writes a jetstream block into the server's configuration file,
// replacing one given with ConfigText.
func MemoryStore() Option {
	return Option{func(c *config) { c.memoryStore = true }}
}

// FileStore undoes MemoryStore: file and memory streams are both accepted
// (the default). File streams live in the store directory (see StoreDir).
func FileStore() Option {
	return Option{func(c *config) { c.memoryStore = false }}
}

// StoreDir keeps the JetStream store in dir instead of a fresh temporary
// directory. The directory is not removed when the server is closed. The
// store survives Restart either way. In a cluster, dir is the parent of one
// directory per node, named after the node.
func StoreDir(dir string) Option {
	return Option{func(c *config) { c.storeDir = dir }}
}

// Name sets the server name (server_name). Without it the server uses its
// generated ID. Cluster nodes are always named "<cluster>-<index>".
func Name(name string) Option {
	return Option{func(c *config) { c.name = name }}
}

// ClusterName names the cluster of NewCluster and StartCluster (default
// DefaultClusterName). It has no effect on a single server.
func ClusterName(name string) Option {
	return Option{func(c *config) { c.clusterName = name }}
}

// JetStreamDomain sets the JetStream domain of the server; a client of
// another domain reaches its JetStream through the domain's API prefix
// ($JS.<domain>.API). See NewLeaf.
func JetStreamDomain(domain string) Option {
	return Option{func(c *config) { c.domain = domain }}
}

// MaxPayload sets the largest message payload the server accepts (default
// 1 MiB).
func MaxPayload(n int32) Option {
	return Option{func(c *config) { c.maxPayload = n }}
}

// UserPassword requires clients to log in as user with password.
// Server.Connect does so by itself. It combines with NKeyUsers and
// Accounts (the user then belongs to the default account), not with Token.
func UserPassword(user, password string) Option {
	return Option{func(c *config) { c.user, c.pass = user, password }}
}

// Token requires clients to present token. Server.Connect does so by
// itself. It cannot be combined with UserPassword, NKeyUsers or Accounts:
// Start fails.
func Token(token string) Option {
	return Option{func(c *config) { c.token = token }}
}

// NKeyUsers lets the users with the given public nkeys ("U…", see
// NewNKeyUser) connect. Options add up.
func NKeyUsers(publicKeys ...string) Option {
	return Option{func(c *config) { c.nkeys = append(c.nkeys, publicKeys...) }}
}

// Accounts defines accounts with their users, written as an accounts block
// into the server's configuration file (replacing one given with
// ConfigText). Clients then have to log in as one of the users. Options add
// up.
func Accounts(accounts ...Account) Option {
	return Option{func(c *config) { c.accounts = append(c.accounts, accounts...) }}
}

// OperatorMode runs the server in operator (decentralised JWT) mode with
// o's operator, system account and accounts, resolved from memory. Accounts
// must be added to o before the server starts. Server.Connect logs in as a
// user of o.App made for the server; other users come from
// OperatorAccount.NewUser.
func OperatorMode(o *Operator) Option {
	return Option{func(c *config) { c.operator = o }}
}

// TLS serves TLS on the client port (and on the WebSocket port, see
// WebSocket) with the server certificate of certs. With nil certs a fresh
// set is generated for the server (Server.Certs returns it). Server.Connect
// trusts the CA by itself; other clients use Certs.ClientTLSConfig.
func TLS(certs *Certs) Option {
	return Option{func(c *config) {
		first := c.tls != nil && c.tls.handshakeFirst
		c.tls = &tlsSpec{certs: certs, handshakeFirst: first}
	}}
}

// MutualTLS is TLS that also requires a client certificate signed by the CA
// of certs (nil: generated, as for TLS). Certs.ClientTLSConfig presents the
// set's client certificate; Server.Connect uses it.
func MutualTLS(certs *Certs) Option {
	return Option{func(c *config) {
		first := c.tls != nil && c.tls.handshakeFirst
		c.tls = &tlsSpec{certs: certs, verify: true, handshakeFirst: first}
	}}
}

// TLSHandshakeFirst makes the server expect the TLS handshake before it
// sends INFO (handshake_first); clients need conn.TLSHandshakeFirst. It
// implies TLS with generated certificates when no TLS option is given.
func TLSHandshakeFirst() Option {
	return Option{func(c *config) {
		if c.tls == nil {
			c.tls = &tlsSpec{}
		}
		c.tls.handshakeFirst = true
	}}
}

// WebSocket opens a WebSocket listener on a free loopback port
// (Server.WebSocketURL). It serves wss:// when the server has TLS, with the
// same certificates.
func WebSocket() Option {
	return Option{func(c *config) {
		if c.ws == nil {
			c.ws = &wsSpec{}
		}
	}}
}

// WebSocketCompression is WebSocket with permessage-deflate offered to
// clients (conn.WebSocketCompression).
func WebSocketCompression() Option {
	return Option{func(c *config) { c.ws = &wsSpec{compression: true} }}
}

// NoListener starts the server without any client listener (nats-server's
// DontListen): it opens no TCP port, and clients reach it only in-process
// (Server.InProcess). Server.URL then returns a placeholder that only the
// in-process dialer can serve. WebSocket and leaf node listeners are still
// opened when asked for.
func NoListener() Option {
	return Option{func(c *config) { c.noListen = true }}
}

// LeafNodes opens a leaf node listener on a free loopback port, so that
// NewLeaf can connect a leaf node to this server (the hub).
func LeafNodes() Option {
	return Option{func(c *config) { c.leafListener = true }}
}

// PingInterval sets how often the server pings a client and after how many
// unanswered pings it drops it (server defaults: 2 minutes and 2).
func PingInterval(d time.Duration, maxOutstanding int) Option {
	return Option{func(c *config) { c.pingInterval, c.maxPingsOut = d, maxOutstanding }}
}

// LameDuckDuration sets how long lame duck mode takes (see
// Server.LameDuck) and the grace period before it starts closing clients
// (defaults DefaultLameDuckDuration and DefaultLameDuckGracePeriod, much
// shorter than nats-server's). The grace period must be shorter.
func LameDuckDuration(duration, grace time.Duration) Option {
	return Option{func(c *config) { c.ldmDuration, c.ldmGrace = duration, grace }}
}

// ConfigText is nats-server configuration, loaded before the other options
// are applied on top of it: use it for anything the options do not cover.
// The listen addresses and ports, JetStream on/off and the store directory
// are always decided by this package; MemoryStore, Accounts and
// OperatorMode write their own blocks after it.
func ConfigText(text string) Option {
	return Option{func(c *config) { c.configText = text }}
}

// Debug raises the server's log level to debug once logging is on (see
// LogEnv).
func Debug() Option { return Option{func(c *config) { c.debug = true }} }

// Trace raises the server's log level to protocol traces (and debug) once
// logging is on (see LogEnv).
func Trace() Option { return Option{func(c *config) { c.trace = true }} }

// Configure calls f with the final nats-server options right before the
// server is created, at every start and restart: the escape hatch for
// anything else. Restart still brings the client, WebSocket, route and leaf
// node listeners back on the ports they had, including listeners f asked
// for.
func Configure(f func(*server.Options)) Option {
	return Option{func(c *config) {
		if f != nil {
			c.configure = append(c.configure, f)
		}
	}}
}
