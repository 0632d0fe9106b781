package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"

	"github.com/natsio/natsio/proto"
)

// printJSON writes v as indented JSON on stdout.
func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printJSONLine writes v as one line of JSON (for streams of records:
// received messages, watched entries).
func (a *app) printJSONLine(v any) error {
	return json.NewEncoder(a.stdout).Encode(v)
}

// table writes rows under headers as aligned columns.
func (a *app) table(headers []string, rows [][]string) {
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(headers, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

// section is a titled block of label/value lines in an info display.
type section struct {
	title string
	rows  [][2]string
}

func (s *section) add(label, value string) { s.rows = append(s.rows, [2]string{label, value}) }

// addIf adds the row only when value is not empty.
func (s *section) addIf(label, value string) {
	if value != "" {
		s.add(label, value)
	}
}

// sections writes info sections: titles flush left, labels right-aligned
// to a common width so that the values line up.
func (a *app) sections(ss ...*section) {
	width := 0
	for _, s := range ss {
		for _, r := range s.rows {
			width = max(width, utf8.RuneCountInString(r[0]))
		}
	}
	first := true
	for _, s := range ss {
		if len(s.rows) == 0 {
			continue
		}
		if !first {
			fmt.Fprintln(a.stdout)
		}
		first = false
		if s.title != "" {
			fmt.Fprintln(a.stdout, s.title)
		}
		for _, r := range s.rows {
			fmt.Fprintf(a.stdout, "  %*s: %s\n", width, r[0], r[1])
		}
	}
}

// humanBytes formats a byte count with binary units: 1.5 KiB, 42 MiB.
func humanBytes[T int | int64 | uint64 | int32](n T) string {
	v := float64(n)
	if v < 0 {
		return "unlimited"
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", int64(n))
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// limit formats a limit where 0 or -1 mean none.
func limit[T int | int64 | int32](n T, bytes bool) string {
	if n <= 0 {
		return "unlimited"
	}
	if bytes {
		return humanBytes(n)
	}
	return commas(uint64(n))
}

// commas formats n with thousands separators: 1,234,567.
func commas(n uint64) string {
	s := strconv.FormatUint(n, 10)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// humanDuration formats d compactly (1d2h, 5m0s, 250ms); 0 is "forever"
// for ages and "-" elsewhere, chosen by zero.
func humanDuration(d time.Duration, zero string) string {
	if d <= 0 {
		return zero
	}
	if d >= 24*time.Hour {
		days := d / (24 * time.Hour)
		rest := d % (24 * time.Hour)
		if rest == 0 {
			return fmt.Sprintf("%dd", days)
		}
		return fmt.Sprintf("%dd%s", days, rest.Round(time.Second))
	}
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(time.Microsecond).String()
	}
	return d.String()
}

// ago formats a timestamp with how long ago it was.
func ago(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := time.Since(t)
	if d < 0 {
		d = 0
	}
	return fmt.Sprintf("%s (%s ago)", t.Local().Format("2006-01-02 15:04:05"), humanDuration(d.Round(time.Second), "0s"))
}

// yesNo formats a bool for info displays.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// orDash returns s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// jsonMsg is the JSON form of a message for --json output.
type jsonMsg struct {
	Subject  string              `json:"subject"`
	Reply    string              `json:"reply,omitempty"`
	Sequence uint64              `json:"seq,omitempty"`
	Time     *time.Time          `json:"time,omitempty"`
	Headers  map[string][]string `json:"headers,omitempty"`
	// Data is the payload as text when it is valid UTF-8; otherwise
	// DataBase64 holds it.
	Data       *string `json:"data,omitempty"`
	DataBase64 string  `json:"data_base64,omitempty"`
}

func newJSONMsg(subject, reply string, h *proto.Header, data []byte) jsonMsg {
	m := jsonMsg{Subject: subject, Reply: reply, Headers: headerMap(h)}
	if utf8.Valid(data) {
		s := string(data)
		m.Data = &s
	} else {
		m.DataBase64 = base64.StdEncoding.EncodeToString(data)
	}
	return m
}

// headerMap copies a header's fields into a map (nil when it has none).
func headerMap(h *proto.Header) map[string][]string {
	if h.IsZero() {
		return nil
	}
	m := map[string][]string{}
	for k, v := range h.All() {
		m[k] = append(m[k], v)
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// writeHeaders prints a header as "Key: value" lines, with its status
// line when it has one.
func writeHeaders(w io.Writer, h *proto.Header) {
	if h.IsZero() {
		return
	}
	if code, desc := h.Status(); code != 0 {
		fmt.Fprintf(w, "Status: %d %s\n", code, desc)
	}
	for k, v := range h.All() {
		fmt.Fprintf(w, "%s: %s\n", k, v)
	}
}

// writeBody prints a message body followed by a newline when it does not
// end with one.
func writeBody(w io.Writer, data []byte) {
	w.Write(data)
	if len(data) == 0 || data[len(data)-1] != '\n' {
		io.WriteString(w, "\n")
	}
}

// showProgress decides whether to draw progress bars.
func (a *app) showProgress() bool {
	switch a.progress {
	case "always":
		return true
	case "never":
		return false
	}
	return !a.json && stderrIsTerminal()
}

// newBar returns a progress bar on stderr for max units (bytes when bytes
// is set; -1 for unknown), or a silent one when bars are off.
func (a *app) newBar(max int64, desc string, bytes bool) *progressbar.ProgressBar {
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(a.stderr),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionFullWidth(),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetVisibility(a.showProgress()),
	}
	if bytes {
		opts = append(opts, progressbar.OptionShowBytes(true), progressbar.OptionShowTotalBytes(true), progressbar.OptionUseIECUnits(true))
	} else {
		opts = append(opts, progressbar.OptionShowIts(), progressbar.OptionSetItsString("msgs"))
	}
	return progressbar.NewOptions64(max, opts...)
}

// collect gathers a listing's items, stopping at its first error.
func collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var list []T
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		list = append(list, v)
	}
	return list, nil
}
