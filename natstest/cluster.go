package natstest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	// clusterReadyTimeout bounds route formation plus a meta leader
	// election (nats-server's election timeout alone is 4-9 s).
	clusterReadyTimeout = 45 * time.Second

	// startAttempts is how often a cluster is started again on fresh ports
	// when a route port was taken between choosing and binding it.
	startAttempts = 3

	// globalAccount is nats-server's default account.
	globalAccount = "$G"
)

// Cluster is a set of servers routed to each other, forming one JetStream
// cluster unless JetStream(false) is given. It is safe for concurrent use.
// Make it with NewCluster in a test or StartCluster elsewhere.
type Cluster struct {
	name  string
	base  string // temporary directory (generated certificates)
	nodes []*Server
}

// NewCluster starts n routed servers and waits until the cluster is ready
// (see StartCluster); they are stopped and their stores removed when tb's
// test ends. A failure ends the test with tb.Fatalf.
func NewCluster(tb testing.TB, n int, opts ...Option) *Cluster {
	tb.Helper()
	c, err := startCluster(tb, n, opts)
	if err != nil {
		tb.Fatalf("natstest: %v", err)
	}
	tb.Cleanup(c.Close)
	return c
}

// StartCluster starts n servers on loopback, routed to each other, each
// named "<cluster>-<index>" with its own store, and returns once every node
// is routed to all others and, with JetStream, a meta leader counts them
// all as current peers (this takes a few seconds: an election). opts apply
// to every node (Name does not; StoreDir is the parent of the nodes'
// stores; TLS(nil) generates one set of certificates for all). Call Close
// when done.
func StartCluster(n int, opts ...Option) (*Cluster, error) {
	return startCluster(nil, n, opts)
}

