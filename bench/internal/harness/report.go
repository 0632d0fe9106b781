package harness

import (
	"fmt"
	"math"
	"strings"
)

// Result is one run: one scenario, one client, one repetition, in its own
// process. The child prints it as a JSON line.
type Result struct {
	Scenario string `json:"scenario"`
	Client   string `json:"client"`
	Rep      int    `json:"rep"`
	Size     int    `json:"size"`
	Latency  bool   `json:"latency,omitempty"`
	Warmup   int    `json:"warmup"`
	N        int    `json:"n"` // operations in the timed section

	WallNs     int64  `json:"wall_ns"`
	CliCPUNs   int64  `json:"cli_cpu_ns"`
	SrvCPUNs   int64  `json:"srv_cpu_ns"`
	Mallocs    uint64 `json:"mallocs"`
	AllocBytes uint64 `json:"alloc_bytes"`
	LiveHeap   int64  `json:"live_heap_bytes"`
	MaxRSS     int64  `json:"max_rss_bytes"`

	P50Ns int64 `json:"p50_ns,omitempty"`
	P90Ns int64 `json:"p90_ns,omitempty"`
	P99Ns int64 `json:"p99_ns,omitempty"`
	MaxNs int64 `json:"max_ns,omitempty"`

	// ExpectInMsgs is how many messages the server must have received from
	// the run (warm-up included); the harness checks it against /varz.
	ExpectInMsgs int64 `json:"expect_in_msgs,omitempty"`
	ServerInMsgs int64 `json:"server_in_msgs,omitempty"`

	// Stalls counts async publishes that met a full window for the
	// library's whole stall wait and were tried again (backpressure, not
	// an error).
	Stalls int64 `json:"stalls,omitempty"`

	// With -pin: the CPUs the threads of the child may run on (the union
	// over its threads, read by the child as it ends) and of the server
	// (read by the parent after the run), as CPU lists ("0", "0-2"), and
	// the child's GOMAXPROCS, which Go sets from its CPUs.
	CliAffinity string `json:"cli_affinity,omitempty"`
	SrvAffinity string `json:"srv_affinity,omitempty"`
	GOMAXPROCS  int    `json:"gomaxprocs,omitempty"`

	Err string `json:"error,omitempty"`
	// Timeout marks an Err that says only that something did not happen in
	// time (the run, a flush, an ack): recorded, but not a failure.
	Timeout bool `json:"timeout,omitempty"`
}

// Rate is operations per second of the timed section.
func (r *Result) Rate() float64 { return float64(r.N) / (float64(r.WallNs) / 1e9) }

func (r *Result) perOp(v float64) float64 { return v / float64(r.N) }

// cores is CPU time over the timed section's wall time: how many cores
// the process kept busy (1: one core all the time).
func (r *Result) cores(cpuNs int64) float64 { return float64(cpuNs) / float64(r.WallNs) }

// Row summarises the repetitions of one scenario for one client: medians,
// and for msgs/s the min–max spread.
type Row struct {
	Scenario string  `json:"scenario"`
	Client   string  `json:"client"`
	Size     int     `json:"size"`
	Latency  bool    `json:"latency,omitempty"`
	Reps     int     `json:"reps"`                // successful repetitions
	Failed   int     `json:"failed"`              // failed repetitions (a correctness check or a crash)
	TimedOut int     `json:"timed_out,omitempty"` // repetitions that ran out of time
	Stalls   int64   `json:"stalls,omitempty"`    // stalls summed over the repetitions
	Error    string  `json:"error,omitempty"`
	NA       bool    `json:"not_applicable,omitempty"`
	Rate     float64 `json:"msgs_per_s"`
	RateMin  float64 `json:"msgs_per_s_min"`
	RateMax  float64 `json:"msgs_per_s_max"`
	MBps     float64 `json:"mb_per_s"`
	Allocs   float64 `json:"allocs_per_op"`
	Bytes    float64 `json:"bytes_per_op"`
	CliCPU   float64 `json:"cli_cpu_ns_per_op"`
	SrvCPU   float64 `json:"srv_cpu_ns_per_op"`
	// CliCores and SrvCores are the medians of each process's CPU time
	// over the wall time of the timed section: the cores it kept busy.
	// Pinned, SrvCores near 1 says the server's one core was the limit.
	CliCores float64 `json:"cli_cores"`
	SrvCores float64 `json:"srv_cores"`
	Live     float64 `json:"live_bytes_per_op"` // LiveHeap ÷ N, median
	MaxRSS   float64 `json:"max_rss_bytes"`     // median
	P50us    float64 `json:"p50_us,omitempty"`
	P90us    float64 `json:"p90_us,omitempty"`
	P99us    float64 `json:"p99_us,omitempty"`
	// Ratios are medians of per-repetition ratios (both runs of a ratio
	// come from the same repetition). NaN (omitted in JSON as null) when
	// not applicable.
	VsRaw       *float64 `json:"rate_vs_raw,omitempty"`
	VsNatsgo    *float64 `json:"rate_vs_natsgo,omitempty"`
	CPUVsNatsgo *float64 `json:"cpu_vs_natsgo,omitempty"`
}

