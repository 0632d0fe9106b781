package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/micro"
)

// startService runs an ADR-32 service "calc" with endpoint "add" on the
// test server, from this process.
func startService(t *testing.T, s *testServer, version string) *micro.Service {
	t.Helper()
	nc, ctx := serviceConn(t, s)
	svc, err := micro.AddService(nc, micro.Config{
		Name: "calc", Version: version, Description: "integer arithmetic",
		Metadata: map[string]string{"team": "numbers"},
	})
	if err != nil {
		t.Fatal(err)
	}
	err = svc.AddEndpoint("add", micro.HandlerFunc(func(r micro.Request) {
		if string(r.Data()) == "bad" {
			_ = r.Error("400", "not a number", nil)
			return
		}
		_ = r.Respond([]byte("sum"))
	}), micro.EndpointSubject("calc.add"))
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return svc
}

// serviceConn connects a service's connection to the test server, closed
// when the test ends, with a context bounding the setup.
func serviceConn(t *testing.T, s *testServer) (*conn.Conn, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	nc, err := conn.Connect(ctx, s.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc, ctx
}

func TestMicro(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	if r := s.ok(t, "micro", "ls"); r.stdout != "" || !strings.Contains(r.stderr, "No services answered") {
		t.Fatalf("ls with no service:\n%s", r)
	}
	s.fails(t, []string{`no instance of service "calc" answered`}, "micro", "info", "calc")

	one := startService(t, s, "1.2.0")
	// Discovery ends 200 ms after the last answer by default; on a loaded
	// machine the second instance can answer later than that, so the calls
	// that must see both wait longer.
	both := "--wait=5s"
	two := startService(t, s, "1.3.0")
	r := s.ok(t, "micro", "ls", both)
	contains(t, r, "calc", "1.2.0", "1.3.0", one.ID(), two.ID(), "integer arithmetic")
	if got := decode[[]micro.Info](t, s.ok(t, "micro", "ls", "calc", "--json", both)); len(got) != 2 || got[0].Endpoints[0].Subject != "calc.add" {
		t.Fatalf("ls --json: %+v", got)
	}

	r = s.ok(t, "micro", "info", "calc", one.ID())
	contains(t, r, "Service calc "+one.ID(), "1.2.0", "Metadata team", "numbers", "add", "calc.add", "q")
	if strings.Contains(r.stdout, two.ID()) {
		t.Fatalf("info for one instance shows the other:\n%s", r)
	}

	s.ok(t, "req", "calc.add", "1 2")
	contains(t, s.ok(t, "req", "calc.add", "bad"), "Nats-Service-Error: not a number")
	stats := decode[[]micro.Stats](t, s.ok(t, "micro", "stats", "calc", "--json", both))
	var reqs, errs uint64
	for _, st := range stats {
		for _, e := range st.Endpoints {
			reqs += e.NumRequests
			errs += e.NumErrors
		}
	}
	if len(stats) != 2 || reqs != 2 || errs != 1 {
		t.Fatalf("stats: %d instances, %d requests, %d errors: %+v", len(stats), reqs, errs, stats)
	}
	contains(t, s.ok(t, "micro", "stats", "calc", both), "2 requests, 1 error across 2 instances", "400:not a number")

	if testing.Verbose() {
		for _, args := range [][]string{{"micro", "ls"}, {"micro", "info", "calc"}, {"micro", "stats", "calc"}} {
			r := s.ok(t, args...)
			t.Logf("$ natsio %s\n%s%s", strings.Join(args, " "), r.stdout, r.stderr)
		}
	}
	// A service answering under another prefix: only --prefix finds it.
	nc, ctx := serviceConn(t, s)
	team, err := micro.AddService(nc, micro.Config{Name: "teamcalc", Version: "0.1.0", Prefix: "team.SRV"})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if r := s.ok(t, "micro", "ls"); strings.Contains(r.stdout, team.ID()) {
		t.Fatalf("ls without --prefix lists a service under team.SRV:\n%s", r)
	}
	r = s.ok(t, "micro", "ls", "--prefix", "team.SRV")
	contains(t, r, "teamcalc", "0.1.0", team.ID())
	if strings.Contains(r.stdout, one.ID()) {
		t.Fatalf("ls --prefix team.SRV lists a $SRV service:\n%s", r)
	}
	contains(t, s.ok(t, "micro", "ping", "teamcalc", "--prefix", "team.SRV"), "teamcalc 0.1.0 "+team.ID())
	s.fails(t, []string{"prefix"}, "micro", "ls", "--prefix", "team.*")

	r = s.ok(t, "micro", "ping", "calc")
	contains(t, r, "calc 1.2.0 "+one.ID(), "calc 1.3.0 "+two.ID())
	s.fails(t, []string{`no instance of service "nosuch" answered`}, "micro", "ping", "nosuch")
	s.fails(t, []string{"natsio micro"}, "micro", "info")
}
