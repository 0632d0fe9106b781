package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

// monitorTopology is a 3-node cluster with a leaf node, system accounts
// linked, a named client connection and an R3 stream with a consumer.
type monitorTopology struct {
	c     *natstest.Cluster
	leaf  *natstest.Server
	url   string // node 1
	names []string
	ids   map[string]string
}

func newMonitorTopology(t *testing.T) *monitorTopology {
	t.Helper()
	c := natstest.NewCluster(t, 3, natstest.SystemAccount(), natstest.LeafNodes(), natstest.MemoryStore())
	leaf := natstest.NewLeaf(t, c.Node(0), natstest.SystemAccount(), natstest.JetStream(false), natstest.Name("leaf"))
	all := append(c.Nodes(), leaf)
	for _, n := range all {
		if err := n.WaitSystemInterest(all...); err != nil {
			t.Fatal(err)
		}
	}
	tp := &monitorTopology{c: c, leaf: leaf, url: c.Node(1).URL(), ids: map[string]string{}}
	for _, n := range all {
		tp.names = append(tp.names, n.Server().Name())
		tp.ids[n.Server().Name()] = n.Server().ID()
	}

	// A client of the default account on node 2, with a subscription, and
	// an R3 stream with three messages and a consumer that read none.
	nc := c.Node(2).Connect(t, conn.Name("e2e-client"))
	if _, err := nc.Subscribe("e2e.interest"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, err := jsapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Replicas: 3, Storage: jsapi.StorageMemory}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"orders.a", "orders.b", "orders.c"} {
		if _, err := js.Publish(ctx, s, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := js.CreateConsumer(ctx, "ORDERS", jsapi.ConsumerConfig{Durable: "worker"}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return tp
}

// sys runs natsio against node 1 as the system user.
func (tp *monitorTopology) sys(t *testing.T, args ...string) result {
	t.Helper()
	return runCLI(t, append([]string{"--server", tp.url, "--user", natstest.SystemUser, "--password", natstest.SystemPassword}, args...)...)
}

func (tp *monitorTopology) sysOK(t *testing.T, args ...string) result {
	t.Helper()
	r := tp.sys(t, args...)
	checkNoPanic(t, r)
	if r.code != 0 {
		t.Fatalf("command failed:\n%s", r)
	}
	return r
}

// jsonLines decodes one JSON value per line.
func jsonLines(t *testing.T, r result) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line %q:\n%s", l, r)
		}
		out = append(out, m)
	}
	return out
}

