package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/natsio/natsio/bench/internal/clients"
)

func startServer(t *testing.T) string {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}

// small shrinks a scenario for the tests: counts, object sizes, stored
// messages and keys.
func small(s Scenario) (Scenario, Plan) {
	n := 2000
	switch {
	case s.Kind == ObjPut || s.Kind == ObjGet:
		s.Size, n = 1<<20, 2
	case s.Latency():
		n = 50
	case s.Kind == IdleConns:
		n = 20
	}
	s.Subs = min(s.Subs, 50)         // scale.subs: up to 50 subscriptions
	s.Conns = min(s.Conns, 10)       // scale.conns: up to 10 connections
	s.InFlight = min(s.InFlight, 20) // scale.inflight: up to 20 requests at once
	if s.Stored > 0 {
		s.Stored = 300
	}
	if s.Kind == GetBatch {
		s.Batch = 300 // several batches and a partial one per run
	}
	if s.Keys > 0 {
		s.Keys = 20
	}
	return s, Plan{Warmup: n, N: n}
}

// runScenario sets up, prepares and runs the warm-up and timed sections
// with runs[0] and runs[1] operations, then closes the client. It does
// not verify.
func runScenario(t *testing.T, url string, s Scenario, c clients.Client, plan Plan, runs [2]int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Setup(ctx, url, plan); err != nil {
		t.Fatalf("setup: %v", err)
	}
	p, err := s.Prepare(ctx, c, url, plan)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	for _, n := range runs { // warm-up, then the timed section
		var lat []time.Duration
		if s.Latency() {
			lat = make([]time.Duration, n)
		}
		if err := p.Run(n, lat); err != nil {
			t.Fatal(err)
		}
		for i, d := range lat {
			if d <= 0 {
				t.Fatalf("latency %d not recorded", i)
			}
		}
	}
}

// TestEveryScenarioEveryClient runs each registered scenario with each
// client that implements its kind, on small counts: it must complete and
// verify its counts, and the fixture must pass Verify.
func TestEveryScenarioEveryClient(t *testing.T) {
	url := startServer(t)
	for _, s := range Registry {
		for _, name := range clients.Names {
			c := clients.All()[name]
			t.Run(s.Name+"/"+name, func(t *testing.T) {
				if !s.Supports(c) {
					if _, err := s.Prepare(context.Background(), c, url, Plan{Warmup: 1, N: 1}); err != ErrNotApplicable {
						t.Fatalf("Prepare of an unsupported kind: %v", err)
					}
					t.Skip("not applicable")
				}
				s, plan := small(s)
				runScenario(t, url, s, c, plan, [2]int{plan.Warmup, plan.N})
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := s.Verify(ctx, url, plan); err != nil {
					t.Fatalf("verify: %v", err)
				}
				if err := s.Teardown(ctx, url); err != nil {
					t.Fatalf("teardown: %v", err)
				}
			})
		}
	}
}

// TestVerifyDetectsLoss: a run that stores or acknowledges one message
// less than its plan must fail verification.
func TestVerifyDetectsLoss(t *testing.T) {
	url := startServer(t)
	defer func(d time.Duration) { ackFloorWait = d }(ackFloorWait)
	ackFloorWait = 300 * time.Millisecond
	for _, name := range []string{"jspub.async.mem.128", "jsfetch.128", "kvput.mem.128", "objput.64MiB"} {
		s, ok := Lookup(name)
		if !ok {
			t.Fatalf("no scenario %s", name)
		}
		s, plan := small(s)
		// One operation less than planned: one message not stored (or,
		// for jsfetch, one left unacknowledged on the timed consumer).
		short := plan.N - 1
		t.Run(name, func(t *testing.T) {
			runScenario(t, url, s, clients.Natsio{}, plan, [2]int{plan.Warmup, short})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := s.Verify(ctx, url, plan)
			if err == nil {
				t.Fatal("verify accepted a run with a message missing")
			}
			t.Log(err)
			if err := s.Teardown(ctx, url); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestSelect(t *testing.T) {
	def, err := Select("")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range def {
		if !s.Default {
			t.Errorf("%s selected by default", s.Name)
		}
	}
	got, err := Select(`^pub\.`)
	if err != nil || len(got) != 3 {
		t.Fatalf("Select(^pub.) = %d scenarios, %v", len(got), err)
	}
	if _, err := Select("nothing-matches"); err == nil {
		t.Error("empty selection accepted")
	}
	seen := map[string]bool{}
	for _, s := range Registry {
		if seen[s.Name] {
			t.Errorf("duplicate scenario %s", s.Name)
		}
		seen[s.Name] = true
		if s.Count <= 0 || s.Warmup <= 0 {
			t.Errorf("%s: count %d, warm-up %d", s.Name, s.Count, s.Warmup)
		}
	}
}

func TestPrivateSubjectForRequestsOnly(t *testing.T) {
	req, _ := Lookup("req.16")
	if got := req.Config("nats://x", Plan{Private: "natsio"}).Subject; got != "bench.req.16.natsio" {
		t.Errorf("req.16 with Private: subject %q", got)
	}
	if got := req.Config("nats://x", Plan{}).Subject; got != "bench.req.16" {
		t.Errorf("req.16 without Private: subject %q", got)
	}
	// A JetStream scenario's subject belongs to its stream: never changed.
	kv, _ := Lookup("jspub.sync.mem.128")
	if got := kv.Config("nats://x", Plan{Private: "natsio"}).Subject; got != kv.Subject() {
		t.Errorf("jspub.sync.mem.128 with Private: subject %q, want %q", got, kv.Subject())
	}
}
