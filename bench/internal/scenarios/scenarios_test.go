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

// TestPrivateSubjectForCoreRoundTripsAndPubSub: two processes running a
// request/reply or pub/sub scenario at once (bench -pair) get subjects of
// their own; a JetStream scenario's subject belongs to its stream.
func TestPrivateSubjectForCoreRoundTripsAndPubSub(t *testing.T) {
	for _, name := range []string{"req.16", "pubsub.same.cb.16", "pubsub.sep.cb.16"} {
		s, _ := Lookup(name)
		if got := s.Config("nats://x", Plan{Private: "natsio"}).Subject; got != "bench."+name+".natsio" {
			t.Errorf("%s with Private: subject %q", name, got)
		}
		if got := s.Config("nats://x", Plan{}).Subject; got != "bench."+name {
			t.Errorf("%s without Private: subject %q", name, got)
		}
	}
	for _, name := range []string{"jspub.sync.mem.128", "jspub.async.mem.128"} {
		s, _ := Lookup(name)
		if got := s.Config("nats://x", Plan{Private: "natsio"}).Subject; got != s.Subject() {
			t.Errorf("%s with Private: subject %q, want %q", name, got, s.Subject())
		}
	}
}

// TestKVPutVerifyWithTwoWriters: in paired mode two clients each cycle
// over the keys from the first, so a bucket written by both holds what
// one of them wrote.
func TestKVPutVerifyWithTwoWriters(t *testing.T) {
	url := startServer(t)
	s, _ := Lookup("kvput.mem.128")
	s.Keys = 20
	plan := Plan{Warmup: 2 * 5, N: 2 * 10, Writers: 2}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Setup(ctx, url, plan); err != nil {
		t.Fatal(err)
	}
	for range 2 { // each writer: 5 + 10 puts over keys 0..14
		p, err := s.Prepare(ctx, clients.Natsio{}, url, Plan{Warmup: 5, N: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{5, 10} {
			if err := p.Run(n, make([]time.Duration, n)); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Verify(ctx, url, plan); err != nil {
		t.Error(err)
	}
	plan.Writers = 0
	if err := s.Verify(ctx, url, plan); err == nil {
		t.Error("Verify of one writer's 30 puts passed on a bucket holding 15 keys")
	}
}
