package micro_test

import (
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/micro"
	"github.com/natsio/natsio/natstest"
)

// A service started with Config.Prefix answers discovery there and only
// there; DiscoverPrefix reaches it.
func TestServicePrefix(t *testing.T) {
	s := startServer(t)
	nc := connect(t, s.URL())
	acme := addService(t, nc, micro.Config{Name: "acme", Version: "1.0.0", Prefix: "teams.acme.SRV",
		Endpoint: &micro.EndpointConfig{Subject: "acme.get", Handler: echo("a:")}})
	plain := addService(t, nc, micro.Config{Name: "plain", Version: "1.0.0"})
	client := connect(t, s.URL())
	short := micro.DiscoverStall(100 * time.Millisecond)

	pings, err := micro.Ping(ctxT(t), client, "", micro.DiscoverPrefix("teams.acme.SRV"), short)
	if err != nil || len(pings) != 1 || pings[0].ID != acme.ID() {
		t.Fatalf("ping under the prefix: %+v, %v", pings, err)
	}
	infos, err := micro.Infos(ctxT(t), client, "acme", micro.DiscoverPrefix("teams.acme.SRV"), micro.DiscoverID(acme.ID()))
	if err != nil || len(infos) != 1 || infos[0].Endpoints[0].Subject != "acme.get" {
		t.Fatalf("info by id under the prefix: %+v, %v", infos, err)
	}
	stats, err := micro.StatsOf(ctxT(t), client, "acme", micro.DiscoverPrefix("teams.acme.SRV"), short)
	if err != nil || len(stats) != 1 || stats[0].ID != acme.ID() {
		t.Fatalf("stats under the prefix: %+v, %v", stats, err)
	}
	// $SRV finds only the service that kept it.
	pings, err = micro.Ping(ctxT(t), client, "", short)
	if err != nil || len(pings) != 1 || pings[0].ID != plain.ID() {
		t.Fatalf("ping under $SRV: %+v, %v", pings, err)
	}
	// The endpoint itself is not prefixed.
	if got := request(t, client, "acme.get", "x"); got != "a:x" {
		t.Fatalf("endpoint answered %q", got)
	}
}

// A prefix that cannot start a subject is refused before anything is sent.
func TestPrefixValidation(t *testing.T) {
	s := startServer(t)
	nc := connect(t, s.URL())
	for _, p := range []string{"a.*", ">", "a..b", ".a", "a.", "a b"} {
		if _, err := micro.AddService(nc, micro.Config{Name: "svc", Version: "1.0.0", Prefix: p}); !errors.Is(err, micro.ErrInvalidSubject) {
			t.Errorf("AddService with prefix %q: %v", p, err)
		}
		if _, err := micro.Ping(ctxT(t), nc, "", micro.DiscoverPrefix(p)); !errors.Is(err, micro.ErrInvalidSubject) {
			t.Errorf("DiscoverPrefix(%q): %v", p, err)
		}
	}
	if st := nc.Stats(); st.OutMsgs != 0 {
		t.Errorf("%d messages sent by refused calls", st.OutMsgs)
	}
}

// accountsConfig: account SVC runs services and exports their discovery
// subjects, with several responses per request; account OPS imports them
// under svc.SRV, the layout DiscoverPrefix("svc.SRV") addresses (ADR-32:
// the prefix is overridable "in order to enable targetting tools to work
// across accounts").
const accountsConfig = `
accounts {
  SVC: {
    users: [ { user: svc, password: svc } ]
    exports: [ { service: "$SRV.>", response_type: stream } ]
  }
  OPS: {
    users: [ { user: ops, password: ops } ]
    imports: [ { service: { account: SVC, subject: "$SRV.>" }, to: "svc.SRV.>" } ]
  }
}
`

// A tool in another account reaches the services through its import.
func TestDiscoveryAcrossAccounts(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false), natstest.ConfigText(accountsConfig))
	svcConn := connect(t, s.URL(), conn.UserInfo("svc", "svc"))
	a := addService(t, svcConn, micro.Config{Name: "orders", Version: "1.0.0"})
	b := addService(t, svcConn, micro.Config{Name: "orders", Version: "1.0.1"})
	if err := svcConn.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	ops := connect(t, s.URL(), conn.UserInfo("ops", "ops"))

	pings, err := micro.Ping(ctxT(t), ops, "orders", micro.DiscoverPrefix("svc.SRV"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, p := range pings {
		got[p.ID] = true
	}
	if len(pings) != 2 || !got[a.ID()] || !got[b.ID()] {
		t.Fatalf("ping across accounts: %+v", pings)
	}
	stats, err := micro.StatsOf(ctxT(t), ops, "orders", micro.DiscoverPrefix("svc.SRV"), micro.DiscoverID(b.ID()))
	if err != nil || len(stats) != 1 || stats[0].Version != "1.0.1" {
		t.Fatalf("stats of one instance across accounts: %+v, %v", stats, err)
	}
	// OPS's own $SRV reaches nothing.
	none, err := micro.Ping(ctxT(t), ops, "", micro.DiscoverStall(100*time.Millisecond))
	if err != nil || len(none) != 0 {
		t.Fatalf("ping under OPS's own $SRV: %+v, %v", none, err)
	}
}
