package main

// End-to-end tests of `req --replies` (scatter-gather) and `trace`, in the
// style of e2e_test.go: each test runs its own `natsio server`.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
)

// startResponders starts one `natsio reply` per name, each in a queue group
// of its own (so that every one answers every request), answering
// "from NAME" count times, and waits until all of them are subscribed.
func startResponders(t *testing.T, s *testServer, subject string, count int, names ...string) []*proc {
	t.Helper()
	var ps []*proc
	for _, n := range names {
		p := s.start(t, "reply", subject, "from "+n, "--queue", "q"+n, "--count", fmt.Sprint(count), "--quiet")
		ps = append(ps, p)
	}
	for _, p := range ps {
		p.waitStderr(t, "Listening on")
	}
	return ps
}

// lines returns the non-empty lines of s, sorted.
func lines(s string) []string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

func TestRequestManyReplies(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	reps := startResponders(t, s, "svc.many", 2, "a", "b", "c")
	want := []string{"from a", "from b", "from c"}

	// --replies 3: the three replies, each printed as req prints one.
	r := s.ok(t, "req", "svc.many", "ping", "--replies", "3")
	if got := lines(r.stdout); !slices.Equal(got, want) {
		t.Fatalf("replies %q, want %q:\n%s", got, want, r)
	}
	if !strings.Contains(r.stderr, "Received reply #3 on") || !strings.Contains(r.stderr, "Received 3 replies in") {
		t.Fatalf("stderr lacks the reply lines:\n%s", r)
	}

	// --replies 0 with --wait-stall: every reply, then the stall ends the
	// gathering long before --timeout. --json: one object per line.
	const timeout = 60 * time.Second
	start := time.Now()
	r = s.ok(t, "--timeout", timeout.String(), "req", "svc.many", "ping", "--replies", "0", "--wait-stall", "2s", "--json")
	if el := time.Since(start); el >= timeout/2 {
		t.Fatalf("--wait-stall 2s did not end the gathering: it took %v (--timeout %v)", el, timeout)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var m reqReply
		if err := json.Unmarshal([]byte(l), &m); err != nil || m.Data == nil || m.RTT <= 0 {
			t.Fatalf("--json line %q: %v\n%s", l, err, r)
		}
		got = append(got, *m.Data)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("--json replies %q, want %q:\n%s", got, want, r)
	}

	for _, p := range reps {
		if r := p.wait(t, 20*time.Second); r.code != 0 {
			t.Fatalf("responder:\n%s", r)
		}
	}
	// Nobody left: the usual no-responders error, whatever --replies says.
	s.fails(t, []string{`no responders on "svc.many"`, "natsio reply"}, "req", "svc.many", "x", "--replies", "3")
	s.fails(t, []string{`no responders on "svc.many"`}, "req", "svc.many", "x", "--replies", "0", "--wait-stall", "1s")
}

func TestTraceCommand(t *testing.T) {
	t.Parallel()
	s := startServer(t)

	// Trace only (the default): an ingress and an egress line, and the
	// subscriber receives nothing. The first message it sees is a marker
	// published after the trace returned (the server reports after it
	// processed the traced message, so a delivery would come first).
	sub := s.start(t, "sub", "trace.x", "--count", "1")
	sub.waitStderr(t, "Listening on")
	r := s.ok(t, "trace", "trace.x", "secret", "--stall", "200ms")
	contains(t, r, "Server ", `  in  client "natsio"`, `subject "trace.x"`, `  eg  client "natsio"`, `subscription "trace.x"`)
	if !strings.Contains(r.stderr, "traced only, not delivered") {
		t.Fatalf("stderr does not say the message was not delivered:\n%s", r)
	}
	s.ok(t, "pub", "trace.x", "marker")
	r = sub.wait(t, 20*time.Second)
	if r.code != 0 || !strings.Contains(r.stdout, "marker") || strings.Contains(r.stdout, "secret") {
		t.Fatalf("the trace-only message was delivered:\n%s", r)
	}

	// --deliver: the subscriber receives it, trace headers included.
	sub = s.start(t, "sub", "trace.y", "--count", "1")
	sub.waitStderr(t, "Listening on")
	r = s.ok(t, "trace", "trace.y", "delivered", "--deliver", "-H", "App:1")
	contains(t, r, `  eg  client "natsio"`, `subscription "trace.y"`)
	r = sub.wait(t, 20*time.Second)
	if r.code != 0 {
		t.Fatalf("sub:\n%s", r)
	}
	contains(t, r, "delivered", "App: 1", "Nats-Trace-Dest: ")

	// A stream's subject: the js entry names the stream; trace only stores
	// nothing, --deliver stores the message.
	s.ok(t, "stream", "add", "TRACED", "--subjects", "traced.>")
	r = s.ok(t, "trace", "traced.one", "x")
	contains(t, r, `  js  stream TRACED, subject "traced.one"`)
	evs := decode[[]struct {
		Server struct {
			Version string `json:"ver"`
		} `json:"server"`
		Events []struct {
			Type   string `json:"type"`
			Stream string `json:"stream"`
			Subj   string `json:"subj"`
		} `json:"events"`
	}](t, s.ok(t, "trace", "traced.two", "y", "--json"))
	if len(evs) != 1 || evs[0].Server.Version == "" || len(evs[0].Events) < 2 ||
		evs[0].Events[0].Type != "in" || evs[0].Events[0].Subj != "traced.two" {
		t.Fatalf("--json events: %+v", evs)
	}
	stream := ""
	for _, e := range evs[0].Events {
		if e.Type == "js" {
			stream = e.Stream
		}
	}
	if stream != "TRACED" {
		t.Fatalf("--json has no js entry for TRACED: %+v", evs)
	}
	type streamState struct {
		State struct {
			Msgs uint64 `json:"messages"`
		} `json:"state"`
	}
	if si := decode[streamState](t, s.ok(t, "stream", "info", "TRACED", "--json")); si.State.Msgs != 0 {
		t.Fatalf("trace-only messages stored: %d", si.State.Msgs)
	}
	s.ok(t, "trace", "traced.three", "z", "--deliver", "--stall", "200ms")
	if si := decode[streamState](t, s.ok(t, "stream", "info", "TRACED", "--json")); si.State.Msgs != 1 {
		t.Fatalf("after --deliver the stream holds %d messages, want 1", si.State.Msgs)
	}
}

