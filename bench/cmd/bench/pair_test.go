package main

import (
	"strings"
	"testing"
)

func TestFormatPairRatiosPerRound(t *testing.T) {
	// Round 0: a at 1000/s, b at 2000/s; round 1: a 3000/s, b 2000/s;
	// round 2: a 1000/s, b 1000/s. Per-round a/b: 0.5, 1.5, 1.0.
	mk := func(client string, round int, rate float64, cpuPerOp int64) pairResult {
		n := 1000
		return pairResult{Client: client, Round: round, N: n, WallNs: int64(float64(n) / rate * 1e9),
			CliCPUNs: cpuPerOp * int64(n), Rate: rate, P50Ns: 50_000}
	}
	blocks := []pairResult{
		mk("a", 0, 1000, 20), mk("b", 0, 2000, 10),
		mk("b", 1, 2000, 10), mk("a", 1, 3000, 30),
		mk("a", 2, 1000, 10), mk("b", 2, 1000, 10),
	}
	out := formatPair("kvget.mem.128", []string{"a", "b"}, blocks)
	for _, want := range []string{
		"3 rounds",
		"a/b per round: rate ×1.000 median (0.500–1.500), faster in 1 of 3; client CPU per op ×2.000 median",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	// Totals: a ran 3000 operations in 1 + 1/3 + 1 s.
	if !strings.Contains(out, "a              1286") {
		t.Errorf("a's total rate is not 3000 / 2.333 s:\n%s", out)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
