package main

import (
	"strings"
	"testing"
	"time"
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
	out := formatPair("kvget.mem.128", true, false, []string{"a", "b"}, blocks)
	for _, want := range []string{
		"3 rounds",
		"p50 µs",
		"a/b per round: rate ×1.000 median (0.500–1.500), faster in 1 of 3; client CPU per op ×2.000 median",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	// a's blocks ran at 1000, 3000 and 1000/s: the median is 1000.
	if !strings.Contains(out, "a             1.00k        1.00k–3.00k") {
		t.Errorf("a's rate is not the median of its blocks with their range:\n%s", out)
	}
}

// TestFormatPairStreamingShowsThroughput: a streaming scenario's summary
// has throughput, CPU per message and cores, and no latency column.
func TestFormatPairStreamingShowsThroughput(t *testing.T) {
	// Each block: 100k messages in 50 ms (2M/s), the client 40 ms of
	// CPU (400 ns/msg, 0.8 cores), the server 60 ms (600 ns/msg, 1.2
	// cores); b twice as fast with half the client CPU.
	mk := func(client string, round int, wall time.Duration, cli int64) pairResult {
		n := 100_000
		return pairResult{Client: client, Round: round, N: n, WallNs: int64(wall), CliCPUNs: cli * int64(n),
			SrvCPUNs: 600 * int64(n), Rate: float64(n) / wall.Seconds(), Stalls: 2}
	}
	var blocks []pairResult
	for r := range 4 {
		blocks = append(blocks, mk("a", r, 50*time.Millisecond, 400), mk("b", r, 25*time.Millisecond, 200))
	}
	out := formatPair("pubsub.same.cb.16", false, false, []string{"a", "b"}, blocks)
	for _, want := range []string{
		"4 rounds",
		"msgs/s", "min–max", "cli-cpu ns/op", "srv-cpu ns/op", "cli cores", "srv cores",
		"a             2.00M        2.00M–2.00M            400            600       0.80       1.20",
		"b             4.00M        4.00M–4.00M            200            600       0.80       2.40",
		"a/b per round: rate ×0.500 median (0.500–0.500), faster in 0 of 4; client CPU per op ×2.000 median",
		"a: 8 stalls",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	for _, no := range []string{"p50", "p90", "p99", "µs"} {
		if strings.Contains(out, no) {
			t.Errorf("a streaming summary shows latency (%q):\n%s", no, out)
		}
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
