package main

import (
	"strings"
	"testing"
	"time"
)

func TestRTTCommand(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	r := s.ok(t, "rtt", "-n", "3")
	contains(t, r, s.url, "over 3 round trips", "avg")
	got := decode[rttResult](t, s.ok(t, "rtt", "--iterations", "4", "--json"))
	if got.Iterations != 4 || got.Server != s.url || got.Min <= 0 ||
		time.Duration(got.Min) > time.Duration(got.Avg) || time.Duration(got.Avg) > time.Duration(got.Max) {
		t.Fatalf("rtt --json: %+v", got)
	}
	s.fails(t, []string{"--iterations must be positive"}, "rtt", "-n", "0")
	if r := s.ok(t, "--help"); !strings.Contains(r.stdout, "rtt") {
		t.Fatalf("rtt missing from the command list:\n%s", r)
	}
}
