package testserver

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	// DefaultClusterName is used when Options.ClusterName is empty.
	DefaultClusterName = "natsio-test"

	// clusterReadyTimeout bounds route formation plus the first meta leader
	// election (nats-server's election timeout alone is 4-9 s).
	clusterReadyTimeout = 45 * time.Second

	// startAttempts is how often StartCluster tries again with fresh ports
	// when a pre-allocated route port was taken in the meantime.
	startAttempts = 3
)

// Cluster is a set of routed servers forming one JetStream cluster.
type Cluster struct {
	name    string
	servers []*Server
}

// StartCluster starts n servers on loopback that are routed to each other
// and, unless opts.NoJetStream is set, form a JetStream cluster (each server
// with its own name "<cluster>-<i>" and store directory). It returns once
// every server sees routes to all others, a JetStream meta leader exists,
// all servers are meta group peers and current. opts applies to every
// server; opts.Port and opts.ServerName are not used, opts.StoreDir (if
// set) becomes the parent of per-server directories.
//
// Route listen ports are pre-allocated (bind to port 0, note the port,
// close) because every server's routes list must name all members, which is
// what makes JetStream size its meta group correctly. Should a port be taken
// before the server binds it, the whole cluster is started again on new
// ports.
func StartCluster(t testing.TB, n int, opts Options) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("testserver: StartCluster needs at least one server, got %d", n)
	}
	name := opts.ClusterName
	if name == "" {
		name = DefaultClusterName
	}
	var err error
	for attempt := 0; attempt < startAttempts; attempt++ {
		var c *Cluster
		if c, err = startCluster(t, n, name, opts); err == nil {
			if err = c.waitReady(); err != nil {
				c.shutdownAll()
				t.Fatalf("testserver: cluster %q not ready: %v", name, err)
			}
			return c
		}
	}
	t.Fatalf("testserver: starting cluster %q: %v", name, err)
	return nil
}

func startCluster(t testing.TB, n int, name string, opts Options) (*Cluster, error) {
	t.Helper()
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
	c := &Cluster{name: name}
	for i, p := range routePorts {
		o := opts
		o.Port = 0
		o.ServerName = fmt.Sprintf("%s-%d", name, i)
		if opts.StoreDir != "" {
			o.StoreDir = filepath.Join(opts.StoreDir, o.ServerName)
		}
		s := newServer(t, o, spec, ports{cluster: p})
		c.servers = append(c.servers, s)
		if err := s.start(); err != nil {
			c.shutdownAll()
			return nil, fmt.Errorf("server %d: %w", i, err)
		}
	}
	return c, nil
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
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

func (c *Cluster) shutdownAll() {
	for _, s := range c.servers {
		s.Shutdown()
	}
}

// waitReady waits until the running members are fully routed and, with
// JetStream, agree on a meta leader that counts all of them as peers.
func (c *Cluster) waitReady() error {
	return waitFor(clusterReadyTimeout, func() error {
		var running []*Server
		for _, s := range c.servers {
			if s.Running() {
				running = append(running, s)
			}
		}
		if len(running) == 0 {
			return errStop{errors.New("no server is running")}
		}
		for _, s := range running {
			if got := routedPeers(s); got < len(running)-1 {
				return fmt.Errorf("server %s is routed to %d of %d peers", s.opts.ServerName, got, len(running)-1)
			}
		}
		if c.servers[0].opts.NoJetStream {
			return nil
		}
		leader := c.Leader()
		if leader == nil {
			return errors.New("no JetStream meta leader")
		}
		srv := leader.Srv()
		if srv == nil {
			return errors.New("meta leader went away")
		}
		// Peers that were shut down may still be counted for a while.
		if peers := srv.JetStreamClusterPeers(); len(peers) < len(running) {
			return fmt.Errorf("meta leader %s sees %d of %d peers", leader.opts.ServerName, len(peers), len(running))
		}
		for _, s := range running {
			if srv := s.Srv(); srv == nil || !srv.JetStreamIsCurrent() {
				return fmt.Errorf("server %s is not current with the meta group", s.opts.ServerName)
			}
		}
		return nil
	})
}

// routedPeers counts the distinct servers s has a route to.
func routedPeers(s *Server) int {
	srv := s.Srv()
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

// Name returns the cluster name.
func (c *Cluster) Name() string { return c.name }

// Servers returns the members in start order; the slice must not be
// modified.
func (c *Cluster) Servers() []*Server { return c.servers }

// URLs returns the client URLs of all members, comma separated.
func (c *Cluster) URLs() string {
	urls := make([]string, len(c.servers))
	for i, s := range c.servers {
		urls[i] = s.URL()
	}
	return strings.Join(urls, ",")
}

// Restart restarts member i on its old ports and store directory and waits
// until the cluster is ready again (routes up, meta leader elected, all
// running members current).
func (c *Cluster) Restart(t testing.TB, i int) {
	t.Helper()
	c.servers[i].Restart(t)
	c.WaitReady(t)
}

// Shutdown stops member i without waiting for the rest of the cluster.
func (c *Cluster) Shutdown(i int) {
	c.servers[i].Shutdown()
}

// WaitReady waits until the running members are routed to each other and
// (with JetStream) have a meta leader whose peer set covers all of them.
func (c *Cluster) WaitReady(t testing.TB) {
	t.Helper()
	if err := c.waitReady(); err != nil {
		t.Fatalf("testserver: cluster %q not ready: %v", c.name, err)
	}
}

// Leader returns the member that is the JetStream meta leader, or nil.
func (c *Cluster) Leader() *Server {
	for _, s := range c.servers {
		if srv := s.Srv(); srv != nil && srv.JetStreamIsLeader() {
			return s
		}
	}
	return nil
}

// StreamLeader returns the member leading the given stream, or nil. An
// empty account means the default global account "$G"; in operator mode
// pass the account's public key.
func (c *Cluster) StreamLeader(account, stream string) *Server {
	if account == "" {
		account = globalAccount
	}
	for _, s := range c.servers {
		if srv := s.Srv(); srv != nil && srv.JetStreamIsStreamLeader(account, stream) {
			return s
		}
	}
	return nil
}

// WaitStreamLeader polls until the stream has a leader and returns it.
func (c *Cluster) WaitStreamLeader(t testing.TB, account, stream string) *Server {
	t.Helper()
	var leader *Server
	err := waitFor(clusterReadyTimeout, func() error {
		if leader = c.StreamLeader(account, stream); leader == nil {
			return fmt.Errorf("no leader for stream %q", stream)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	return leader
}

// globalAccount is nats-server's default account name.
const globalAccount = "$G"
