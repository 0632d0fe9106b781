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
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true})
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

// TestEveryScenarioEveryClient runs each registered scenario with each
// client on small counts: it must complete and verify its counts.
func TestEveryScenarioEveryClient(t *testing.T) {
	url := startServer(t)
	for _, s := range Registry {
		for name, c := range clients.All() {
			t.Run(s.Name+"/"+name, func(t *testing.T) {
				n := 2000
				if s.Latency() {
					n = 50
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				p, err := s.Prepare(ctx, c, url, 2*n)
				if err != nil {
					t.Fatal(err)
				}
				defer func() {
					if err := p.Close(); err != nil {
						t.Errorf("close: %v", err)
					}
				}()
				var lat []time.Duration
				for range 2 { // warm-up, then the timed section
					if s.Latency() {
						lat = make([]time.Duration, n)
					}
					if err := p.Run(n, lat); err != nil {
						t.Fatal(err)
					}
				}
				for i, d := range lat {
					if d <= 0 {
						t.Fatalf("latency %d not recorded", i)
					}
				}
			})
		}
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
