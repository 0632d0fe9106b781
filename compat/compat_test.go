package compat

import (
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/natsio/natsio/jsapi"
)

// version is one nats-server line under test.
type version struct {
	name  string // "v2.11.17"
	minor int    // 11
	bin   string
}

// has reports whether the version is at least 2.minor.
func (v version) has(minor int) bool { return v.minor >= minor }

// versions parses NATSIO_COMPAT_SERVERS ("v2.10.29=/path,…").
func versions(t *testing.T) []version {
	env := os.Getenv("NATSIO_COMPAT_SERVERS")
	if env == "" {
		t.Skip("NATSIO_COMPAT_SERVERS is not set: run `make compat` from the repository root")
	}
	var vs []version
	for item := range strings.SplitSeq(env, ",") {
		name, bin, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			t.Fatalf("NATSIO_COMPAT_SERVERS: %q is not version=path", item)
		}
		parts := strings.Split(strings.TrimPrefix(name, "v"), ".")
		if len(parts) != 3 || parts[0] != "2" {
			t.Fatalf("NATSIO_COMPAT_SERVERS: bad version %q", name)
		}
		minor, err := strconv.Atoi(parts[1])
		if err != nil {
			t.Fatalf("NATSIO_COMPAT_SERVERS: bad version %q", name)
		}
		vs = append(vs, version{name: name, minor: minor, bin: bin})
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].minor < vs[j].minor })
	return vs
}

// cells holds the table: row → version name → cell, each written by a
// test that passed.
var cells = struct {
	sync.Mutex
	m        map[string]map[string]string
	versions []string
}{m: map[string]map[string]string{}}

// Cell values.
const (
	cellWorks    = "✅"
	cellRefused  = "FeatureError"
	cellIgnored  = "ignored"
	cellRejected = "412 / 10185"
)

// record sets the table cell of row for v to cell once t has passed.
func record(t *testing.T, v version, row, cell string) {
	t.Cleanup(func() {
		if t.Failed() || t.Skipped() {
			return
		}
		cells.Lock()
		defer cells.Unlock()
		if cells.m[row] == nil {
			cells.m[row] = map[string]string{}
		}
		cells.m[row][v.name] = cell
	})
}

// TestCompat runs every check against every server, two servers at a time
// (go test -parallel 2).
func TestCompat(t *testing.T) {
	vs := versions(t)
	for _, v := range vs {
		cells.versions = append(cells.versions, v.name)
	}
	t.Run("servers", func(t *testing.T) {
		for _, v := range vs {
			t.Run(v.name, func(t *testing.T) {
				t.Parallel()
				s := startServer(t, v.bin)
				// A file stream that lives as long as the server, so that the
				// account's store directory is never empty: after the restart
				// in the core checks, 2.11 and 2.12 were seen to remove an
				// empty one while a file stream was being created, which
				// then failed (err_code 10049, "could not create storage
				// directory").
				mkStream(t, newJS(t, s), jsapi.StreamConfig{Name: "ANCHOR", Storage: jsapi.StorageFile})
				runCore(t, v, s)
				runJetStream(t, v, s)
				runGated(t, v, s)
				runAPILevel(t, v, s)
			})
		}
	})
	if t.Failed() {
		return
	}
	checkTable(t)
}

// rowOrder is the table's rows, in order, with the section each starts.
var rowOrder = []struct{ section, row string }{
	{"Core", "pub/sub"},
	{"", "headers"},
	{"", "request/reply"},
	{"", "queue groups"},
	{"", "reconnect after a restart"},
	{"JetStream", "stream create, info, update, list, delete"},
	{"", "publish expectations and dedup"},
	{"", "pull fetch with acks"},
	{"", "pull consume with acks"},
	{"", "ordered consumer"},
	{"", "KV (bucket TTL)"},
	{"", "object store"},
	{"", "micro service"},
	{"Version-gated", "per-message TTL (2.11)"},
	{"", "KV per-key TTL (2.11)"},
	{"", "expected last subject sequence for a filter (2.11)"},
	{"", "priority groups (2.11)"},
	{"", "consumer pause (2.11)"},
	{"", "batch direct get (2.11)"},
	{"", "atomic batch publish (2.12)"},
	{"", "counters (2.12)"},
	{"", "@at schedules (2.12)"},
	{"", "prioritized priority policy (2.12)"},
	{"", "async persist mode (2.12)"},
	{"", "fast batch publish (2.14)"},
	{"", "batch commit by end-of-batch marker (2.14)"},
	{"", "cron schedules (2.14)"},
	{"", "interval schedules (2.14)"},
	{"", "consumer reset (2.14)"},
	{"", "flow_control ack policy (2.14)"},
	{"", "API level 5 (2.15)"},
	{"", "feature check behind a JetStream domain ($JS.API.INFO level)"},
	{"ADR-44", "Nats-Required-Api-Level above the server's level"},
	{"", "Nats-Required-Api-Level at the server's level"},
	{"", "server's API level (INFO api_lvl / $JS.API.INFO)"},
}

const (
	tableBegin = "<!-- compat-table:begin (written by `make compat`; do not edit) -->"
	tableEnd   = "<!-- compat-table:end -->"
	docPath    = "../docs/compatibility.md"
)

// renderTable writes the table from the recorded cells; a cell no passing
// test wrote is "not run".
func renderTable() string {
	cells.Lock()
	defer cells.Unlock()
	var b strings.Builder
	b.WriteString("| Feature |")
	for _, v := range cells.versions {
		b.WriteString(" " + v + " |")
	}
	b.WriteString("\n|---|")
	for range cells.versions {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range rowOrder {
		if r.section != "" {
			b.WriteString("| **" + r.section + "** |" + strings.Repeat(" |", len(cells.versions)) + "\n")
		}
		b.WriteString("| " + r.row + " |")
		for _, v := range cells.versions {
			c := cells.m[r.row][v]
			if c == "" {
				c = "not run"
			}
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// checkTable compares the table with docs/compatibility.md, or rewrites it
// there with NATSIO_COMPAT_UPDATE=1.
func checkTable(t *testing.T) {
	table := renderTable()
	if strings.Contains(table, "not run") {
		t.Fatalf("some cells were not written by a passing test:\n%s", table)
	}
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, tableBegin), strings.Index(s, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the %q … %q markers", docPath, tableBegin, tableEnd)
	}
	cur := s[i+len(tableBegin) : j]
	want := "\n" + table
	if cur == want {
		return
	}
	if os.Getenv("NATSIO_COMPAT_UPDATE") == "1" {
		s = s[:i+len(tableBegin)] + want + s[j:]
		if err := os.WriteFile(docPath, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s updated", docPath)
		return
	}
	t.Errorf("%s does not match the suite's results; run `make compat-update` and commit it. The suite's table:\n%s", docPath, table)
}