// Bad input fails before anything is sent: even before connecting, as the
// unreachable server shows.
func TestReqTraceBadInput(t *testing.T) {
	t.Parallel()
	dead := fmt.Sprintf("nats://127.0.0.1:%d", freePort(t))
	for _, c := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"trace", "bad subject", "x"}, `invalid subject "bad subject"`, exitError},
		{[]string{"trace", "a..b"}, `invalid subject "a..b"`, exitError},
		{[]string{"trace", "orders.*"}, "wildcards", exitError},
		{[]string{"trace", "x", "--header", "no-colon"}, `--header "no-colon" is not KEY:VALUE`, exitUsage},
		{[]string{"trace", "x", "--header", "Bad Key:v"}, "invalid --header", exitUsage},
		{[]string{"trace", "x", "--stall", "0s"}, "--stall must be positive", exitUsage},
		{[]string{"trace"}, "takes 1 to 2 arguments", exitUsage},
		{[]string{"req", "bad subject", "x", "--replies", "3"}, `invalid subject "bad subject"`, exitError},
		{[]string{"req", "x", "y", "--replies", "-1"}, "--replies must not be negative", exitUsage},
		{[]string{"req", "x", "y", "--wait-stall", "1s"}, "--wait-stall needs --replies", exitUsage},
		{[]string{"req", "x", "y", "--replies", "0", "--wait-stall", "-1s"}, "--wait-stall must not be negative", exitUsage},
	} {
		r := fails(t, []string{c.want, "hint:"}, append([]string{"--server", dead}, c.args...)...)
		if r.code != c.code || strings.Contains(r.stderr, "cannot connect") {
			t.Fatalf("exit code %d, want %d, without connecting:\n%s", r.code, c.code, r)
		}
	}
}

// TestRequestManyWaitForEmpty: --wait-for-empty ends the gathering at a
// reply with an empty body (not printed), at once rather than at
// --timeout; an answer that is only the end marker is a normal, empty end.
func TestRequestManyWaitForEmpty(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, s.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// One responder streams its answer in order, then the end marker.
	if _, err := nc.SubscribeFunc("svc.list", func(m *conn.Msg) {
		for _, part := range []string{"one", "two", ""} {
			_ = nc.Publish(m.Reply, []byte(part))
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.SubscribeFunc("svc.none", func(m *conn.Msg) { _ = nc.Publish(m.Reply, nil) }); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	const timeout = 60 * time.Second
	start := time.Now()
	r := s.ok(t, "--timeout", timeout.String(), "req", "svc.list", "x", "--replies", "0", "--wait-for-empty")
	if el := time.Since(start); el >= timeout/2 {
		t.Fatalf("the end marker did not end the gathering: it took %v", el)
	}
	if got := lines(r.stdout); !slices.Equal(got, []string{"one", "two"}) {
		t.Fatalf("replies %q, want one and two:\n%s", got, r)
	}
	if !strings.Contains(r.stderr, "Received 2 replies in") {
		t.Fatalf("stderr lacks the summary:\n%s", r)
	}
	r = s.ok(t, "--timeout", timeout.String(), "req", "svc.none", "x", "--replies", "0", "--wait-for-empty")
	if strings.TrimSpace(r.stdout) != "" || !strings.Contains(r.stderr, "Received 0 replies in") {
		t.Fatalf("an answer that is only the end marker:\n%s", r)
	}
	s.fails(t, []string{"--wait-for-empty needs --replies"}, "req", "svc.list", "x", "--wait-for-empty")
}
