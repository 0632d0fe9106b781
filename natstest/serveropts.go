package natstest

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// tlsTimeoutSeconds is generous because handshakes are slow under -race.
const tlsTimeoutSeconds = 5

func (c *config) validate() error {
	if c.token != "" && (c.user != "" || len(c.nkeys) > 0 || len(c.accounts) > 0) {
		return errors.New("natstest: Token cannot be combined with UserPassword, NKeyUsers or Accounts")
	}
	if c.sysAccount && c.token != "" {
		return errors.New("natstest: SystemAccount cannot be combined with Token")
	}
	if c.operator != nil && (c.token != "" || c.user != "" || len(c.nkeys) > 0 || len(c.accounts) > 0) {
		return errors.New("natstest: OperatorMode cannot be combined with other authentication options")
	}
	if t := c.tls; t != nil && t.certs != nil {
		if t.certs.ServerCertFile == "" || t.certs.ServerKeyFile == "" {
			return errors.New("natstest: TLS certificates without a server certificate or key file")
		}
		if t.verify && t.certs.CAFile == "" {
			return errors.New("natstest: MutualTLS certificates without a CA file")
		}
	}
	if c.ldmDuration != 0 && c.ldmGrace >= c.ldmDuration {
		return errors.New("natstest: the lame duck grace period must be shorter than its duration")
	}
	for _, a := range c.accounts {
		if a.Name == "" {
			return errors.New("natstest: an account without a name")
		}
	}
	return nil
}

// fileText returns the configuration file the server loads first, or "".
func (c *config) fileText() string {
	var b strings.Builder
	b.WriteString(c.configText)
	if c.configText != "" && !strings.HasSuffix(c.configText, "\n") {
		b.WriteByte('\n')
	}
	if c.memoryStore && !c.noJetStream {
		// Only a parsed max_file_store of 0 means "no file storage" to the
		// server; 0 in server.Options means "as much as the disk has".
		b.WriteString("jetstream: { max_file_store: 0 }\n")
	}
	if accounts := c.withSystemAccount(); len(accounts) > 0 {
		b.WriteString("accounts: {\n")
		for _, a := range accounts {
			fmt.Fprintf(&b, "  %s: {\n", quote(a.Name))
			if a.JetStream {
				b.WriteString("    jetstream: enabled\n")
			}
			b.WriteString("    users: [\n")
			for _, u := range a.Users {
				fmt.Fprintf(&b, "      { user: %s, password: %s }\n", quote(u.Name), quote(u.Password))
			}
			b.WriteString("    ]\n  }\n")
		}
		b.WriteString("}\n")
	}
	b.WriteString(c.systemAccountText())
	if c.operator != nil {
		b.WriteString(c.operator.Config())
	}
	return b.String()
}

// quote writes s as a double-quoted configuration string.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// serverOptions turns the configuration into nats-server options for a
// start on ports p.
func (s *Server) serverOptions(p ports) (*server.Options, error) {
	c := s.cfg
	so := &server.Options{}
	if s.conf != "" {
		var err error
		if so, err = server.ProcessConfigFile(s.conf); err != nil {
			return nil, fmt.Errorf("loading configuration: %w", err)
		}
	}
	so.Host = loopback
	so.Port = server.RANDOM_PORT
	so.DontListen = c.noListen
	so.NoSigs = true
	so.NoLog = true // the logger is installed explicitly, see log.go
	if c.name != "" {
		so.ServerName = c.name
	}

	so.JetStream = !c.noJetStream
	so.StoreDir = s.store
	if c.domain != "" {
		so.JetStreamDomain = c.domain
	}

	applyAuth(c, so)
	applySystemAccount(c, so)

	if c.tls != nil {
		tc := s.tlsConfig()
		var err error
		if so.TLSConfig, err = server.GenTLSConfig(tc); err != nil {
			return nil, fmt.Errorf("TLS: %w", err)
		}
		so.TLS = true
		so.TLSVerify = c.tls.verify
		so.TLSTimeout = tlsTimeoutSeconds
		so.TLSHandshakeFirst = c.tls.handshakeFirst
	}

	if ws := c.ws; ws != nil {
		so.Websocket.Host = loopback
		so.Websocket.Port = server.RANDOM_PORT
		so.Websocket.Compression = ws.compression
		so.Websocket.NoTLS = c.tls == nil
		if c.tls != nil {
			tc := s.tlsConfig()
			tc.HandshakeFirst = false
			var err error
			if so.Websocket.TLSConfig, err = server.GenTLSConfig(tc); err != nil {
				return nil, fmt.Errorf("WebSocket TLS: %w", err)
			}
		}
	}

	if c.leafListener {
		so.LeafNode.Host = loopback
		so.LeafNode.Port = server.RANDOM_PORT
	}
	if c.leafRemote != "" {
		u, err := url.Parse(c.leafRemote)
		if err != nil {
			return nil, fmt.Errorf("leaf node remote: %w", err)
		}
		so.LeafNode.Remotes = append(so.LeafNode.Remotes, &server.RemoteLeafOpts{URLs: []*url.URL{u}})
		if s.sysRemote != nil {
			so.LeafNode.Remotes = append(so.LeafNode.Remotes, s.sysRemote)
		}
		so.LeafNode.ReconnectInterval = leafReconnect
	}

	if c.maxPayload != 0 {
		so.MaxPayload = c.maxPayload
	}
	if c.pingInterval != 0 {
		so.PingInterval = c.pingInterval
	}
	if c.maxPingsOut != 0 {
		so.MaxPingsOut = c.maxPingsOut
	}
	so.LameDuckDuration = orDefault(c.ldmDuration, DefaultLameDuckDuration)
	so.LameDuckGracePeriod = orDefault(c.ldmGrace, DefaultLameDuckGracePeriod)

	if cl := s.cluster; cl != nil {
		so.Cluster.Name = cl.name
		so.Cluster.Host = loopback
		so.Cluster.Port = p.cluster
		so.Routes = cl.routes
	}

	for _, f := range c.configure {
		f(so)
	}

	// Every listener comes back on the port it had.
	if p.client > 0 && !so.DontListen {
		so.Port = p.client
	}
	if p.ws > 0 && so.Websocket.Port != 0 {
		so.Websocket.Port = p.ws
	}
	if p.leaf > 0 && so.LeafNode.Port != 0 {
		so.LeafNode.Port = p.leaf
	}
	if p.cluster > 0 && so.Cluster.Port != 0 {
		so.Cluster.Port = p.cluster
	}
	return so, nil
}

// tlsConfig describes the server side of TLS for server.GenTLSConfig.
func (s *Server) tlsConfig() *server.TLSConfigOpts {
	return &server.TLSConfigOpts{
		CertFile:       s.certs.ServerCertFile,
		KeyFile:        s.certs.ServerKeyFile,
		CaFile:         s.certs.CAFile,
		Verify:         s.cfg.tls.verify,
		HandshakeFirst: s.cfg.tls.handshakeFirst,
		Timeout:        tlsTimeoutSeconds,
	}
}

func applyAuth(c *config, so *server.Options) {
	if c.token != "" {
		so.Authorization = c.token
		return
	}
	for _, pub := range c.nkeys {
		so.Nkeys = append(so.Nkeys, &server.NkeyUser{Nkey: pub})
	}
	if c.user == "" {
		return
	}
	// With a users list (nkeys, accounts) the server refuses a single
	// user/password pair: it has to join the list.
	if len(so.Nkeys) > 0 || len(so.Users) > 0 {
		so.Users = append(so.Users, &server.User{Username: c.user, Password: c.pass})
		return
	}
	so.Username, so.Password = c.user, c.pass
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