// Summarize builds one row per (scenario, client), scenarios and clients in
// the given orders. natsgo and raw are the reference client names for the
// ratio columns; ref ratios are computed for every client but the reference
// itself (VsNatsgo and CPUVsNatsgo only for "natsio").
func Summarize(results []Result, scenarios, clients []string) []Row {
	type key struct{ s, c string }
	by := map[key][]Result{}
	for _, r := range results {
		k := key{r.Scenario, r.Client}
		by[k] = append(by[k], r)
	}
	okByRep := func(s, c string) map[int]*Result {
		m := map[int]*Result{}
		for i := range by[key{s, c}] {
			r := &by[key{s, c}][i]
			if r.Err == "" {
				m[r.Rep] = r
			}
		}
		return m
	}
	ratio := func(s, num, den string, f func(*Result) float64) *float64 {
		a, b := okByRep(s, num), okByRep(s, den)
		var xs []float64
		for rep, ra := range a {
			if rb, ok := b[rep]; ok && f(rb) > 0 {
				xs = append(xs, f(ra)/f(rb))
			}
		}
		if len(xs) == 0 {
			return nil
		}
		v := Median(xs)
		return &v
	}
	var rows []Row
	for _, s := range scenarios {
		for _, c := range clients {
			runs := by[key{s, c}]
			if len(runs) == 0 {
				continue
			}
			row := Row{Scenario: s, Client: c, Size: runs[0].Size, Latency: runs[0].Latency}
			var rate, allocs, bytes, cli, srv, cliCores, srvCores, live, rss, p50, p90, p99 []float64
			for i := range runs {
				r := &runs[i]
				row.Stalls += r.Stalls
				if r.Err != "" {
					if r.Err == "not applicable" {
						row.NA = true
						continue
					}
					if r.Timeout {
						row.TimedOut++
						if row.Error == "" {
							row.Error = fmt.Sprintf("rep %d: %s", r.Rep+1, r.Err)
						}
						continue
					}
					if row.Failed == 0 {
						row.Error = "" // a failure's message before a timeout's
					}
					row.Failed++
					if row.Error == "" {
						row.Error = fmt.Sprintf("rep %d: %s", r.Rep+1, r.Err)
					}
					continue
				}
				row.Reps++
				rate = append(rate, r.Rate())
				allocs = append(allocs, r.perOp(float64(r.Mallocs)))
				bytes = append(bytes, r.perOp(float64(r.AllocBytes)))
				cli = append(cli, r.perOp(float64(r.CliCPUNs)))
				srv = append(srv, r.perOp(float64(r.SrvCPUNs)))
				cliCores = append(cliCores, r.cores(r.CliCPUNs))
				srvCores = append(srvCores, r.cores(r.SrvCPUNs))
				live = append(live, r.perOp(float64(r.LiveHeap)))
				rss = append(rss, float64(r.MaxRSS))
				if r.Latency {
					p50 = append(p50, float64(r.P50Ns)/1e3)
					p90 = append(p90, float64(r.P90Ns)/1e3)
					p99 = append(p99, float64(r.P99Ns)/1e3)
				}
			}
			if row.Reps > 0 {
				row.Rate = Median(rate)
				row.RateMin, row.RateMax = MinMax(rate)
				row.MBps = row.Rate * float64(row.Size) / 1e6
				row.Allocs = Median(allocs)
				row.Bytes = Median(bytes)
				row.CliCPU = Median(cli)
				row.SrvCPU = Median(srv)
				row.CliCores = Median(cliCores)
				row.SrvCores = Median(srvCores)
				row.Live = Median(live)
				row.MaxRSS = Median(rss)
				if row.Latency {
					row.P50us, row.P90us, row.P99us = Median(p50), Median(p90), Median(p99)
				}
				rateOf := func(r *Result) float64 { return r.Rate() }
				cpuOf := func(r *Result) float64 { return r.perOp(float64(r.CliCPUNs)) }
				if c != "raw" {
					row.VsRaw = ratio(s, c, "raw", rateOf)
				}
				if c == "natsio" {
					row.VsNatsgo = ratio(s, c, "natsgo", rateOf)
					row.CPUVsNatsgo = ratio(s, c, "natsgo", cpuOf)
				}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// FormatTable renders rows as an aligned text table. Latency columns are
// printed only when some row has them.
func FormatTable(rows []Row) string { return formatTable(rows, false) }

// FormatPinnedTable is FormatTable for a pinned run: after the CPU per op
// it prints each process's CPU time as a percentage of the timed
// section's wall time (cli core %, srv core %; 100: one core busy all the
// time).
func FormatPinnedTable(rows []Row) string { return formatTable(rows, true) }

func formatTable(rows []Row, cores bool) string {
	lat := false
	for _, r := range rows {
		lat = lat || r.Latency
	}
	header := []string{"scenario", "client", "msgs/s", "min–max", "MB/s", "allocs/op", "B/op", "cli-cpu ns/op", "srv-cpu ns/op"}
	if cores {
		header = append(header, "cli core %", "srv core %")
	}
	if lat {
		header = append(header, "p50 µs", "p90 µs", "p99 µs")
	}
	header = append(header, "×raw", "natsio/natsgo", "cpu natsio/natsgo")
	table := [][]string{header}
	for _, r := range rows {
		cells := []string{r.Scenario, r.Client}
		switch {
		case r.Failed > 0:
			cells = append(cells, fmt.Sprintf("ERROR (%d of %d reps failed): %s", r.Failed, r.Failed+r.Reps+r.TimedOut, oneLine(r.Error)))
			table = append(table, cells)
			continue
		case r.Reps == 0 && r.NA:
			cells = append(cells, "n/a")
			table = append(table, cells)
			continue
		case r.Reps == 0 && r.TimedOut > 0:
			cells = append(cells, fmt.Sprintf("TIMEOUT (%d of %d reps): %s", r.TimedOut, r.TimedOut, oneLine(r.Error)))
			table = append(table, cells)
			continue
		}
		cells = append(cells,
			FormatRate(r.Rate),
			FormatRate(r.RateMin)+"–"+FormatRate(r.RateMax),
			formatFloat(r.MBps),
			fmt.Sprintf("%.2f", r.Allocs),
			formatFloat(r.Bytes),
			formatFloat(r.CliCPU),
			formatFloat(r.SrvCPU),
		)
		if cores {
			cells = append(cells, fmt.Sprintf("%.0f", 100*r.CliCores), fmt.Sprintf("%.0f", 100*r.SrvCores))
		}
		if lat {
			if r.Latency {
				cells = append(cells, fmt.Sprintf("%.1f", r.P50us), fmt.Sprintf("%.1f", r.P90us), fmt.Sprintf("%.1f", r.P99us))
			} else {
				cells = append(cells, "", "", "")
			}
		}
		cells = append(cells, formatRatio(r.VsRaw), formatRatio(r.VsNatsgo), formatRatio(r.CPUVsNatsgo))
		table = append(table, cells)
	}
	return align(table)
}

// align pads columns: the first two left-aligned, the others right-aligned.
// A row with fewer cells than the header (an error row) lets its last cell
// run on.
func align(table [][]string) string {
	n := len(table[0])
	width := make([]int, n)
	for _, row := range table {
		if len(row) < n {
			continue
		}
		for i, c := range row {
			width[i] = max(width[i], runeLen(c))
		}
	}
	var b strings.Builder
	for ri, row := range table {
		for i, c := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", max(0, width[i]-runeLen(c)))
			switch {
			case len(row) < n && i == len(row)-1:
				b.WriteString(c)
			case i < 2:
				b.WriteString(c + pad)
			default:
				b.WriteString(pad + c)
			}
		}
		trimmed := strings.TrimRight(b.String(), " ")
		b.Reset()
		b.WriteString(trimmed)
		b.WriteString("\n")
		if ri == 0 {
			total := 0
			for _, w := range width {
				total += w + 2
			}
			b.WriteString(strings.Repeat("-", total-2) + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// FormatNotes lists what the table's figures do not show: backpressure
// stalls and repetitions that timed out (their figures are left out of the
// medians). Empty when there is nothing to say.
func FormatNotes(rows []Row) string {
	var b strings.Builder
	for _, r := range rows {
		if r.Stalls > 0 {
			fmt.Fprintf(&b, "%s %s: %d stalls (a full publish window for the library's whole stall wait; waited and went on)\n", r.Scenario, r.Client, r.Stalls)
		}
		if r.TimedOut > 0 && r.Reps > 0 {
			fmt.Fprintf(&b, "%s %s: %d of %d reps timed out (not in the figures): %s\n", r.Scenario, r.Client, r.TimedOut, r.TimedOut+r.Reps, oneLine(r.Error))
		}
	}
	return b.String()
}

func runeLen(s string) int { return len([]rune(s)) }

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " | ")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:160]) + "…"
	}
	return s
}

// FormatRate prints a rate with three significant digits: 2.40M, 847k, 10.4k.
func FormatRate(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v >= 1e6:
		return trim3(v/1e6) + "M"
	case v >= 1e3:
		return trim3(v/1e3) + "k"
	}
	return trim3(v)
}

func trim3(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// formatFloat prints per-op figures: integers above 100, one decimal above
// 10, two below.
func formatFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func formatRatio(p *float64) string {
	if p == nil {
		return ""
	}
	return fmt.Sprintf("%.2f", *p)
}
