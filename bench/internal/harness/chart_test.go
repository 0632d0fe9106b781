package harness

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"os"
	"strings"
	"testing"
)

// chartFixture is three scenarios × three clients: one with a raw row, one
// that raw cannot run (relative to nats.go), one where nats.go is n/a, plus
// a failed and a timed-out row.
func chartFixture() ([]Result, []string, []string) {
	mk := func(s, c string, rep int, rate float64, mallocs uint64) Result {
		n := 1000
		return Result{Scenario: s, Client: c, Rep: rep, Size: 128, N: n, WallNs: int64(float64(n) / rate * 1e9),
			Mallocs: mallocs * uint64(n), CliCPUNs: 500 * int64(n)}
	}
	var rs []Result
	for rep := range 2 {
		rs = append(rs,
			mk("pub.16", "natsio", rep, 9e6, 0), mk("pub.16", "natsgo", rep, 7e6, 1), mk("pub.16", "raw", rep, 10e6, 0),
			mk("objget.64MiB", "natsio", rep, 3, 600), mk("objget.64MiB", "natsgo", rep, 2, 4000),
			Result{Scenario: "objget.64MiB", Client: "raw", Rep: rep, Err: "not applicable"},
			mk("fastpub.128", "natsio", rep, 5e5, 2), mk("fastpub.128", "raw", rep, 6e5, 0),
			Result{Scenario: "fastpub.128", Client: "natsgo", Rep: rep, Err: "not applicable"},
			Result{Scenario: "jspub.async.mem.128", Client: "natsio", Rep: rep, Err: "server received 1 messages, the client sent 2"},
			Result{Scenario: "jspub.async.mem.128", Client: "natsgo", Rep: rep, Err: "child timed out after 3m0s", Timeout: true},
			mk("jspub.async.mem.128", "raw", rep, 3e5, 0),
		)
	}
	return rs, []string{"pub.16", "objget.64MiB", "fastpub.128", "jspub.async.mem.128"}, []string{"natsio", "natsgo", "raw"}
}

func TestChartIsSVGWithEveryScenarioAndClient(t *testing.T) {
	rs, scen, cl := chartFixture()
	rows := Summarize(rs, scen, cl)
	var buf bytes.Buffer
	if err := WriteChart(&buf, rows, scen, cl, "go1.26 linux/amd64, 2 CPUs, nats-server 2.15.2"); err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("CHART_OUT"); out != "" { // to look at it: CHART_OUT=/tmp/c.svg go test -run Chart
		if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dec := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
	var texts []string
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, buf.String())
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
		case xml.CharData:
			texts = append(texts, string(tok))
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	all := strings.Join(texts, "\n")
	for _, want := range append(append([]string{}, scen...), cl...) {
		if !strings.Contains(all, want) {
			t.Errorf("chart does not name %q", want)
		}
	}
	for _, want := range []string{"objget.64MiB †", "fastpub.128 ‡" /* natsgo n/a: raw is there, so no mark */, "natsio failed", "natsgo timeout", "raw n/a", "0.9"} {
		if want == "fastpub.128 ‡" {
			if strings.Contains(all, want) {
				t.Errorf("fastpub.128 has a raw row but is marked as relative to the fastest client")
			}
			continue
		}
		if !strings.Contains(all, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
}

func TestJSONLHasTheListedFields(t *testing.T) {
	rs, _, _ := chartFixture()
	rs[0].Stalls = 3
	var buf bytes.Buffer
	m := Machine{GoVersion: "go1.26", GOOS: "linux", GOARCH: "amd64", CPUs: 2, ServerVersion: "2.15.2", Timestamp: "2026-12-02T00:00:00Z"}
	if err := WriteJSONL(&buf, rs, m); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(rs) {
		t.Fatalf("%d lines for %d runs", len(lines), len(rs))
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"scenario", "client", "rep", "msgs", "seconds", "msgs_per_sec", "mb_per_sec", "allocs_per_op",
		"bytes_per_op", "cli_cpu_ns_per_op", "srv_cpu_ns_per_op", "stalls", "error", "timeout",
		"go_version", "goos", "goarch", "cpus", "server_version", "timestamp"} {
		if _, ok := first[f]; !ok {
			t.Errorf("line lacks %q: %s", f, lines[0])
		}
	}
	if math.Abs(first["msgs_per_sec"].(float64)-9e6) > 1e3 || first["stalls"].(float64) != 3 || first["rep"].(float64) != 1 {
		t.Errorf("wrong values: %s", lines[0])
	}
}

func TestGrowthComparesLargestWithSmallest(t *testing.T) {
	mk := func(s string, rate float64, cpu int64, mallocs uint64, live int64) Result {
		n := 1000
		return Result{Scenario: s, Client: "natsio", Size: 16, N: n, WallNs: int64(float64(n) / rate * 1e9),
			CliCPUNs: cpu * int64(n), Mallocs: mallocs * uint64(n), LiveHeap: live * int64(n), MaxRSS: 50e6}
	}
	rs := []Result{mk("s.1", 1e6, 100, 0, 0), mk("s.1k", 8e5, 110, 1, 10), mk("s.100k", 5e5, 150, 2, 20)}
	rows := Summarize(rs, []string{"s.1", "s.1k", "s.100k"}, []string{"natsio", "natsgo"})
	gs := Growths(rows, map[string][]Member{"s": {{"s.100k", 100_000}, {"s.1", 1}, {"s.1k", 1000}}}, []string{"natsio", "natsgo"})
	if len(gs) != 1 {
		t.Fatalf("%d growth rows, want 1 (natsgo has no rows)", len(gs))
	}
	g := gs[0]
	if g.From != 1 || g.To != 100_000 || math.Abs(g.TimeOp-2) > 1e-6 || math.Abs(g.CliCPUOp-1.5) > 1e-6 || g.AllocsOp != 0 || g.LiveTo != 20 {
		t.Errorf("growth %+v", g)
	}
	if _, err := json.Marshal(gs); err != nil {
		t.Errorf("growth rows do not encode: %v", err)
	}
	out := FormatGrowth(gs)
	for _, want := range []string{"1 → 100k", "×2.00", "×1.50"} {
		if !strings.Contains(out, want) {
			t.Errorf("growth table lacks %q:\n%s", want, out)
		}
	}
}