func startCluster(tb testing.TB, n int, opts []Option) (*Cluster, error) {
	if n < 1 {
		return nil, fmt.Errorf("a cluster needs at least one server, got %d", n)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	name := cfg.clusterName
	if name == "" {
		name = DefaultClusterName
	}
	base, err := os.MkdirTemp("", "natstest-cluster-*")
	if err != nil {
		return nil, err
	}
	if cfg.tls != nil && cfg.tls.certs == nil {
		if cfg.tls.certs, err = NewCerts(filepath.Join(base, "certs")); err != nil {
			_ = os.RemoveAll(base)
			return nil, fmt.Errorf("certificates: %w", err)
		}
	}
	for attempt := 0; attempt < startAttempts; attempt++ {
		var c *Cluster
		if c, err = startNodes(tb, n, name, base, cfg); err == nil {
			if err = c.WaitReady(); err != nil {
				c.Close()
				return nil, err
			}
			return c, nil
		}
	}
	_ = os.RemoveAll(base)
	return nil, fmt.Errorf("starting cluster %q: %w", name, err)
}

// startNodes starts the nodes on pre-allocated route ports: every node's
// routes must name all members for JetStream to size its meta group, so the
// ports are chosen (bind to port 0, note, close) before any node starts.
func startNodes(tb testing.TB, n int, name, base string, cfg *config) (*Cluster, error) {
	routePorts, err := freePorts(n)
	if err != nil {
		return nil, err
	}
	spec := &clusterSpec{name: name}
	for _, p := range routePorts {
		spec.routes = append(spec.routes, &url.URL{
			Scheme: "nats-route",
			Host:   net.JoinHostPort(loopback, strconv.Itoa(p)),
		})
	}
	c := &Cluster{name: name, base: base}
	for i, p := range routePorts {
		nc := cfg.clone()
		nc.name = fmt.Sprintf("%s-%d", name, i)
		if cfg.storeDir != "" {
			nc.storeDir = filepath.Join(cfg.storeDir, nc.name)
		}
		s, err := startServer(tb, nc, spec, ports{cluster: p})
		if err != nil {
			c.closeNodes()
			return nil, fmt.Errorf("node %d: %w", i, err)
		}
		c.nodes = append(c.nodes, s)
	}
	return c, nil
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(loopback, "0"))
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func (c *Cluster) closeNodes() {
	for _, s := range c.nodes {
		s.Close()
	}
}

// Close stops every node for good and removes the temporary directories.
// It is idempotent.
func (c *Cluster) Close() {
	c.closeNodes()
	_ = os.RemoveAll(c.base)
}

// Name returns the cluster name.
func (c *Cluster) Name() string { return c.name }

// Len returns the number of nodes.
func (c *Cluster) Len() int { return len(c.nodes) }

// Node returns node i (0 ≤ i < Len) in start order.
func (c *Cluster) Node(i int) *Server { return c.nodes[i] }

// Nodes returns the nodes in start order, in a new slice.
func (c *Cluster) Nodes() []*Server { return append([]*Server(nil), c.nodes...) }

// Index returns the index of node s, or -1 when s is not a node.
func (c *Cluster) Index(s *Server) int {
	for i, n := range c.nodes {
		if n == s {
			return i
		}
	}
	return -1
}

// URLs returns every node's client URL in start order.
func (c *Cluster) URLs() []string {
	urls := make([]string, len(c.nodes))
	for i, s := range c.nodes {
		urls[i] = s.URL()
	}
	return urls
}

// URL returns all client URLs comma separated, as conn.Connect takes them.
func (c *Cluster) URL() string { return strings.Join(c.URLs(), ",") }

// Kill shuts node i down (Server.Shutdown) without waiting for the others
// to notice; Restart brings it back.
func (c *Cluster) Kill(i int) { c.nodes[i].Shutdown() }

// Restart restarts node i on its ports and store and waits until the
// cluster is ready again (WaitReady).
func (c *Cluster) Restart(i int) error {
	if err := c.nodes[i].Restart(); err != nil {
		return err
	}
	return c.WaitReady()
}

// WaitReady waits (up to 45 s) until the running nodes are routed to each
// other and, with JetStream, a meta leader counts them all as peers and
// each is current with the meta group. It fails when no node is running.
func (c *Cluster) WaitReady() error {
	err := waitFor(clusterReadyTimeout, func() error {
		var running []*Server
		for _, s := range c.nodes {
			if s.Running() {
				running = append(running, s)
			}
		}
		if len(running) == 0 {
			return errStop{errors.New("no node is running")}
		}
		for _, s := range running {
			if got := routedPeers(s); got < len(running)-1 {
				return fmt.Errorf("node %s is routed to %d of %d peers", s.cfg.name, got, len(running)-1)
			}
		}
		if err := clusterSystemReady(running); err != nil {
			return err
		}
		if c.nodes[0].cfg.noJetStream {
			return nil
		}
		leader := c.MetaLeader()
		if leader == nil {
			return errors.New("no JetStream meta leader")
		}
		srv := leader.Server()
		if srv == nil {
			return errors.New("the meta leader went away")
		}
		// Nodes that were shut down may still be counted for a while.
		if peers := srv.JetStreamClusterPeers(); len(peers) < len(running) {
			return fmt.Errorf("meta leader %s sees %d of %d peers", leader.cfg.name, len(peers), len(running))
		}
		for _, s := range running {
			if srv := s.Server(); srv == nil || !srv.JetStreamIsCurrent() {
				return fmt.Errorf("node %s is not current with the meta group", s.cfg.name)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("natstest: cluster %q not ready: %w", c.name, err)
	}
	return nil
}

// routedPeers counts the distinct servers s has a route to.
func routedPeers(s *Server) int {
	srv := s.Server()
	if srv == nil {
		return 0
	}
	rz, err := srv.Routez(nil)
	if err != nil {
		return 0
	}
	seen := make(map[string]bool)
	for _, r := range rz.Routes {
		seen[r.RemoteID] = true
	}
	return len(seen)
}

// MetaLeader returns the node that is the JetStream meta leader, or nil.
func (c *Cluster) MetaLeader() *Server {
	for _, s := range c.nodes {
		if srv := s.Server(); srv != nil && srv.JetStreamIsLeader() {
			return s
		}
	}
	return nil
}

// StreamLeader returns the node leading stream of the default account, or
// nil when it has no leader at the moment.
func (c *Cluster) StreamLeader(stream string) *Server {
	return c.AccountStreamLeader(globalAccount, stream)
}

// AccountStreamLeader is StreamLeader for the stream of an account (its
// name, or in operator mode its public key).
func (c *Cluster) AccountStreamLeader(account, stream string) *Server {
	for _, s := range c.nodes {
		if srv := s.Server(); srv != nil && srv.JetStreamIsStreamLeader(account, stream) {
			return s
		}
	}
	return nil
}

// WaitStreamLeader waits (up to 45 s) until stream of the default account
// has a leader and returns it.
func (c *Cluster) WaitStreamLeader(stream string) (*Server, error) {
	return c.WaitAccountStreamLeader(globalAccount, stream)
}

// WaitAccountStreamLeader is WaitStreamLeader for the stream of an account.
func (c *Cluster) WaitAccountStreamLeader(account, stream string) (*Server, error) {
	var leader *Server
	err := waitFor(clusterReadyTimeout, func() error {
		if leader = c.AccountStreamLeader(account, stream); leader == nil {
			return fmt.Errorf("no leader for stream %q", stream)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("natstest: %w", err)
	}
	return leader, nil
}

// ConsumerLeader returns the node leading consumer of stream (default
// account), or nil when it has no leader at the moment.
func (c *Cluster) ConsumerLeader(stream, consumer string) *Server {
	for _, s := range c.nodes {
		if srv := s.Server(); srv != nil && srv.JetStreamIsConsumerLeader(globalAccount, stream, consumer) {
			return s
		}
	}
	return nil
}

// WaitConsumerLeader waits (up to 45 s) until consumer of stream (default
// account) has a leader and returns it. A consumer just created or whose
// leader was lost answers no pulls until then.
func (c *Cluster) WaitConsumerLeader(stream, consumer string) (*Server, error) {
	var leader *Server
	err := waitFor(clusterReadyTimeout, func() error {
		if leader = c.ConsumerLeader(stream, consumer); leader == nil {
			return fmt.Errorf("no leader for consumer %q of stream %q", consumer, stream)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("natstest: %w", err)
	}
	return leader, nil
}

// KillStreamLeader waits for the leader of stream (default account), shuts
// it down and returns its index for Restart. The remaining nodes elect a
// new leader when they still have a quorum.
func (c *Cluster) KillStreamLeader(stream string) (int, error) {
	leader, err := c.WaitStreamLeader(stream)
	if err != nil {
		return -1, err
	}
	leader.Shutdown()
	return c.Index(leader), nil
}

// KillMetaLeader waits for the JetStream meta leader, shuts it down and
// returns its index for Restart. The remaining nodes elect a new one when
// they still have a quorum.
func (c *Cluster) KillMetaLeader() (int, error) {
	var leader *Server
	err := waitFor(clusterReadyTimeout, func() error {
		if leader = c.MetaLeader(); leader == nil {
			return errors.New("no JetStream meta leader")
		}
		return nil
	})
	if err != nil {
		return -1, fmt.Errorf("natstest: cluster %q: %w", c.name, err)
	}
	leader.Shutdown()
	return c.Index(leader), nil
}
