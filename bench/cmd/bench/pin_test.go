package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/bench/internal/harness"
)

// pinSplit returns the CPUs a pinned run puts the server and the clients
// on, or skips the test where -pin cannot run.
func pinSplit(t *testing.T) (server, clients string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("-pin is Linux only")
	}
	all, err := harness.SelfCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 2 {
		t.Skipf("-pin needs 2 CPUs; this process may run on %s", all)
	}
	return harness.CPUs{all[len(all)-1]}.String(), harness.CPUs(all[:len(all)-1]).String()
}

// TestPinnedRun runs one tiny scenario pinned: it passes, the report says
// where the server and the clients ran and has the core columns, and
// every JSON line is marked pinned and carries the CPUs that the child's
// threads and the server's threads could run on, read back after the run.
func TestPinnedRun(t *testing.T) {
	srvCPUs, cliCPUs := pinSplit(t)
	code, out, lines := runBench(t, "-pin", "-clients", "natsio,raw", "-scenarios", `^pub\.16$`)
	if code != 0 {
		t.Fatalf("exit status %d", code)
	}
	for _, want := range []string{
		"pinned: nats-server on CPU " + srvCPUs + " (GOMAXPROCS ", "client children on CPU " + cliCPUs + " (GOMAXPROCS ",
		"srv-cpu ns/op", "cli core %", "srv core %",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("%d JSON lines, want 2", len(lines))
	}
	for _, l := range lines {
		if l.Error != "" || !l.Pinned || l.ClientAffinity != cliCPUs || l.ServerAffinity != srvCPUs {
			t.Errorf("%s %s: error %q, pinned %v, client on CPU %q, server on CPU %q; want no error, pinned, client %s, server %s",
				l.Scenario, l.Client, l.Error, l.Pinned, l.ClientAffinity, l.ServerAffinity, cliCPUs, srvCPUs)
		}
		if l.SrvCores < 0 || l.CliCores <= 0 {
			t.Errorf("%s %s: cli cores %v, srv cores %v", l.Scenario, l.Client, l.CliCores, l.SrvCores)
		}
	}
}

// TestPinnedPair runs paired mode pinned: it passes, the summary has the
// core columns as percentages, and the JSON records the run as pinned
// with the CPUs of both clients' and the server's threads after each
// block.
func TestPinnedPair(t *testing.T) {
	srvCPUs, cliCPUs := pinSplit(t)
	out := filepath.Join(t.TempDir(), "pair.json")
	code, stdout, _ := runPairBench(t, "-pin", "-pair", "natsio,raw", "-scenarios", "pubsub.same.cb.16", "-out", out)
	if code != 0 {
		t.Fatalf("exit status %d", code)
	}
	for _, want := range []string{
		"pinned: nats-server on CPU " + srvCPUs, "client children on CPU " + cliCPUs,
		"srv-cpu ns/op", "cli core %", "srv core %", "natsio/raw per round: rate ×",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the summary lacks %q", want)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var o struct {
		Pinned     bool         `json:"pinned"`
		ServerCPUs string       `json:"server_cpus"`
		ClientCPUs string       `json:"client_cpus"`
		Blocks     []pairResult `json:"blocks"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	if !o.Pinned || o.ServerCPUs != srvCPUs || o.ClientCPUs != cliCPUs {
		t.Errorf("pinned %v, server_cpus %q, client_cpus %q; want true, %s, %s", o.Pinned, o.ServerCPUs, o.ClientCPUs, srvCPUs, cliCPUs)
	}
	if len(o.Blocks) != 4 {
		t.Fatalf("%d blocks, want 4", len(o.Blocks))
	}
	for _, bl := range o.Blocks {
		if bl.CliAffinity != cliCPUs || bl.SrvAffinity != srvCPUs {
			t.Errorf("%s round %d: client on CPU %q, server on CPU %q; want %s, %s", bl.Client, bl.Round, bl.CliAffinity, bl.SrvAffinity, cliCPUs, srvCPUs)
		}
	}
}

// TestPinRefusedOnOneCPU starts the bench command on one CPU: -pin must
// refuse to run, saying why, in normal and in paired mode.
func TestPinRefusedOnOneCPU(t *testing.T) {
	srvCPUs, _ := pinSplit(t)
	one, err := harness.ParseCPUs(srvCPUs)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-pin", "-scenarios", `^pub\.16$`},
		{"-pin", "-pair", "natsio,raw", "-scenarios", "pub.16"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"-server", benchServer(t), "-out", ""}, args...)...)
		cmd.Env = append(os.Environ(), "BENCH_TEST_MAIN=1")
		var se bytes.Buffer
		cmd.Stderr = &se
		err := harness.StartOn(cmd, one)
		if err == nil {
			err = cmd.Wait()
		}
		cancel()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Errorf("bench %v on one CPU: %v, want a non-zero exit", args, err)
		}
		if !strings.Contains(se.String(), "-pin needs at least 2 CPUs") {
			t.Errorf("bench %v on one CPU says %q", args, se.String())
		}
	}
}