// replyServers returns the server names of raw monitoring replies.
func replyServers(t *testing.T, replies []map[string]any) []string {
	t.Helper()
	var names []string
	for _, m := range replies {
		s, _ := m["server"].(map[string]any)
		name, _ := s["name"].(string)
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func TestServerMonitoringCommands(t *testing.T) {
	tp := newMonitorTopology(t)
	want := slices.Sorted(slices.Values(tp.names))

	t.Run("list", func(t *testing.T) {
		r := tp.sysOK(t, "server", "list", "4", "--sort", "name")
		contains(t, r, "Server Overview: 4 servers", "Name", "Cluster", "RTT", "natstest")
		for _, n := range tp.names {
			contains(t, r, n)
		}
		// Sorted by name: the four rows in order.
		var order []string
		for _, l := range strings.Split(r.stdout, "\n") {
			if f := strings.Fields(l); len(f) > 0 && tp.ids[f[0]] != "" {
				order = append(order, f[0])
			}
		}
		if !slices.Equal(order, want) {
			t.Errorf("rows %v, want %v", order, want)
		}
		var raw []map[string]any
		if err := json.Unmarshal([]byte(tp.sysOK(t, "server", "ls", "4", "--json").stdout), &raw); err != nil || len(raw) != 4 {
			t.Fatalf("list --json: %v, %d replies", err, len(raw))
		}
		if _, ok := raw[0]["statsz"]; !ok {
			t.Errorf("list --json is not the servers' replies: %v", raw[0])
		}
	})
	t.Run("list expecting more", func(t *testing.T) {
		r := tp.sys(t, "--timeout", "1s", "server", "list", "5")
		if r.code != 1 || !strings.Contains(r.stderr, "fewer servers answered") || !strings.Contains(r.stdout, "4 servers") {
			t.Fatalf("list 5 of 4:\n%s", r)
		}
	})
	t.Run("info", func(t *testing.T) {
		r := tp.sysOK(t, "server", "info", "natstest-2")
		contains(t, r, "Server information for natstest-2 ("+tp.ids["natstest-2"]+")", "JetStream", "Meta Leader", "Cluster", "natstest")
		r = tp.sysOK(t, "server", "info", tp.ids["leaf"], "--json")
		var v map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Fatal(err)
		}
		if d, _ := v["data"].(map[string]any); d["server_name"] != "leaf" {
			t.Errorf("info by ID --json: %v", v)
		}
		contains(t, tp.sysOK(t, "server", "i"), "Server information for natstest-1")
		r = tp.sys(t, "server", "info", "nosuch")
		if r.code != 1 || !strings.Contains(r.stderr, `no server is named "nosuch"`) || !strings.Contains(r.stderr, "natstest-0") {
			t.Fatalf("info of an unknown name:\n%s", r)
		}
	})
	t.Run("ping", func(t *testing.T) {
		r := tp.sysOK(t, "server", "ping", "4", "--id", "--graph")
		contains(t, r, "---- ping statistics ----", "4 replies max:", tp.ids["natstest-0"], "0-25")
		if n := strings.Count(r.stdout, "rtt="); n != 4 {
			t.Errorf("%d servers pinged:\n%s", n, r)
		}
		r = tp.sys(t, "--timeout", "1s", "server", "ping", "5")
		if r.code != 1 || !strings.Contains(r.stdout, "Missing 1 server(s)") {
			t.Fatalf("ping 5 of 4:\n%s", r)
		}
		var raw []map[string]any
		if err := json.Unmarshal([]byte(tp.sysOK(t, "server", "ping", "4", "--json").stdout), &raw); err != nil || len(raw) != 4 {
			t.Fatalf("ping --json: %v", err)
		}
	})
	t.Run("report connections", func(t *testing.T) {
		r := tp.sysOK(t, "server", "report", "connections", "4", "--account", "$G", "--sort", "subs")
		contains(t, r, "Connections out of", "e2e-client", "natstest-2", "Totals for")
		if strings.Contains(r.stdout, natstest.SystemAccountName+" ") {
			t.Errorf("--account $G lists a system connection:\n%s", r)
		}
		// A narrow terminal: every line fits, cut cells end in "…".
		narrow := startProcEnv(t, nil, []string{"COLUMNS=100"}, "--server", tp.url, "--user", "sys", "--password", "sys",
			"server", "report", "conns", "4").wait(t, time.Minute)
		if narrow.code != 0 || !strings.Contains(narrow.stdout, "…") {
			t.Fatalf("narrow report:\n%s", narrow)
		}
		for _, l := range strings.Split(strings.TrimRight(narrow.stdout, "\n"), "\n") {
			if n := utf8.RuneCountInString(l); n > 100 && !strings.HasPrefix(l, "Top ") {
				t.Errorf("line of %d runes in 100 columns: %q", n, l)
			}
		}
		var raw []map[string]any
		if err := json.Unmarshal([]byte(tp.sysOK(t, "server", "report", "connz", "4", "--json").stdout), &raw); err != nil || len(raw) < 4 {
			t.Fatalf("report connections --json: %v, %d", err, len(raw))
		}
		r = tp.sysOK(t, "server", "report", "connections", "4", "--username", "nobody")
		contains(t, r, "Top 0 Connections out of 0")
		r = tp.sysOK(t, "server", "report", "connections", "--host", "natstest-2", "--account", "$G")
		contains(t, r, "e2e-client")
	})
	t.Run("report jetstream", func(t *testing.T) {
		r := tp.sysOK(t, "server", "report", "jetstream", "4", "--leaders")
		contains(t, r, "JetStream Summary", "RAFT Meta Group Information", "natstest-0", "natstest-1", "natstest-2",
			"leaf (JetStream off)", "Stream Leaders", "*")
		r = tp.sysOK(t, "server", "report", "js", "4", "--account", "$G", "--sort", "msgs")
		contains(t, r, "JetStream Summary for account $G")
		var raw []map[string]any
		if err := json.Unmarshal([]byte(tp.sysOK(t, "server", "report", "jsz", "4", "--json").stdout), &raw); err != nil || len(raw) != 4 {
			t.Fatalf("report jetstream --json: %v", err)
		}
	})
	t.Run("request", func(t *testing.T) {
		for _, k := range []string{"variables", "connections", "routes", "gateways", "leafnodes", "subscriptions",
			"accounts", "jetstream", "jetstream-health", "raft", "ipqueue", "statistics", "varz", "connz"} {
			r := tp.sysOK(t, "server", "request", k, "4")
			if got := replyServers(t, jsonLines(t, r)); !slices.Equal(got, want) {
				t.Errorf("request %s: replies from %v, want %v", k, got, want)
			}
		}
		// Options reach the server.
		r := tp.sysOK(t, "server", "request", "jetstream", "--all", "--leader", "1")
		lines := jsonLines(t, r)
		if len(lines) != 1 || !strings.Contains(r.stdout, `"stream_detail"`) || !strings.Contains(r.stdout, `"ORDERS"`) {
			t.Errorf("jetstream --all --leader:\n%s", r)
		}
		// natstest-1 has no connection of the default account (the CLI's
		// is in the system account), the others have a client or leaf.
		r = tp.sysOK(t, "server", "req", "connections", "--filter-account", "$G", "--filter-empty", "4")
		if got := replyServers(t, jsonLines(t, r)); !slices.Equal(got, []string{"leaf", "natstest-0", "natstest-2"}) || !strings.Contains(r.stdout, "e2e-client") {
			t.Errorf("connections --filter-empty: %v\n%s", got, r)
		}
		r = tp.sysOK(t, "server", "request", "variables", "--id", tp.ids["leaf"])
		if got := replyServers(t, jsonLines(t, r)); !slices.Equal(got, []string{"leaf"}) {
			t.Errorf("--id: %v", got)
		}
		r = tp.sysOK(t, "server", "request", "variables", "--name", "natstest-0", "1")
		if got := replyServers(t, jsonLines(t, r)); !slices.Equal(got, []string{"natstest-0"}) {
			t.Errorf("--name: %v", got)
		}
		r = tp.sys(t, "server", "request", "variables", "--id", "NOSUCH")
		if r.code != 1 || !strings.Contains(r.stderr, "no server has that ID") {
			t.Errorf("unknown --id:\n%s", r)
		}
	})
	t.Run("check connection", func(t *testing.T) {
		r := tp.sysOK(t, "server", "check", "connection")
		if !strings.HasPrefix(r.stdout, "OK Connection OK:connected to") || !strings.Contains(r.stdout, "| connect_time=") ||
			!strings.Contains(r.stdout, "request_time=") {
			t.Errorf("check connection:\n%s", r)
		}
		r = tp.sys(t, "server", "check", "conn", "--rtt-warn", "1ns")
		if r.code != 1 || !strings.HasPrefix(r.stdout, "WARNING Connection Warn:rtt time exceeded 1ns") {
			t.Errorf("rtt warning:\n%s", r)
		}
		r = tp.sys(t, "server", "check", "connection", "--connect-critical", "1ns", "--format", "json")
		var res map[string]any
		if r.code != 2 || json.Unmarshal([]byte(r.stdout), &res) != nil || res["status"] != "CRITICAL" {
			t.Errorf("connect critical, json:\n%s", r)
		}
		r = runCLI(t, "--server", "nats://127.0.0.1:1", "--timeout", "1s", "server", "check", "connection")
		if r.code != 2 || !strings.HasPrefix(r.stdout, "CRITICAL Connection Crit:connection failed") {
			t.Errorf("no server:\n%s", r)
		}
	})
	t.Run("check stream", func(t *testing.T) {
		// check runs in the default account: no system user.
		r := ok(t, "--server", tp.url, "server", "check", "stream", "--stream", "ORDERS", "--peer-expect", "3", "--msgs-warn", "1", "--subjects-warn", "10", "--subjects-critical", "20")
		if !strings.HasPrefix(r.stdout, "OK ORDERS") || !strings.Contains(r.stdout, "OK:3 peers") || !strings.Contains(r.stdout, "OK:3 messages") {
			t.Errorf("check stream:\n%s", r)
		}
		r = runCLI(t, "--server", tp.url, "server", "check", "stream", "--stream", "ORDERS", "--msgs-critical", "5", "--peer-expect", "5")
		if r.code != 2 || !strings.Contains(r.stdout, "Crit:3 messages") || !strings.Contains(r.stdout, "Crit:Expected 5 replicas got 3") {
			t.Errorf("check stream critical:\n%s", r)
		}
		r = runCLI(t, "--server", tp.url, "server", "check", "stream", "--stream", "NOPE")
		if r.code != 2 || !strings.HasPrefix(r.stdout, "CRITICAL NOPE Crit:stream load failed") {
			t.Errorf("missing stream:\n%s", r)
		}
	})
	t.Run("check consumer", func(t *testing.T) {
		r := runCLI(t, "--server", tp.url, "server", "check", "consumer", "--stream", "ORDERS", "--consumer", "worker",
			"--unprocessed-critical", "1", "--outstanding-ack-critical", "10")
		if r.code != 2 || !strings.Contains(r.stdout, "CRITICAL ORDERS_worker Crit:Unprocessed Messages: 3") ||
			!strings.Contains(r.stdout, "pending=3;;1") {
			t.Errorf("check consumer critical:\n%s", r)
		}
		r = runCLI(t, "--server", tp.url, "server", "check", "consumer", "--stream", "ORDERS", "--consumer", "worker", "--unprocessed-critical", "10")
		if r.code != 0 || !strings.Contains(r.stdout, "OK:Unprocessed Messages: 3") {
			t.Errorf("check consumer ok:\n%s", r)
		}
	})
	t.Run("check jetstream", func(t *testing.T) {
		r := runCLI(t, "--server", tp.url, "server", "check", "jetstream", "--format", "text")
		if r.code != 0 || !strings.HasPrefix(r.stdout, "JetStream: OK") || !strings.Contains(r.stdout, "replicas_ok") {
			t.Errorf("check jetstream:\n%s", r)
		}
		out := t.TempDir() + "/check.txt"
		r = runCLI(t, "--server", tp.url, "server", "check", "js", "--outfile", out)
		if r.code != 0 || r.stdout != "" {
			t.Errorf("check jetstream --outfile:\n%s", r)
		}
	})
	t.Run("without the system account", func(t *testing.T) {
		for _, args := range [][]string{{"server", "list"}, {"server", "ping"}, {"server", "info", "natstest-0"},
			{"server", "report", "jetstream"}, {"server", "request", "variables"}} {
			r := runCLI(t, append([]string{"--server", tp.url}, args...)...)
			checkNoPanic(t, r)
			if r.code != 1 || !strings.Contains(r.stderr, "no server answered") || !strings.Contains(r.stderr, "system account") {
				t.Errorf("%v from the default account:\n%s", args, r)
			}
		}
	})
}

// TestServerRunStillStartsTheServer: `natsio server run` starts the
// embedded server as the bare `natsio server` does.
func TestServerRunStillStartsTheServer(t *testing.T) {
	p := startProc(t, nil, "server", "run", "--port", "0", "--store", t.TempDir())
	t.Cleanup(func() { stopServer(p) })
	if !p.stdout.waitFor("nats://", 30*time.Second) {
		t.Fatalf("natsio server run printed no URL\n%s\n%s", p.stdout, p.stderr)
	}
	u := urlRE.FindString(p.stdout.String())
	contains(t, ok(t, "--server", u, "rtt"), "round trips")
}
