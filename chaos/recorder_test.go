package chaos

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

// maxEvents bounds the event log; beyond it events are counted, not kept.
const maxEvents = 200_000

// event is one status observation: a connection event, a consumer's healed
// or terminal error, an ordered consumer reset, a publish error…
type event struct {
	At     time.Duration `json:"at"`
	Lag    time.Duration `json:"-"` // lag meter reading
	Phase  string        `json:"phase"`
	Source string        `json:"source"`
	Kind   string        `json:"kind"`
	Detail string        `json:"detail,omitempty"`
}

// fault is one injected fault as executed.
type fault struct {
	N          int           `json:"n"`
	Phase      string        `json:"phase"`
	Kind       string        `json:"kind"`
	Start      time.Duration `json:"start"`
	End        time.Duration `json:"end"`
	Detail     string        `json:"detail,omitempty"`
	Disruptive bool          `json:"disruptive"`
	// Expect is the event kind this fault must produce ("" any status
	// event); Events counts the status events seen near it.
	Expect string `json:"expect,omitempty"`
	Events int    `json:"events"`

	lagStart time.Duration
}

// recorder is the run's timeline: events and faults, timestamped from the
// start of the test.
type recorder struct {
	t     *testing.T
	start time.Time
	lag   *lagMeter

	mu        sync.Mutex
	events    []event
	evDropped int
	faults    []*fault
	// limited remembers when a rate-limited event kind was last kept.
	limited map[string]time.Duration
	counts  map[string]int // every event, kept or not, by phase/source/kind
}

func newRecorder(t *testing.T, lag *lagMeter) *recorder {
	return &recorder{t: t, start: time.Now(), lag: lag, limited: map[string]time.Duration{}, counts: map[string]int{}}
}

func (r *recorder) now() time.Duration { return time.Since(r.start) }

func (r *recorder) event(phase, source, kind, detail string) {
	at := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts[phase+"/"+source+"/"+kind]++
	if len(r.events) >= maxEvents {
		r.evDropped++
		return
	}
	r.events = append(r.events, event{At: at, Lag: r.lag.total(), Phase: phase, Source: source, Kind: kind, Detail: detail})
}

// eventLimited records at most one event per source and kind per 100 ms
// (publish errors come in bursts); every occurrence is still counted.
func (r *recorder) eventLimited(phase, source, kind, detail string) {
	at := r.now()
	key := phase + "/" + source + "/" + kind
	r.mu.Lock()
	last, ok := r.limited[key]
	if ok && at-last < 100*time.Millisecond {
		r.counts[key]++
		r.mu.Unlock()
		return
	}
	r.limited[key] = at
	r.mu.Unlock()
	r.event(phase, source, kind, detail)
}

func (r *recorder) beginFault(phase, kind, detail string, disruptive bool, expect string) *fault {
	r.mu.Lock()
	f := &fault{N: len(r.faults) + 1, Phase: phase, Kind: kind, Start: r.now(), Detail: detail, Disruptive: disruptive, Expect: expect, lagStart: r.lag.total()}
	r.faults = append(r.faults, f)
	r.mu.Unlock()
	r.t.Logf("%8s  fault #%d %-16s %s", fmtDur(f.Start), f.N, kind, detail)
	return f
}

func (r *recorder) endFault(f *fault, detail string) {
	r.mu.Lock()
	f.End = r.now()
	if detail != "" {
		f.Detail = strings.TrimSpace(f.Detail + "; " + detail)
	}
	r.mu.Unlock()
	r.t.Logf("%8s  fault #%d %-16s ended after %v %s", fmtDur(f.End), f.N, f.Kind, (f.End - f.Start).Round(time.Millisecond), detail)
}

// count returns how many events of kind a source recorded in a phase,
// including those past the kept list's cap.
func (r *recorder) count(phase, source, kind string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[phase+"/"+source+"/"+kind]
}

func (r *recorder) snapshotEvents(phase string) []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event
	for _, e := range r.events {
		if phase == "" || e.Phase == phase {
			out = append(out, e)
		}
	}
	return out
}

