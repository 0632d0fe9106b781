package testserver

import (
	"strings"
	"testing"

	"github.com/natsio/natsio/natstest"
)

// DefaultClusterName is used when Options.ClusterName is empty.
const DefaultClusterName = "natsio-test"

// globalAccount is nats-server's default account name.
const globalAccount = "$G"

// Cluster is a set of routed servers forming one JetStream cluster, a
// natstest.Cluster seen through the repository's older test API.
type Cluster struct {
	nc      *natstest.Cluster
	servers []*Server
}

// StartCluster starts n servers on loopback that are routed to each other
// and, unless opts.NoJetStream is set, form a JetStream cluster
// (natstest.NewCluster). opts applies to every server; opts.Port and
// opts.ServerName are not used, opts.StoreDir (if set) becomes the parent
// of per-server directories.
func StartCluster(t testing.TB, n int, opts Options) *Cluster {
	t.Helper()
	name := opts.ClusterName
	if name == "" {
		name = DefaultClusterName
	}
	no, err := opts.natstest(true)
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	nc := natstest.NewCluster(t, n, append(no, natstest.ClusterName(name))...)
	c := &Cluster{nc: nc}
	for _, s := range nc.Nodes() {
		c.servers = append(c.servers, &Server{ns: s})
	}
	return c
}

// server maps a natstest node back to its Server.
func (c *Cluster) server(s *natstest.Server) *Server {
	if i := c.nc.Index(s); i >= 0 {
		return c.servers[i]
	}
	return nil
}

// Name returns the cluster name.
func (c *Cluster) Name() string { return c.nc.Name() }

// Servers returns the members in start order; the slice must not be
// modified.
func (c *Cluster) Servers() []*Server { return c.servers }

// URLs returns the client URLs of all members, comma separated.
func (c *Cluster) URLs() string { return strings.Join(c.nc.URLs(), ",") }

// Restart restarts member i on its old ports and store directory and waits
// until the cluster is ready again (routes up, meta leader elected, all
// running members current).
func (c *Cluster) Restart(t testing.TB, i int) {
	t.Helper()
	if err := c.nc.Restart(i); err != nil {
		t.Fatalf("testserver: %v", err)
	}
}

// Shutdown stops member i without waiting for the rest of the cluster.
func (c *Cluster) Shutdown(i int) { c.nc.Kill(i) }

// WaitReady waits until the running members are routed to each other and
// (with JetStream) have a meta leader whose peer set covers all of them.
func (c *Cluster) WaitReady(t testing.TB) {
	t.Helper()
	if err := c.nc.WaitReady(); err != nil {
		t.Fatalf("testserver: %v", err)
	}
}

// Leader returns the member that is the JetStream meta leader, or nil.
func (c *Cluster) Leader() *Server { return c.server(c.nc.MetaLeader()) }

// StreamLeader returns the member leading the given stream, or nil. An
// empty account means the default global account "$G"; in operator mode
// pass the account's public key.
func (c *Cluster) StreamLeader(account, stream string) *Server {
	if account == "" {
		account = globalAccount
	}
	return c.server(c.nc.AccountStreamLeader(account, stream))
}

// WaitStreamLeader polls until the stream has a leader and returns it.
func (c *Cluster) WaitStreamLeader(t testing.TB, account, stream string) *Server {
	t.Helper()
	if account == "" {
		account = globalAccount
	}
	leader, err := c.nc.WaitAccountStreamLeader(account, stream)
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	return c.server(leader)
}
