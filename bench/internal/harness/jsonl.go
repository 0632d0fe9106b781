package harness

import (
	"encoding/json"
	"io"
	"math"
)

// Machine describes where a run happened; every JSON line repeats it so
// that each line stands alone.
type Machine struct {
	GoVersion     string `json:"go_version"`
	GOOS          string `json:"goos"`
	GOARCH        string `json:"goarch"`
	CPUs          int    `json:"cpus"`
	GOMAXPROCS    int    `json:"gomaxprocs"`
	ServerVersion string `json:"server_version"`
	Timestamp     string `json:"timestamp"` // RFC 3339, UTC, when the whole run ended
	// Pinned says that the server and the client children ran on
	// separate CPUs (-pin).
	Pinned bool `json:"pinned"`
}

// Line is one JSON line of results/latest.jsonl: one client, scenario and
// repetition. Per-op figures are 0 for a run that failed or timed out
// (Error says why); the latency fields only appear for latency scenarios.
type Line struct {
	Scenario  string  `json:"scenario"`
	Client    string  `json:"client"`
	Rep       int     `json:"rep"` // from 1
	Size      int     `json:"size"`
	Msgs      int     `json:"msgs"`
	Seconds   float64 `json:"seconds"`
	MsgsPerS  float64 `json:"msgs_per_sec"`
	MBPerS    float64 `json:"mb_per_sec"`
	AllocsOp  float64 `json:"allocs_per_op"`
	BytesOp   float64 `json:"bytes_per_op"`
	CliCPUOp  float64 `json:"cli_cpu_ns_per_op"`
	SrvCPUOp  float64 `json:"srv_cpu_ns_per_op"`
	CliCores  float64 `json:"cli_cores"`
	SrvCores  float64 `json:"srv_cores"`
	LiveOp    float64 `json:"live_bytes_per_op"`
	MaxRSS    int64   `json:"max_rss_bytes"`
	P50us     float64 `json:"p50_us,omitempty"`
	P90us     float64 `json:"p90_us,omitempty"`
	P99us     float64 `json:"p99_us,omitempty"`
	Stalls    int64   `json:"stalls"`
	Error     string  `json:"error"`
	Timeout   bool    `json:"timeout"`
	NotApplic bool    `json:"not_applicable,omitempty"`
	// With -pin: the CPUs the child's and the server's threads may run on.
	ClientAffinity string `json:"client_affinity,omitempty"`
	ServerAffinity string `json:"server_affinity,omitempty"`
	Machine
}

// LineOf converts one run.
func LineOf(r *Result, m Machine) Line {
	l := Line{Scenario: r.Scenario, Client: r.Client, Rep: r.Rep + 1, Size: r.Size, Stalls: r.Stalls,
		Error: r.Err, Timeout: r.Timeout, ClientAffinity: r.CliAffinity, ServerAffinity: r.SrvAffinity, Machine: m}
	if r.Err == "not applicable" {
		l.NotApplic, l.Error = true, ""
		return l
	}
	if r.Err != "" || r.N <= 0 || r.WallNs <= 0 {
		return l
	}
	l.Msgs = r.N
	l.Seconds = float64(r.WallNs) / 1e9
	l.MsgsPerS = r.Rate()
	l.MBPerS = l.MsgsPerS * float64(r.Size) / 1e6
	l.AllocsOp = r.perOp(float64(r.Mallocs))
	l.BytesOp = r.perOp(float64(r.AllocBytes))
	l.CliCPUOp = r.perOp(float64(r.CliCPUNs))
	l.SrvCPUOp = r.perOp(float64(r.SrvCPUNs))
	l.CliCores = r.cores(r.CliCPUNs)
	l.SrvCores = r.cores(r.SrvCPUNs)
	l.LiveOp = r.perOp(float64(r.LiveHeap))
	l.MaxRSS = r.MaxRSS
	if r.Latency {
		l.P50us, l.P90us, l.P99us = float64(r.P50Ns)/1e3, float64(r.P90Ns)/1e3, float64(r.P99Ns)/1e3
	}
	return l
}

// WriteJSONL writes one line per run.
func WriteJSONL(w io.Writer, results []Result, m Machine) error {
	enc := json.NewEncoder(w)
	for i := range results {
		l := LineOf(&results[i], m)
		for _, p := range []*float64{&l.MsgsPerS, &l.MBPerS, &l.AllocsOp, &l.BytesOp, &l.CliCPUOp, &l.SrvCPUOp, &l.CliCores, &l.SrvCores, &l.LiveOp} {
			if math.IsNaN(*p) || math.IsInf(*p, 0) {
				*p = 0
			}
		}
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return nil
}
