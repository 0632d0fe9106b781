package harness

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{5, 5, 1, 9, 7}, 5},
	} {
		in := append([]float64(nil), tc.in...)
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		for i := range in {
			if in[i] != tc.in[i] {
				t.Fatalf("Median modified its input")
			}
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
	lo, hi := MinMax([]float64{3, -1, 8, 2})
	if lo != -1 || hi != 8 {
		t.Errorf("MinMax = %v, %v", lo, hi)
	}
}

func TestPercentile(t *testing.T) {
	var lat []time.Duration
	for i := 100; i >= 1; i-- { // 100 … 1, unsorted
		lat = append(lat, time.Duration(i))
	}
	l := LatencyPercentiles(lat)
	if l.P50 != 50 || l.P90 != 90 || l.P99 != 99 || l.Max != 100 {
		t.Errorf("percentiles of 1..100: %+v", l)
	}
	if got := Percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("Percentile of one value = %v", got)
	}
	if got := Percentile([]time.Duration{1, 2, 3}, 50); got != 2 {
		t.Errorf("p50 of 1,2,3 = %v", got)
	}
	if got := Percentile([]time.Duration{1, 2, 3, 4}, 50); got != 2 {
		t.Errorf("p50 of 1..4 = %v (nearest rank)", got)
	}
	if got := Percentile(nil, 50); got != 0 {
		t.Errorf("Percentile(nil) = %v", got)
	}
}

func TestParseProcStat(t *testing.T) {
	// A command name with spaces and a parenthesis; utime 150, stime 25.
	stat := "1234 (bench (x) y) S 1 1234 1234 0 -1 4194560 100 0 0 0 150 25 0 0 20 0 3 0 123 456 789\n"
	got, err := ParseProcStat([]byte(stat))
	if err != nil {
		t.Fatal(err)
	}
	if want := 175 * 10 * time.Millisecond; got != want {
		t.Errorf("ParseProcStat = %v, want %v", got, want)
	}
	if _, err := ParseProcStat([]byte("1234 (x) S 1 2")); err == nil {
		t.Error("short stat accepted")
	}
	// This process's own stat parses.
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		if _, err := ProcCPU(os.Getpid()); err != nil {
			t.Errorf("ProcCPU(self): %v", err)
		}
	}
}

func TestMeasureCountsAllocs(t *testing.T) {
	var sink [][]byte
	s, err := Measure(0, func() error {
		for range 1000 {
			sink = append(sink[:0], make([]byte, 64))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = sink
	if s.Mallocs < 1000 || s.Mallocs > 1100 {
		t.Errorf("Mallocs = %d, want about 1000", s.Mallocs)
	}
	if s.AllocBytes < 64000 {
		t.Errorf("AllocBytes = %d, want at least 64000", s.AllocBytes)
	}
	if s.Wall <= 0 {
		t.Errorf("Wall = %v", s.Wall)
	}
}

func TestSummarize(t *testing.T) {
	mk := func(client string, rep int, n int, wall time.Duration, mallocs uint64) Result {
		return Result{Scenario: "pub.16", Client: client, Rep: rep, Size: 16, N: n, WallNs: int64(wall), Mallocs: mallocs, CliCPUNs: int64(wall)}
	}
	results := []Result{
		// natsio: 1M, 2M, 3M msgs/s; raw: 2M, 2M, 4M; natsgo: 1M each.
		mk("natsio", 0, 1000, time.Millisecond, 0),
		mk("natsio", 1, 2000, time.Millisecond, 10),
		mk("natsio", 2, 3000, time.Millisecond, 0),
		mk("raw", 0, 2000, time.Millisecond, 0),
		mk("raw", 1, 2000, time.Millisecond, 0),
		mk("raw", 2, 4000, time.Millisecond, 0),
		mk("natsgo", 0, 1000, time.Millisecond, 3000),
		mk("natsgo", 1, 1000, time.Millisecond, 3000),
		mk("natsgo", 2, 1000, time.Millisecond, 3000),
		{Scenario: "pub.16", Client: "natsgo", Rep: 3, Err: "boom"},
	}
	rows := Summarize(results, []string{"pub.16"}, []string{"natsio", "natsgo", "raw"})
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	n := rows[0]
	if n.Client != "natsio" || n.Rate != 2e6 || n.RateMin != 1e6 || n.RateMax != 3e6 {
		t.Errorf("natsio row: %+v", n)
	}
	// Per-rep ratios to raw: 0.5, 1, 0.75 -> median 0.75 (not 2M/2M = 1).
	if n.VsRaw == nil || *n.VsRaw != 0.75 {
		t.Errorf("natsio vs raw = %v, want 0.75", n.VsRaw)
	}
	if n.VsNatsgo == nil || *n.VsNatsgo != 2 {
		t.Errorf("natsio vs natsgo = %v, want 2", n.VsNatsgo)
	}
	if n.MBps != 32 {
		t.Errorf("MB/s = %v, want 32", n.MBps)
	}
	if n.Allocs != 0 {
		t.Errorf("allocs/op = %v, want median 0", n.Allocs)
	}
	g := rows[1]
	if g.Failed != 1 || g.Reps != 3 || !strings.Contains(g.Error, "boom") || g.Allocs != 3 {
		t.Errorf("natsgo row: %+v", g)
	}
	if g.VsNatsgo != nil {
		t.Error("natsgo row has a natsgo ratio")
	}
	table := FormatTable(rows)
	if !strings.Contains(table, "ERROR (1 of 4 reps failed): rep 4: boom") {
		t.Errorf("failed row not reported as an error:\n%s", table)
	}
	if !strings.Contains(table, "0.75") {
		t.Errorf("ratio missing:\n%s", table)
	}
}

func TestFormatRate(t *testing.T) {
	for v, want := range map[float64]string{2.404e6: "2.40M", 847_000: "847k", 10_400: "10.4k", 999: "999", 5.5: "5.50"} {
		if got := FormatRate(v); got != want {
			t.Errorf("FormatRate(%v) = %q, want %q", v, got, want)
		}
	}
}