func (r *recorder) phaseFaults(phase string) []*fault {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*fault
	for _, f := range r.faults {
		if phase == "" || f.Phase == phase {
			out = append(out, f)
		}
	}
	return out
}

// around renders the events of phase within d of at.
func (r *recorder) around(phase string, at, d time.Duration) string {
	var b strings.Builder
	for _, e := range r.snapshotEvents(phase) {
		if e.At >= at-d && e.At <= at+d {
			fmt.Fprintf(&b, "      %8s %-8s %-18s %s\n", fmtDur(e.At), e.Source, e.Kind, e.Detail)
		}
	}
	return b.String()
}

// timeline renders the fault timeline.
func (r *recorder) timeline() string {
	var b strings.Builder
	for _, f := range r.phaseFaults("") {
		fmt.Fprintf(&b, "  #%-3d %-8s %8s → %8s  %-16s events=%-4d %s\n", f.N, f.Phase, fmtDur(f.Start), fmtDur(f.End), f.Kind, f.Events, f.Detail)
	}
	return b.String()
}

func fmtDur(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

// ---- small statistics helpers ----

// series collects durations (or any int64 samples) for percentiles.
type series struct {
	mu sync.Mutex
	v  []time.Duration
}

func (s *series) add(d time.Duration) {
	s.mu.Lock()
	s.v = append(s.v, d)
	s.mu.Unlock()
}

func (s *series) snapshot() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.v)
}

type pct struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

func percentiles(v []time.Duration) pct {
	if len(v) == 0 {
		return pct{}
	}
	v = slices.Clone(v)
	slices.Sort(v)
	at := func(q float64) float64 {
		i := int(q * float64(len(v)-1))
		return ms(v[i])
	}
	return pct{N: len(v), P50: at(0.5), P99: at(0.99), Max: ms(v[len(v)-1])}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// counter is a concurrent map of named counts.
type counter struct {
	mu sync.Mutex
	m  map[string]int
}

func (c *counter) add(k string, n int) {
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]int{}
	}
	c.m[k] += n
	c.mu.Unlock()
}

func (c *counter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.m))
	for k, v := range c.m {
		out[k] = v
	}
	return out
}

// ---- error classes ----

// classify names the class of a client error for the figures.
func classify(err error) string {
	var ae *jsapi.APIError
	var se *conn.ServerError
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, conn.ErrStaleConnection):
		return "stale connection"
	case conn.IsProtocolError(err):
		return "protocol error"
	case errors.Is(err, conn.ErrForcedReconnect):
		return "forced (lame duck)"
	case errors.As(err, &se):
		return "server -ERR: " + se.Kind.Error()
	case errors.Is(err, jsapi.ErrNoStreamResponse):
		return "no stream response"
	case errors.Is(err, conn.ErrNoResponders):
		return "no responders"
	case errors.Is(err, conn.ErrReconnectBuffer):
		return "reconnect buffer full"
	case errors.Is(err, conn.ErrDisconnected):
		return "disconnected"
	case errors.Is(err, conn.ErrClosed):
		return "closed"
	case errors.Is(err, conn.ErrTimeout):
		return "timeout"
	case errors.As(err, &ae):
		return fmt.Sprintf("api %d/%d", ae.Code, ae.ErrorCode)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "EOF"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection reset"
	case errors.Is(err, net.ErrClosed):
		return "closed socket"
	}
	s := err.Error()
	if len(s) > 60 {
		s = s[:60]
	}
	return "other: " + s
}

// firstAtOrAfter returns the first sample ≥ t in a sorted slice, or -1.
func firstAtOrAfter(sorted []time.Duration, t time.Duration) time.Duration {
	i, _ := slices.BinarySearch(sorted, t)
	if i == len(sorted) {
		return -1
	}
	return sorted[i]
}

func sortDurations(v []time.Duration) []time.Duration {
	v = slices.Clone(v)
	slices.SortFunc(v, cmp.Compare)
	return v
}

func itoa(n int) string   { return strconv.Itoa(n) }
func u64(n uint64) string { return strconv.FormatUint(n, 10) }
