package main

// End-to-end tests: the natsio binary is built once, each test starts
// `natsio server` on a free port with its own store, and drives the CLI as a
// person would, checking outputs, exit codes and that no Go panic trace
// ever reaches the terminal.

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// binPath is the natsio binary built by TestMain.
var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "natsio-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: temp dir:", err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "natsio")
	build := exec.Command("go", "build", "-o", binPath, ".")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: building natsio: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	testConfigHome = filepath.Join(dir, "config")
	code := m.Run()
	stopShared()
	os.RemoveAll(dir)
	os.Exit(code)
}

// syncBuf is an output buffer that can be waited on.
type syncBuf struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func newSyncBuf() *syncBuf { return &syncBuf{changed: make(chan struct{})} }

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	close(s.changed)
	s.changed = make(chan struct{})
	return n, err
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until the buffer contains substr, up to timeout.
func (s *syncBuf) waitFor(substr string, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		found := strings.Contains(s.b.String(), substr)
		ch := s.changed
		s.mu.Unlock()
		if found {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// result is a finished CLI run.
type result struct {
	args   []string
	stdout string
	stderr string
	code   int
}

func (r result) String() string {
	return fmt.Sprintf("natsio %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// proc is a CLI process running in the background.
type proc struct {
	args   []string
	cmd    *exec.Cmd
	stdout *syncBuf
	stderr *syncBuf
	done   chan struct{}
	code   int
}

// startProc starts natsio with args (and stdin, when not nil) and kills it
// at the end of the test if it is still running.
func startProc(t *testing.T, stdin io.Reader, args ...string) *proc {
	t.Helper()
	return startProcEnv(t, stdin, nil, args...)
}

// testConfigHome is the XDG_CONFIG_HOME of every CLI run that does not set
// its own: an empty directory, so that the contexts of the user running
// the tests are never read.
var testConfigHome string

// startProcEnv is startProc with extra environment variables (KEY=VALUE)
// set after the test defaults.
func startProcEnv(t *testing.T, stdin io.Reader, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{args: args, stdout: newSyncBuf(), stderr: newSyncBuf(), done: make(chan struct{})}
	p.cmd = exec.Command(binPath, args...)
	p.cmd.Stdin = stdin
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	// The NATS_* variables and contexts of the environment running the
	// tests must not change what the CLI connects to.
	p.cmd.Env = append(os.Environ(), "NATS_URL=", "NATS_USER=", "NATS_PASSWORD=", "NATS_TOKEN=", "NATS_CREDS=",
		"NATS_NKEY=", "NATS_CERT=", "NATS_KEY=", "NATS_CA=", "NATS_TIMEOUT=", "NATS_CONTEXT=",
		"XDG_CONFIG_HOME="+testConfigHome)
	p.cmd.Env = append(p.cmd.Env, env...)
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting natsio %v: %v", args, err)
	}
	go func() {
		err := p.cmd.Wait()
		p.code = 0
		if ee, ok := err.(*exec.ExitError); ok {
			p.code = ee.ExitCode()
		} else if err != nil {
			p.code = -1
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits for the process to exit and returns its result.
func (p *proc) wait(t *testing.T, timeout time.Duration) result {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("natsio %v did not exit within %v\nstdout:\n%s\nstderr:\n%s", p.args, timeout, p.stdout, p.stderr)
	}
	r := result{args: p.args, stdout: p.stdout.String(), stderr: p.stderr.String(), code: p.code}
	checkNoPanic(t, r)
	return r
}

// waitStderr waits for substr on the process's stderr.
func (p *proc) waitStderr(t *testing.T, substr string) {
	t.Helper()
	if !p.stderr.waitFor(substr, 20*time.Second) {
		t.Fatalf("natsio %v: %q not printed on stderr within 20s\nstdout:\n%s\nstderr:\n%s", p.args, substr, p.stdout, p.stderr)
	}
}

// waitStdout waits for substr on the process's stdout.
func (p *proc) waitStdout(t *testing.T, substr string) {
	t.Helper()
	if !p.stdout.waitFor(substr, 20*time.Second) {
		t.Fatalf("natsio %v: %q not printed on stdout within 20s\nstdout:\n%s\nstderr:\n%s", p.args, substr, p.stdout, p.stderr)
	}
}

// checkNoPanic fails the test when output shows a Go panic or a goroutine
// dump.
func checkNoPanic(t *testing.T, r result) {
	t.Helper()
	for _, s := range []string{r.stdout, r.stderr} {
		if strings.Contains(s, "panic:") || strings.Contains(s, "goroutine ") {
			t.Fatalf("panic trace in output:\n%s", r)
		}
	}
}

// runCLI runs natsio to completion.
func runCLI(t *testing.T, args ...string) result {
	t.Helper()
	return startProc(t, nil, args...).wait(t, 60*time.Second)
}

// runIn runs natsio with stdin.
func runIn(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return startProc(t, strings.NewReader(stdin), args...).wait(t, 60*time.Second)
}

// ok runs natsio and fails the test unless it succeeds.
func ok(t *testing.T, args ...string) result {
	t.Helper()
	r := runCLI(t, args...)
	if r.code != 0 {
		t.Fatalf("command failed:\n%s", r)
	}
	return r
}

// fails runs natsio and checks it fails with exit code ≠ 0 and stderr
// containing every one of want.
func fails(t *testing.T, want []string, args ...string) result {
	t.Helper()
	r := runCLI(t, args...)
	if r.code == 0 {
		t.Fatalf("command succeeded, want failure:\n%s", r)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Fatalf("stderr lacks %q:\n%s", w, r)
		}
	}
	if !strings.HasPrefix(r.stderr, "natsio: ") {
		t.Fatalf("error does not start with \"natsio: \":\n%s", r)
	}
	return r
}

// freePort returns a TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// testServer is a running `natsio server`.
type testServer struct {
	url  string
	proc *proc
}

var urlRE = regexp.MustCompile(`nats://[0-9.]+:[0-9]+`)

// startServer starts `natsio server` on a free port with a fresh store and
// waits until it printed its URL. The server is stopped with SIGINT at the
// end of the test (killed if it does not stop).
func startServer(t *testing.T, extra ...string) *testServer {
	t.Helper()
	store := t.TempDir()
	port := freePort(t)
	p := startProc(t, nil, append([]string{"server", "--port", strconv.Itoa(port), "--store", store}, extra...)...)
	t.Cleanup(func() { stopServer(p) }) // runs before startProc's kill
	if !p.stdout.waitFor("nats://", 30*time.Second) {
		t.Fatalf("natsio server did not print its URL within 30s\nstdout:\n%s\nstderr:\n%s", p.stdout, p.stderr)
	}
	u := urlRE.FindString(p.stdout.String())
	if u != fmt.Sprintf("nats://127.0.0.1:%d", port) {
		t.Fatalf("server URL %q, want port %d\n%s", u, port, p.stdout)
	}
	return &testServer{url: u, proc: p}
}

func stopServer(p *proc) {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// args prefixes args with the server's URL.
func (s *testServer) args(args ...string) []string {
	return append([]string{"--server", s.url}, args...)
}

func (s *testServer) ok(t *testing.T, args ...string) result {
	t.Helper()
	return ok(t, s.args(args...)...)
}

func (s *testServer) fails(t *testing.T, want []string, args ...string) result {
	t.Helper()
	return fails(t, want, s.args(args...)...)
}

func (s *testServer) start(t *testing.T, args ...string) *proc {
	t.Helper()
	return startProc(t, nil, s.args(args...)...)
}

func contains(t *testing.T, r result, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(r.stdout, w) {
			t.Fatalf("stdout lacks %q:\n%s", w, r)
		}
	}
}

func decode[T any](t *testing.T, r result) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("stdout is not the expected JSON: %v\n%s", err, r)
	}
	return v
}

func TestServerStopsCleanlyOnInterrupt(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.ok(t, "stream", "add", "KEEP", "--subjects", "keep")
	s.proc.cmd.Process.Signal(syscall.SIGINT)
	r := s.proc.wait(t, 20*time.Second)
	if r.code != 0 || !strings.Contains(r.stderr, "stopped") {
		t.Fatalf("server did not stop cleanly:\n%s", r)
	}
}

func TestServerPortInUse(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	fails(t, []string{"cannot listen", "--port"}, "server", "--port", port, "--store", t.TempDir())
}

func TestPubSub(t *testing.T) {
	t.Parallel()
	s := startServer(t)

	sub := s.start(t, "sub", "orders.>", "--count", "3")
	sub.waitStderr(t, "Listening on")
	s.ok(t, "pub", "orders.new", "hello {{Count}}", "--count", "2", "--header", "X-Id:{{Count}}", "-H", "Source:cli")
	r := runIn(t, "from stdin", s.args("pub", "orders.stdin")...)
	if r.code != 0 {
		t.Fatalf("pub from stdin failed:\n%s", r)
	}
	r = sub.wait(t, 20*time.Second)
	if r.code != 0 {
		t.Fatalf("sub failed:\n%s", r)
	}
	contains(t, r, `Received on "orders.new"`, "hello 1", "hello 2", "X-Id: 1", "X-Id: 2", "Source: cli",
		`Received on "orders.stdin"`, "from stdin")

	// --raw prints bodies only; --json one object per message; a queue
	// subscriber gets its message.
	raw := s.start(t, "sub", "raw.x", "--count", "1", "--raw", "--queue", "q1")
	raw.waitStderr(t, "Listening on")
	js := s.start(t, "sub", "raw.x", "--count", "1", "--json")
	js.waitStderr(t, "Listening on")
	s.ok(t, "pub", "raw.x", "body only", "--header", "K:V")
	if r := raw.wait(t, 20*time.Second); r.code != 0 || r.stdout != "body only\n" {
		t.Fatalf("--raw output:\n%s", r)
	}
	r = js.wait(t, 20*time.Second)
	m := decode[jsonMsg](t, r)
	if m.Subject != "raw.x" || m.Data == nil || *m.Data != "body only" || m.Headers["K"][0] != "V" {
		t.Fatalf("--json message: %+v\n%s", m, r)
	}

	// Ctrl-C ends a subscription cleanly.
	idle := s.start(t, "sub", "idle.>")
	idle.waitStderr(t, "Listening on")
	idle.cmd.Process.Signal(syscall.SIGINT)
	if r := idle.wait(t, 20*time.Second); r.code != 0 {
		t.Fatalf("sub after Ctrl-C:\n%s", r)
	}
}

func TestRequestReply(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	rep := s.start(t, "reply", "svc.echo", "pong #{{Count}}: {{Request}}", "--count", "2")
	rep.waitStderr(t, "Listening on")
	r := s.ok(t, "req", "svc.echo", "ping")
	if r.stdout != "pong #1: ping\n" {
		t.Fatalf("reply body:\n%s", r)
	}
	r = s.ok(t, "req", "svc.echo", "again", "--json")
	if m := decode[jsonMsg](t, r); m.Data == nil || *m.Data != "pong #2: again" {
		t.Fatalf("--json reply: %+v", m)
	}
	if r := rep.wait(t, 20*time.Second); r.code != 0 || !strings.Contains(r.stdout, "ping") {
		t.Fatalf("reply output:\n%s", r)
	}
	s.fails(t, []string{`no responders on "svc.echo"`, "natsio reply"}, "req", "svc.echo", "nobody")
}

func TestStreamLifecycle(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	r := s.ok(t, "stream", "add", "ORDERS", "--subjects", "orders.>", "--max-age", "1d", "--dupe-window", "1m")
	contains(t, r, "Stream ORDERS created", "orders.>", "1d")

	r = s.ok(t, "pub", "--js", "orders.new", "first", "--header", "Trace:1")
	contains(t, r, "stream ORDERS, sequence 1")
	s.ok(t, "pub", "orders.new", "second")

	si := decode[struct {
		Config struct {
			Subjects []string `json:"subjects"`
			MaxMsgs  int64    `json:"max_msgs"`
		} `json:"config"`
		State struct {
			Msgs uint64 `json:"messages"`
		} `json:"state"`
	}](t, s.ok(t, "stream", "info", "ORDERS", "--json"))
	if si.State.Msgs != 2 {
		t.Fatalf("stream holds %d messages, want 2", si.State.Msgs)
	}

	if r := s.ok(t, "stream", "get", "ORDERS", "1", "--raw"); r.stdout != "first" {
		t.Fatalf("get --raw:\n%s", r)
	}
	r = s.ok(t, "stream", "get", "ORDERS", "1")
	contains(t, r, "ORDERS#1", "orders.new", "Trace: 1", "first")
	r = s.ok(t, "stream", "get", "ORDERS", "--last-for", "orders.new")
	contains(t, r, "ORDERS#2", "second")

	r = s.ok(t, "stream", "ls")
	contains(t, r, "NAME", "ORDERS", "orders.>")

	// edit is read-modify-write: the subjects stay.
	s.ok(t, "stream", "edit", "ORDERS", "--max-msgs", "100")
	si2 := decode[struct {
		Config struct {
			Subjects []string `json:"subjects"`
			MaxMsgs  int64    `json:"max_msgs"`
		} `json:"config"`
	}](t, s.ok(t, "stream", "info", "ORDERS", "--json"))
	if si2.Config.MaxMsgs != 100 || len(si2.Config.Subjects) != 1 || si2.Config.Subjects[0] != "orders.>" {
		t.Fatalf("after edit: %+v", si2.Config)
	}

	r = s.ok(t, "stream", "purge", "ORDERS", "--force")
	contains(t, r, "Purged 2 messages")
	r = s.ok(t, "stream", "info", "ORDERS")
	contains(t, r, "Messages: 0")

	s.ok(t, "stream", "rm", "ORDERS", "--force")
	s.fails(t, []string{`stream "ORDERS" not found`, "natsio stream ls"}, "stream", "info", "ORDERS")
}

func TestConsumerNextAck(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.ok(t, "stream", "add", "JOBS", "--subjects", "jobs.*")
	s.ok(t, "pub", "--js", "jobs.a", "job {{Count}}", "--count", "2")
	r := s.ok(t, "consumer", "add", "JOBS", "worker", "--ack", "explicit")
	contains(t, r, "Consumer JOBS > worker created", "explicit")

	r = s.ok(t, "consumer", "next", "JOBS", "worker", "--ack")
	contains(t, r, "job 1", "stream seq 1", "Acknowledged")
	ci := decode[struct {
		NumAckPending int `json:"num_ack_pending"`
		NumPending    int `json:"num_pending"`
		AckFloor      struct {
			Stream uint64 `json:"stream_seq"`
		} `json:"ack_floor"`
	}](t, s.ok(t, "consumer", "info", "JOBS", "worker", "--json"))
	if ci.NumAckPending != 0 || ci.AckFloor.Stream != 1 || ci.NumPending != 1 {
		t.Fatalf("after next --ack: %+v", ci)
	}

	r = s.ok(t, "consumer", "next", "JOBS", "worker", "--ack", "--raw")
	if r.stdout != "job 2\n" {
		t.Fatalf("next --raw:\n%s", r)
	}
	s.fails(t, []string{"no message from consumer JOBS > worker"}, "consumer", "next", "JOBS", "worker", "--wait", "300ms")

	r = s.ok(t, "consumer", "ls", "JOBS")
	contains(t, r, "worker", "explicit")
	s.ok(t, "consumer", "rm", "JOBS", "worker", "--force")
	s.fails(t, []string{`consumer "JOBS > worker" not found`}, "consumer", "info", "JOBS", "worker")
	s.fails(t, []string{`stream "NOPE" not found`}, "consumer", "next", "NOPE", "worker")
}

func TestKV(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.ok(t, "kv", "add", "cfg", "--history", "5")
	r := s.ok(t, "kv", "put", "cfg", "color", "blue")
	contains(t, r, "revision 1")
	if r := s.ok(t, "kv", "get", "cfg", "color", "--raw"); r.stdout != "blue" {
		t.Fatalf("kv get --raw:\n%s", r)
	}

	w := s.start(t, "kv", "watch", "cfg", "--count", "2")
	w.waitStderr(t, "initial values done")
	w.waitStdout(t, "blue")
	if r := runIn(t, "red", s.args("kv", "put", "cfg", "color")...); r.code != 0 {
		t.Fatalf("kv put from stdin:\n%s", r)
	}
	r = w.wait(t, 20*time.Second)
	if r.code != 0 {
		t.Fatalf("kv watch:\n%s", r)
	}
	contains(t, r, "PUT cfg > color (revision 1): blue", "PUT cfg > color (revision 2): red")

	r = s.ok(t, "kv", "history", "cfg", "color")
	contains(t, r, "blue", "red")
	r = s.ok(t, "kv", "ls", "cfg")
	contains(t, r, "color")
	r = s.ok(t, "kv", "ls")
	contains(t, r, "cfg")
	s.ok(t, "kv", "del", "cfg", "color")
	s.fails(t, []string{`key "color" was deleted`}, "kv", "get", "cfg", "color")
	s.fails(t, []string{`bucket "nope" not found`}, "kv", "get", "nope", "k")
	s.ok(t, "kv", "rm", "cfg", "--force")
	s.fails(t, []string{`bucket "cfg" not found`}, "kv", "ls", "cfg")
}

func TestBench(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	r := s.ok(t, "bench", "pub", "--msgs", "2000", "--size", "64", "--pubs", "2", "--subs", "1")
	contains(t, r, "publishers", "subscribers", "MSGS/S", "MiB/S")
	r = s.ok(t, "bench", "sub", "--msgs", "1000")
	contains(t, r, "subscribers", "1,000")
	r = s.ok(t, "bench", "req", "--msgs", "200", "--pubs", "2")
	contains(t, r, "Latency (request to reply", "P99")
	r = s.ok(t, "bench", "js", "--msgs", "300", "--async", "50", "--storage", "memory")
	contains(t, r, "publish to ack", "P50")

	rep := decode[benchReport](t, s.ok(t, "bench", "js", "--msgs", "100", "--json"))
	if rep.Stats[0].Msgs != 100 || rep.Latency == nil || rep.Latency.Count != 100 {
		t.Fatalf("bench js --json: %+v", rep)
	}
	// The benchmark streams were removed.
	if r := s.ok(t, "stream", "ls", "--names"); strings.Contains(r.stdout, "NATSIO_BENCH") {
		t.Fatalf("benchmark stream left behind:\n%s", r)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	// Unknown stream.
	s.fails(t, []string{`stream "NOPE" not found`, "hint:"}, "stream", "info", "NOPE")
	s.fails(t, []string{`stream "NOPE" not found`}, "stream", "get", "NOPE", "1")
	// Invalid subjects.
	s.fails(t, []string{`invalid subject "bad subject"`}, "pub", "bad subject", "x")
	s.fails(t, []string{`invalid subject "a..b"`}, "sub", "a..b")
	s.fails(t, []string{"wildcards"}, "pub", "orders.*", "x")
	s.fails(t, []string{"invalid stream name"}, "stream", "add", "a.b")
	s.fails(t, []string{"no stream"}, "pub", "--js", "nostream.here", "x")

	// Unreachable server.
	dead := fmt.Sprintf("nats://127.0.0.1:%d", freePort(t))
	r := fails(t, []string{"cannot connect to " + dead, "natsio server"}, "--server", dead, "pub", "x", "y")
	if r.code != exitError {
		t.Fatalf("exit code %d, want %d", r.code, exitError)
	}
	fails(t, []string{"cannot connect"}, "--server", dead, "stream", "ls")

	// Malformed flags and arguments: usage errors, exit code 2.
	for _, args := range [][]string{
		{"pub", "x", "y", "--count", "abc"},
		{"--timeout", "soon", "stream", "ls"},
		{"stream", "add", "S", "--max-age", "3x"},
		{"stream", "add", "S", "--storage", "tape"},
		{"pub", "x", "y", "--no-such-flag"},
		{"stream", "add"},
		{"no-such-command"},
		{"stream", "no-such-subcommand"},
		{"pub", "x", "--header", "no-colon", "y"},
	} {
		r := fails(t, []string{"hint:", "--help"}, s.args(args...)...)
		if r.code != exitUsage {
			t.Fatalf("exit code %d, want %d:\n%s", r.code, exitUsage, r)
		}
	}
}

func TestAuthFailure(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--token", "s3cret")
	s.ok(t, "--token", "s3cret", "pub", "x", "y")
	for _, args := range [][]string{
		{"pub", "x", "y"},
		{"--token", "wrong", "stream", "ls"},
		{"--user", "me", "--password", "nope", "sub", "x"},
	} {
		r := s.fails(t, []string{"authorization failed", "--token"}, args...)
		if strings.Contains(r.stderr, "s3cret") || strings.Contains(r.stderr, "nope") {
			t.Fatalf("credentials in the error:\n%s", r)
		}
	}
}

// TestHelpHasExamples checks every command has help with examples.
func TestHelpHasExamples(t *testing.T) {
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Example == "" {
			t.Errorf("%q has no examples", c.CommandPath())
		}
		if c.Short == "" {
			t.Errorf("%q has no short help", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(a.rootCmd())

	r := ok(t, "stream", "add", "--help")
	contains(t, r, "Examples:", "--subjects", "--server")
}

func TestPanicIsOneLine(t *testing.T) {
	var out, errb bytes.Buffer
	a := &app{stdout: &out, stderr: &errb}
	code := a.report(panicError{"boom"})
	if code != exitInternal || strings.Count(errb.String(), "\n") != 1 || strings.Contains(errb.String(), "goroutine") {
		t.Fatalf("panic report (exit %d):\n%s", code, errb.String())
	}
}

// Object store: put and get of a 50 MiB random file keep its SHA-256.
func TestObjectPutGetLargeFile(t *testing.T) {
	if !haveObjectStore() {
		t.Skip("objstore is not available in this build")
	}
	t.Parallel()
	s := startServer(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "big.bin")
	data := make([]byte, 50<<20)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, data, 0o600); err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(data)
	data = nil

	s.ok(t, "object", "add", "files")
	r := s.ok(t, "object", "put", "files", src, "--name", "big.bin")
	contains(t, r, "big.bin", "50")
	r = s.ok(t, "object", "info", "files", "big.bin")
	contains(t, r, "big.bin", "SHA-256")
	r = s.ok(t, "object", "ls", "files")
	contains(t, r, "big.bin")

	dst := filepath.Join(dir, "copy.bin")
	s.ok(t, "object", "get", "files", "big.bin", "--output", dst)
	got, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(got) != want {
		t.Fatal("the object read back has another SHA-256 than the file put")
	}

	s.ok(t, "object", "rm", "files", "big.bin", "--force")
	s.fails(t, []string{`"big.bin" not found`}, "object", "get", "files", "big.bin", "--output", filepath.Join(dir, "gone.bin"))
	s.fails(t, []string{`"nope" not found`}, "object", "ls", "nope")
}

// haveObjectStore reports whether the object command group is built in.
func haveObjectStore() bool {
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	for _, c := range a.rootCmd().Commands() {
		if c.Name() == "object" {
			return true
		}
	}
	return false
}
