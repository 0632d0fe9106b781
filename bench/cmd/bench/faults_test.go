package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/bench/internal/harness"
)

// TestMain lets the test binary stand in for the bench command: with
// BENCH_TEST_MAIN=1 it runs main, as parent and as each child process, so
// that the tests below check the exit status that `make bench` sees.
func TestMain(m *testing.M) {
	if os.Getenv("BENCH_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	code := m.Run()
	if serverBin != "" {
		os.RemoveAll(filepath.Dir(serverBin))
	}
	os.Exit(code)
}

var (
	serverOnce sync.Once
	serverBin  string
	serverErr  error
)

// benchServer builds cmd/benchserver once for the tests of this file.
func benchServer(t *testing.T) string {
	t.Helper()
	serverOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		dir, err := os.MkdirTemp("", "natsio-bench-test-")
		if err != nil {
			serverErr = err
			return
		}
		mod, err := harness.ModuleDir(ctx)
		if err == nil {
			serverBin, err = harness.BuildServer(ctx, mod, dir)
		}
		if err != nil {
			os.RemoveAll(dir)
		}
		serverErr = err
	})
	if serverErr != nil {
		t.Fatal(serverErr)
	}
	return serverBin
}

// runBench runs the bench command with args (short counts added) and
// returns its exit code, its table output and its JSON lines.
func runBench(t *testing.T, args ...string) (code int, stdout string, lines []harness.Line) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "latest.json")
	args = append([]string{"-server", benchServer(t), "-reps", "1", "-count", "300", "-warmup", "50", "-out", out}, args...)
	code, stdout, _ = execBench(t, 3*time.Minute, args...)
	f, err := os.Open(strings.TrimSuffix(out, ".json") + ".jsonl")
	if err != nil {
		t.Fatalf("no JSON lines: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l harness.Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("bad JSON line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	if _, err := os.Stat(strings.TrimSuffix(out, ".json") + ".svg"); err != nil {
		t.Errorf("no chart: %v", err)
	}
	if !strings.Contains(stdout, "chart: ") {
		t.Errorf("the output does not name the chart")
	}
	return code, stdout, lines
}

// execBench runs the bench command (this test binary, as main) with args,
// limited to timeout, and returns its exit code and its standard output
// and error. A failure to run it at all fails the test.
func execBench(t *testing.T, timeout time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "BENCH_TEST_MAIN=1")
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("bench %v: %v\n%s", args, err, se.String())
	}
	t.Logf("bench %s: exit %d\n%s\n%s", strings.Join(args, " "), code, so.String(), se.String())
	return code, so.String(), se.String()
}

// TestBrokenCorrectnessCheckFailsTheRun injects a client that does one
// operation fewer than it reports: for core publish the server's in_msgs
// check and for async JetStream publish the stream check must catch it,
// print the rows as errors, and make the command exit non-zero.
func TestBrokenCorrectnessCheckFailsTheRun(t *testing.T) {
	code, out, lines := runBench(t, "-fault", "drop", "-clients", "natsio,natsgo",
		"-scenarios", `^(pub\.16|jspub\.async\.mem\.128)$`)
	if code == 0 {
		t.Errorf("exit status 0 with a broken correctness check")
	}
	if n := strings.Count(out, "ERROR (1 of 1 reps failed)"); n != 4 {
		t.Errorf("%d error rows in the table, want 4", n)
	}
	if len(lines) != 4 {
		t.Fatalf("%d JSON lines, want 4", len(lines))
	}
	for _, l := range lines {
		if l.Error == "" || l.Timeout {
			t.Errorf("%s %s: error %q timeout %v, want a failure", l.Scenario, l.Client, l.Error, l.Timeout)
		}
	}
}

// TestFullWindowStallsDoNotFailTheRun shrinks the async publish window to
// one message with a 1 µs stall wait, so that publishes find it full all
// the time: the run must wait, count the stalls, report them, and exit 0.
func TestFullWindowStallsDoNotFailTheRun(t *testing.T) {
	code, out, lines := runBench(t, "-fault", "stall", "-clients", "natsio,natsgo",
		"-scenarios", `^jspub\.async\.mem\.128$`)
	if code != 0 {
		t.Errorf("exit status %d when the window was full", code)
	}
	if len(lines) != 2 {
		t.Fatalf("%d JSON lines, want 2", len(lines))
	}
	for _, l := range lines {
		if l.Error != "" || l.Stalls == 0 || l.Msgs != 300 {
			t.Errorf("%s %s: error %q, %d stalls, %d msgs; want no error, stalls, 300 msgs", l.Scenario, l.Client, l.Error, l.Stalls, l.Msgs)
		}
		if !strings.Contains(out, "jspub.async.mem.128 "+l.Client+": ") || !strings.Contains(out, " stalls (") {
			t.Errorf("the output has no stall note for %s", l.Client)
		}
	}
}

// TestTimedOutRepetitionIsRecordedNotFailed gives every child no time at
// all: the row says TIMEOUT and the command still ends with its table and
// exits 0.
func TestTimedOutRepetitionIsRecordedNotFailed(t *testing.T) {
	code, out, lines := runBench(t, "-timeout", "1ns", "-clients", "natsio", "-scenarios", `^pub\.16$`)
	if code != 0 {
		t.Errorf("exit status %d for a timed-out repetition", code)
	}
	if !strings.Contains(out, "TIMEOUT (1 of 1 reps)") {
		t.Errorf("no TIMEOUT row")
	}
	if len(lines) != 1 || !lines[0].Timeout || lines[0].Error == "" {
		t.Errorf("JSON lines %+v, want one timed-out run", lines)
	}
}
