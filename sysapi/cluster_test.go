package sysapi_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/sysapi"
)

// wait bounds every call of these tests; none is expected to take it.
const wait = 30 * time.Second

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	t.Cleanup(cancel)
	return ctx
}

// topology is a 3-node cluster with a leaf node on node 0, all with a
// system account linked across the leaf connection.
type topology struct {
	cluster *natstest.Cluster
	leaf    *natstest.Server
	sc      *sysapi.Client
	// ids maps server names to IDs, for the four servers.
	ids map[string]string
}

func newTopology(t *testing.T) *topology {
	t.Helper()
	c := natstest.NewCluster(t, 3, natstest.SystemAccount(), natstest.LeafNodes(), natstest.MemoryStore())
	leaf := natstest.NewLeaf(t, c.Node(0), natstest.SystemAccount(), natstest.JetStream(false), natstest.Name("leaf"))
	for _, n := range c.Nodes() {
		if err := n.WaitSystemInterest(append(c.Nodes(), leaf)...); err != nil {
			t.Fatal(err)
		}
	}
	if err := leaf.WaitSystemInterest(c.Nodes()...); err != nil {
		t.Fatal(err)
	}
	nc := c.Node(1).ConnectSystem(t)
	sc, err := sysapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, s := range append(c.Nodes(), leaf) {
		ids[s.Server().Name()] = s.Server().ID()
	}
	return &topology{cluster: c, leaf: leaf, sc: sc, ids: ids}
}

// servers checks that replies came from exactly the four servers, each
// once, and returns them by server name.
func servers[T any](t *testing.T, tp *topology, kind string, rs []*sysapi.Reply[T], err error) map[string]*sysapi.Reply[T] {
	t.Helper()
	if err != nil {
		t.Fatalf("%s to all: %v", kind, err)
	}
	got := map[string]*sysapi.Reply[T]{}
	for _, r := range rs {
		if r.Error != nil {
			t.Fatalf("%s: %s answered %v", kind, r.Server.Name, r.Error)
		}
		if _, dup := got[r.Server.Name]; dup {
			t.Fatalf("%s: %s answered twice", kind, r.Server.Name)
		}
		if tp.ids[r.Server.Name] != r.Server.ID {
			t.Fatalf("%s: reply from %q (%s), not one of %v", kind, r.Server.Name, r.Server.ID, tp.ids)
		}
		if !json.Valid(r.Raw) || !strings.Contains(string(r.Raw), r.Server.ID) {
			t.Fatalf("%s: Raw is not the server's reply: %.200s", kind, r.Raw)
		}
		got[r.Server.Name] = r
	}
	if len(got) != len(tp.ids) {
		t.Fatalf("%s: %d servers answered, want %d", kind, len(got), len(tp.ids))
	}
	return got
}

// rawData returns the "data" member of a raw reply as a map.
func rawData(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m.Data
}

