package harness

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// chartColors are the bar colours of the clients, in order; a client past
// the list is drawn grey.
var chartColors = map[string]string{"natsio": "#1f77b4", "natsgo": "#ff7f0e", "raw": "#7f7f7f"}

// Chart layout, in pixels.
const (
	chartLabelW = 190 // scenario labels
	chartPanelW = 330 // each of the two panels
	chartGap    = 70  // between the panels
	chartBarH   = 7
	chartRowGap = 9
	chartTop    = 92
	chartRight  = 20
)

// WriteChart draws rows (Summarize's output) as an SVG: for each scenario,
// one bar per client in two panels side by side. Left: throughput relative
// to the raw client of the same repetitions (the row's ×raw; raw itself is
// 1). A scenario without a raw row is relative to nats.go, or else to the
// fastest client, and its label says so. Right: allocations per operation
// on a log scale (log10(1+x), so that 0 has a place). A failed, timed-out
// or not applicable row has no bar and says which. title is printed on
// top (the machine the figures come from).
func WriteChart(w io.Writer, rows []Row, scenarios, clients []string, title string) error {
	type key struct{ s, c string }
	by := map[key]*Row{}
	for i := range rows {
		by[key{rows[i].Scenario, rows[i].Client}] = &rows[i]
	}
	ok := func(r *Row) bool { return r != nil && r.Reps > 0 && r.Failed == 0 }

	// Relative throughput and its baseline, per scenario.
	rel := map[key]float64{}
	base := map[string]string{}
	maxRel, maxAlloc := 1.0, 1.0
	for _, s := range scenarios {
		b := ""
		for _, cand := range []string{"raw", "natsgo"} {
			if ok(by[key{s, cand}]) {
				b = cand
				break
			}
		}
		if b == "" { // the fastest client
			best := 0.0
			for _, c := range clients {
				if r := by[key{s, c}]; ok(r) && r.Rate > best {
					best, b = r.Rate, c
				}
			}
		}
		base[s] = b
		for _, c := range clients {
			r := by[key{s, c}]
			if !ok(r) || b == "" {
				continue
			}
			v := r.Rate / by[key{s, b}].Rate
			if b == "raw" && r.VsRaw != nil {
				v = *r.VsRaw // the median of per-repetition ratios, as in the table
			}
			if c == b {
				v = 1
			}
			rel[key{s, c}] = v
			maxRel = math.Max(maxRel, v)
			maxAlloc = math.Max(maxAlloc, r.Allocs)
		}
	}
	relMax := math.Ceil(maxRel*1.1*4) / 4 // a quarter above the largest
	logMax := math.Ceil(math.Log10(1 + maxAlloc))
	if logMax < 1 {
		logMax = 1
	}

	group := len(clients)*chartBarH + chartRowGap
	height := chartTop + len(scenarios)*group + 40
	width := chartLabelW + 2*chartPanelW + chartGap + chartRight
	x1 := chartLabelW                 // left panel
	x2 := x1 + chartPanelW + chartGap // right panel
	plotBottom := chartTop + len(scenarios)*group

	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="11">`+"\n", width, height, width, height)
	p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	p(`<text x="%d" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", 10, esc("natsio bench: throughput relative to raw, and allocations per operation"))
	p(`<text x="%d" y="38" fill="#444">%s</text>`+"\n", 10, esc(title))

	// Legend.
	lx := 10
	for _, c := range clients {
		p(`<rect x="%d" y="50" width="12" height="12" fill="%s"/>`, lx, color(c))
		p(`<text x="%d" y="60">%s</text>`+"\n", lx+16, esc(c))
		lx += 30 + 7*len(c)
	}
	p(`<text x="%d" y="60" fill="#444">%s</text>`+"\n", lx+10, esc("† relative to nats.go (raw has no equivalent)   ‡ relative to the fastest client"))

	// Panel titles and axes.
	p(`<text x="%d" y="%d" font-weight="bold">msgs/s ÷ raw (median of per-rep ratios; linear)</text>`+"\n", x1, chartTop-10)
	p(`<text x="%d" y="%d" font-weight="bold">allocs/op (log scale)</text>`+"\n", x2, chartTop-10)
	for v := 0.0; v <= relMax+1e-9; v += tickStep(relMax) {
		x := float64(x1) + v/relMax*chartPanelW
		stroke := "#ddd"
		if v == 1 {
			stroke = "#333"
		}
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`, x, chartTop-4, x, plotBottom, stroke)
		p(`<text x="%.1f" y="%d" text-anchor="middle" fill="#444">%s</text>`+"\n", x, plotBottom+14, trimFloat(v))
	}
	for _, v := range append([]float64{0}, decades(logMax)...) {
		x := float64(x2) + math.Log10(1+v)/logMax*chartPanelW
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`, x, chartTop-4, x, plotBottom)
		p(`<text x="%.1f" y="%d" text-anchor="middle" fill="#444">%s</text>`+"\n", x, plotBottom+14, formatCount(v))
	}
	p(`<text x="%d" y="%d" fill="#444">%s</text>`+"\n", x1, plotBottom+30, esc("bars end at the value; a missing bar says why (n/a, failed, timeout)"))

	// Bars.
	for i, s := range scenarios {
		y0 := chartTop + i*group
		if i%2 == 1 {
			p(`<rect x="0" y="%d" width="%d" height="%d" fill="#f6f6f6"/>`+"\n", y0-chartRowGap/2, width, group)
		}
		label := s
		switch base[s] {
		case "natsgo":
			label += " †"
		case "raw", "":
		default:
			label += " ‡"
		}
		p(`<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", chartLabelW-8, y0+len(clients)*chartBarH/2+4, esc(label))
		for j, c := range clients {
			y := y0 + j*chartBarH
			r := by[key{s, c}]
			if !ok(r) {
				why := ""
				switch {
				case r == nil:
				case r.Failed > 0:
					why = "failed"
				case r.TimedOut > 0:
					why = "timeout"
				case r.NA:
					why = "n/a"
				}
				if why != "" {
					for _, x := range []int{x1, x2} {
						p(`<text x="%d" y="%d" font-size="7" fill="%s">%s %s</text>`, x+2, y+chartBarH-1, color(c), esc(c), why)
					}
					b.WriteString("\n")
				}
				continue
			}
			v := rel[key{s, c}]
			wRel := v / relMax * chartPanelW
			p(`<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s %s: %.2f</title></rect>`, x1, y, wRel, chartBarH-1, color(c), esc(s), esc(c), v)
			p(`<text x="%.1f" y="%d" font-size="7" fill="#333">%.2f</text>`, float64(x1)+wRel+2, y+chartBarH-1, v)
			wA := math.Log10(1+r.Allocs) / logMax * chartPanelW
			p(`<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s %s: %s allocs/op</title></rect>`, x2, y, math.Max(wA, 0.5), chartBarH-1, color(c), esc(s), esc(c), trimFloat(r.Allocs))
			p(`<text x="%.1f" y="%d" font-size="7" fill="#333">%s</text>`+"\n", float64(x2)+wA+2, y+chartBarH-1, trimFloat(r.Allocs))
		}
	}
	p("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// decades returns 1, 10, 100… up to 10^logMax.
func decades(logMax float64) []float64 {
	var out []float64
	for e := 0.0; e <= logMax; e++ {
		out = append(out, math.Pow(10, e))
	}
	return out
}

func color(c string) string {
	if v, ok := chartColors[c]; ok {
		return v
	}
	return "#bbbbbb"
}

func esc(s string) string { return html.EscapeString(s) }

// tickStep picks a grid step for a linear axis from 0 to max.
func tickStep(max float64) float64 {
	switch {
	case max <= 1.5:
		return 0.25
	case max <= 3:
		return 0.5
	case max <= 6:
		return 1
	}
	return math.Ceil(max / 6)
}

// trimFloat prints a value with at most two decimals and no trailing zeros.
func trimFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	if v >= 100 {
		s = fmt.Sprintf("%.0f", v)
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// formatCount prints 10, 100, 1k, 10k, 1M.
func formatCount(v float64) string {
	switch {
	case v >= 1e6:
		return trimFloat(v/1e6) + "M"
	case v >= 1e3:
		return trimFloat(v/1e3) + "k"
	}
	return trimFloat(v)
}
