package harness

import (
	"fmt"
	"math"
	"sort"
)

// Member is one scenario of a scale family, at its scale (subscriptions,
// connections, stored messages).
type Member struct {
	Scenario string
	Scale    int
}

// Growth compares, for one client, a scale family's largest member with
// its smallest: per-operation cost ratios (1 means the total grows
// linearly with the work), and the live heap per operation and peak RSS at
// both ends.
type Growth struct {
	Group    string  `json:"group"`
	Client   string  `json:"client"`
	From     int     `json:"from"`
	To       int     `json:"to"`
	TimeOp   float64 `json:"time_per_op_ratio"`    // wall time per op, largest ÷ smallest
	CliCPUOp float64 `json:"cli_cpu_per_op_ratio"` // client CPU per op
	AllocsOp float64 `json:"allocs_per_op_ratio"`  // 0 when the smallest allocates nothing
	LiveFrom float64 `json:"live_bytes_per_op_from"`
	LiveTo   float64 `json:"live_bytes_per_op_to"`
	RSSFrom  float64 `json:"max_rss_bytes_from"`
	RSSTo    float64 `json:"max_rss_bytes_to"`
}

// Growths computes the growth rows of every family (group name → members)
// for every client that has a successful row at both ends.
func Growths(rows []Row, groups map[string][]Member, clients []string) []Growth {
	type key struct{ s, c string }
	by := map[key]*Row{}
	for i := range rows {
		by[key{rows[i].Scenario, rows[i].Client}] = &rows[i]
	}
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	var out []Growth
	for _, g := range names {
		ms := append([]Member(nil), groups[g]...)
		sort.Slice(ms, func(i, j int) bool { return ms[i].Scale < ms[j].Scale })
		for _, c := range clients {
			var have []Member
			for _, m := range ms {
				if r := by[key{m.Scenario, c}]; r != nil && r.Reps > 0 && r.Failed == 0 {
					have = append(have, m)
				}
			}
			if len(have) < 2 {
				continue
			}
			lo, hi := by[key{have[0].Scenario, c}], by[key{have[len(have)-1].Scenario, c}]
			ratio := func(a, b float64) float64 {
				if a <= 0 || math.IsInf(a, 0) || math.IsNaN(b) {
					return 0 // undefined
				}
				return b / a
			}
			out = append(out, Growth{Group: g, Client: c, From: have[0].Scale, To: have[len(have)-1].Scale,
				TimeOp: ratio(1/lo.Rate, 1/hi.Rate), CliCPUOp: ratio(lo.CliCPU, hi.CliCPU), AllocsOp: ratio(lo.Allocs, hi.Allocs),
				LiveFrom: lo.Live, LiveTo: hi.Live, RSSFrom: lo.MaxRSS, RSSTo: hi.MaxRSS})
		}
	}
	return out
}

// FormatGrowth renders growth rows as a table (empty without rows).
func FormatGrowth(gs []Growth) string {
	if len(gs) == 0 {
		return ""
	}
	t := [][]string{{"family", "client", "scale", "time/op", "cli-cpu/op", "allocs/op", "live B/op", "peak RSS MB"}}
	for _, g := range gs {
		t = append(t, []string{g.Group, g.Client,
			formatCount(float64(g.From)) + " → " + formatCount(float64(g.To)),
			ratioCell(g.TimeOp), ratioCell(g.CliCPUOp), ratioCell(g.AllocsOp),
			formatFloat(g.LiveFrom) + " → " + formatFloat(g.LiveTo),
			fmt.Sprintf("%.0f → %.0f", g.RSSFrom/1e6, g.RSSTo/1e6)})
	}
	return align(t)
}

func ratioCell(v float64) string {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf("×%.2f", v)
}