// TestEveryKindOnAClusterAndALeaf asks a 3-node cluster and its leaf node
// for every kind, from all servers and from each one, and checks each
// answer against what the topology is.
func TestEveryKindOnAClusterAndALeaf(t *testing.T) {
	tp := newTopology(t)
	ctx := ctxT(t)
	sc := tp.sc
	all := sysapi.Expect(len(tp.ids))
	names := []string{"natstest-0", "natstest-1", "natstest-2"}

	t.Run("VARZ", func(t *testing.T) {
		rs, err := sc.PingVarz(ctx, sysapi.VarzOptions{}, all)
		got := servers(t, tp, "VARZ", rs, err)
		for name, r := range got {
			if r.Data.ID != r.Server.ID || r.Data.Name != name {
				t.Errorf("%s: varz of %s/%s", name, r.Data.Name, r.Data.ID)
			}
			// A field the typed struct lacks survives in Raw.
			if _, ok := rawData(t, r.Raw)["disk_io_wait_stats"]; !ok {
				t.Errorf("%s: raw varz lost disk_io_wait_stats", name)
			}
		}
		for _, name := range names {
			if c := got[name].Data.Cluster.Name; c != "natstest" {
				t.Errorf("%s: cluster %q", name, c)
			}
		}
		if got["leaf"].Data.Leafs != 2 || got["natstest-0"].Data.Leafs != 2 {
			t.Errorf("leaf connections: leaf %d, hub %d, want 2 each (default and system accounts)",
				got["leaf"].Data.Leafs, got["natstest-0"].Data.Leafs)
		}
	})
	t.Run("CONNZ", func(t *testing.T) {
		rs, err := sc.PingConnz(ctx, sysapi.ConnzOptions{Auth: true, Subscriptions: true}, all)
		got := servers(t, tp, "CONNZ", rs, err)
		var mine *sysapi.ConnInfo
		for _, ci := range got["natstest-1"].Data.Conns {
			if ci.AuthorizedUser == natstest.SystemUser && ci.Account == natstest.SystemAccountName {
				mine = ci
			}
		}
		if mine == nil || len(mine.Subs) == 0 {
			t.Fatalf("natstest-1's connz lacks this system connection with its inbox: %+v", got["natstest-1"].Data.Conns)
		}
		if n := got["natstest-2"].Data.NumConns; n != 0 {
			t.Errorf("natstest-2 has %d client connections, want 0", n)
		}
		// A filter on a closed connection state and a user.
		one, err := sc.Connz(ctx, tp.ids["natstest-1"], sysapi.ConnzOptions{User: "nobody", Auth: true})
		if err != nil {
			t.Fatal(err)
		}
		if one.Data.NumConns != 0 {
			t.Errorf("connz for user nobody: %d connections", one.Data.NumConns)
		}
	})
	t.Run("ROUTEZ", func(t *testing.T) {
		rs, err := sc.PingRoutez(ctx, sysapi.RoutezOptions{}, all)
		got := servers(t, tp, "ROUTEZ", rs, err)
		for _, name := range names {
			peers := map[string]bool{}
			for _, r := range got[name].Data.Routes {
				peers[r.RemoteName] = true
			}
			if len(peers) != 2 || peers[name] {
				t.Errorf("%s routes to %v, want the two others", name, peers)
			}
		}
		if n := got["leaf"].Data.NumRoutes; n != 0 {
			t.Errorf("leaf has %d routes", n)
		}
	})
	t.Run("GATEWAYZ", func(t *testing.T) {
		rs, err := sc.PingGatewayz(ctx, sysapi.GatewayzOptions{}, all)
		got := servers(t, tp, "GATEWAYZ", rs, err)
		for name, r := range got {
			if r.Data.ID != r.Server.ID || len(r.Data.OutboundGateways) != 0 {
				t.Errorf("%s: gatewayz %+v", name, r.Data)
			}
		}
	})
	t.Run("LEAFZ", func(t *testing.T) {
		rs, err := sc.PingLeafz(ctx, sysapi.LeafzOptions{}, all)
		got := servers(t, tp, "LEAFZ", rs, err)
		accounts := func(name string) []string {
			var a []string
			for _, l := range got[name].Data.Leafs {
				a = append(a, l.Account)
			}
			slices.Sort(a)
			return a
		}
		want := []string{"$G", natstest.SystemAccountName}
		if a := accounts("natstest-0"); !slices.Equal(a, want) {
			t.Errorf("hub leaf accounts %v, want %v", a, want)
		}
		if a := accounts("leaf"); !slices.Equal(a, want) {
			t.Errorf("leaf's accounts %v, want %v", a, want)
		}
		if n := got["natstest-2"].Data.NumLeafs; n != 0 {
			t.Errorf("natstest-2 has %d leaf connections", n)
		}
	})
	t.Run("SUBSZ", func(t *testing.T) {
		rs, err := sc.PingSubsz(ctx, sysapi.SubszOptions{}, all)
		got := servers(t, tp, "SUBSZ", rs, err)
		for name, r := range got {
			if r.Data.NumSubs == 0 {
				t.Errorf("%s: no subscriptions", name)
			}
		}
		// The test option lists the subscriptions a subject reaches: here
		// the server's own VARZ responder.
		one, err := sc.Subsz(ctx, tp.ids["natstest-2"], sysapi.SubszOptions{Subscriptions: true, Account: natstest.SystemAccountName, Test: sysapi.Subject(sysapi.KindVarz, tp.ids["natstest-2"])})
		if err != nil {
			t.Fatal(err)
		}
		if len(one.Data.Subs) == 0 {
			t.Errorf("subsz test: no subscription for VARZ: %+v", one.Data)
		}
	})
	t.Run("JSZ", func(t *testing.T) {
		rs, err := sc.PingJsz(ctx, sysapi.JszOptions{Accounts: true}, all)
		got := servers(t, tp, "JSZ", rs, err)
		for _, name := range names {
			d := got[name].Data
			if d.Disabled || d.Meta == nil || d.Meta.Size != 3 || d.Meta.Leader == "" {
				t.Errorf("%s: jsz %+v meta %+v", name, d, d.Meta)
			}
		}
		if !got["leaf"].Data.Disabled {
			t.Errorf("leaf: JetStream not reported off")
		}
		leader, err := sc.PingJsz(ctx, sysapi.JszOptions{LeaderOnly: true}, sysapi.Expect(1))
		if err != nil {
			t.Fatal(err)
		}
		if len(leader) != 1 || leader[0].Server.Name != got["natstest-0"].Data.Meta.Leader {
			t.Errorf("leader only: %d replies", len(leader))
		}
	})
	t.Run("ACCOUNTZ", func(t *testing.T) {
		rs, err := sc.PingAccountz(ctx, sysapi.AccountzOptions{}, all)
		got := servers(t, tp, "ACCOUNTZ", rs, err)
		for name, r := range got {
			if r.Data.SystemAccount != natstest.SystemAccountName || !slices.Contains(r.Data.Accounts, "$G") {
				t.Errorf("%s: accountz %+v", name, r.Data)
			}
		}
		one, err := sc.Accountz(ctx, tp.ids["leaf"], sysapi.AccountzOptions{Account: natstest.SystemAccountName})
		if err != nil {
			t.Fatal(err)
		}
		if a := one.Data.Account; a == nil || !a.IsSystem || a.Name != natstest.SystemAccountName {
			t.Errorf("leaf's system account detail: %+v", a)
		}
	})
	t.Run("HEALTHZ", func(t *testing.T) {
		rs, err := sc.PingHealthz(ctx, sysapi.HealthzOptions{}, all)
		got := servers(t, tp, "HEALTHZ", rs, err)
		for name, r := range got {
			if r.Data.Status != "ok" {
				t.Errorf("%s: health %+v", name, r.Data)
			}
		}
		bad, err := sc.Healthz(ctx, tp.ids["natstest-0"], sysapi.HealthzOptions{Account: "$G", Stream: "NOPE", Details: true})
		if err != nil {
			t.Fatal(err)
		}
		if bad.Data.Status == "ok" || len(bad.Data.Errors) == 0 {
			t.Errorf("health of a missing stream: %+v", bad.Data)
		}
	})
	t.Run("STATSZ", func(t *testing.T) {
		rs, err := sc.PingStatsz(ctx, sysapi.StatszOptions{}, all)
		got := servers(t, tp, "STATSZ", rs, err)
		if got["natstest-1"].Data.Connections < 1 {
			t.Errorf("natstest-1 counts no connection")
		}
		for _, name := range names {
			if n := len(got[name].Data.Routes); n < 2 {
				t.Errorf("%s: %d routes in statsz", name, n)
			}
		}
		rs2, err := sc.Ping(ctx, all)
		servers(t, tp, "PING", rs2, err)
	})
	t.Run("IDZ", func(t *testing.T) {
		rs, err := sc.PingIdz(ctx, all)
		got := servers(t, tp, "IDZ", rs, err)
		for name, r := range got {
			if r.Data.Name != name || r.Data.ID != tp.ids[name] {
				t.Errorf("%s: idz %+v", name, r.Data)
			}
		}
	})
	t.Run("raw RAFTZ", func(t *testing.T) {
		rs, err := sc.PingRequest(ctx, sysapi.KindRaftz, nil, all)
		got := servers(t, tp, "RAFTZ", rs, err)
		if len(got["natstest-0"].Data) == 0 {
			t.Errorf("no raftz data")
		}
	})

	// Every typed kind from each server by its ID.
	for name, id := range tp.ids {
		one := func(kind string, r *sysapi.ServerInfo, err error) {
			t.Helper()
			if err != nil {
				t.Errorf("%s from %s: %v", kind, name, err)
				return
			}
			if r.ID != id || r.Name != name {
				t.Errorf("%s from %s answered by %s/%s", kind, name, r.Name, r.ID)
			}
		}
		for _, call := range []func() (*sysapi.ServerInfo, error){
			func() (*sysapi.ServerInfo, error) { return server(sc.Varz(ctx, id, sysapi.VarzOptions{})) },
			func() (*sysapi.ServerInfo, error) { return server(sc.Connz(ctx, id, sysapi.ConnzOptions{})) },
			func() (*sysapi.ServerInfo, error) { return server(sc.Routez(ctx, id, sysapi.RoutezOptions{})) },
			func() (*sysapi.ServerInfo, error) { return server(sc.Gatewayz(ctx, id, sysapi.GatewayzOptions{})) },
			func() (*sysapi.ServerInfo, error) { return server(sc.Leafz(ctx, id, sysapi.LeafzOptions{})) },
			func() (*sysapi.ServerInfo, error) { return server(sc.Subsz(ctx, id, sysapi.SubszOptions{})) },
			func() (*sysapi.ServerInfo, error) { return server(sc.Jsz(ctx, id, sysapi.JszOptions{})) },
			func() (*sysapi.ServerInfo, error) { return server(sc.Accountz(ctx, id, sysapi.AccountzOptions{})) },
			func() (*sysapi.ServerInfo, error) { return server(sc.Healthz(ctx, id, sysapi.HealthzOptions{})) },
			func() (*sysapi.ServerInfo, error) { return server(sc.Statsz(ctx, id, sysapi.StatszOptions{})) },
			func() (*sysapi.ServerInfo, error) { return server(sc.Idz(ctx, id)) },
			func() (*sysapi.ServerInfo, error) { return server(sc.Request(ctx, sysapi.KindExpvarz, id, nil)) },
		} {
			r, err := call()
			one(name, r, err)
		}
	}

	// The filter picks servers by name.
	one, err := sc.PingVarz(ctx, sysapi.VarzOptions{Filter: sysapi.Filter{Name: "natstest-2", ExactMatch: true}}, sysapi.Expect(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(one) != 1 || one[0].Server.Name != "natstest-2" {
		t.Errorf("filtered ping: %d replies", len(one))
	}
	// A stall ends the gathering without Expect.
	stalled, err := sc.PingIdz(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(stalled) == 0 || len(stalled) > len(tp.ids) {
		t.Errorf("gathering until a stall: %d replies", len(stalled))
	}
}

func server[T any](r *sysapi.Reply[T], err error) (*sysapi.ServerInfo, error) {
	if err != nil {
		return nil, err
	}
	return &r.Server, nil
}
