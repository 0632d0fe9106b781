package main

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// runPairBench runs the bench command in paired mode with args, two
// rounds of tiny blocks and a short warm-up, and returns its exit code and
// its standard output and error.
func runPairBench(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	args = append([]string{"-server", benchServer(t), "-rounds", "2", "-block", "300", "-warmup", "50"}, args...)
	return execBench(t, 2*time.Minute, args...)
}

// TestPairStreamingScenarios runs each streaming kind in paired mode for
// two clients: every block passes its checks, and the summary reports
// throughput, CPU per message and the per-round ratio, with no latency.
func TestPairStreamingScenarios(t *testing.T) {
	for _, c := range []struct{ pair, scenario, checked string }{
		{"natsio,raw", "pub.16", "the server's in_msgs grew by exactly the block"},
		{"natsio,natsgo", "pubsub.same.cb.16", "the server's in_msgs grew by exactly the block"},
		{"natsio,raw", "pubsub.sep.cb.16", "the server's in_msgs grew by exactly the block"},
		{"natsgo,raw", "jspub.async.mem.128", "the stream's last sequence grew by exactly the block"},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			code, out, log := runPairBench(t, "-pair", c.pair, "-scenarios", c.scenario)
			if code != 0 {
				t.Fatalf("exit status %d", code)
			}
			a, b, _ := strings.Cut(c.pair, ",")
			for _, want := range []string{
				c.scenario + ", 2 rounds (blocks alternated ABBA)",
				"msgs/s", "min–max", "cli-cpu ns/op", "srv-cpu ns/op", "srv cores",
				"\n" + a + " ", "\n" + b + " ",
				a + "/" + b + " per round: rate ×",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("the summary lacks %q", want)
				}
			}
			if strings.Contains(out, "p50") {
				t.Errorf("a streaming summary with a latency column")
			}
			if !strings.Contains(log, "each block checked: "+c.checked) {
				t.Errorf("the log does not say that each block is checked (%s)", c.checked)
			}
		})
	}
}

// TestPairLostMessageFailsTheRun injects a client that does one operation
// fewer in its first block than it reports: the block's check on the
// server must catch it and the command must exit non-zero, naming the
// block.
func TestPairLostMessageFailsTheRun(t *testing.T) {
	for _, c := range []struct{ scenario, says string }{
		{"pub.16", "the server received 299 messages, want 300"},
		{"pubsub.sep.cb.16", "the server received 299 messages, want 300"},
		{"jspub.async.mem.128", "(299 stored)"},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			code, out, log := runPairBench(t, "-fault", "drop", "-pair", "natsio,raw", "-scenarios", c.scenario)
			if code == 0 {
				t.Errorf("exit status 0 with a lost message")
			}
			if !strings.Contains(log, "natsio, round 0: block of 300 ") || !strings.Contains(log, c.says) {
				t.Errorf("the error does not name the block and what was lost (%q)", c.says)
			}
			if strings.Contains(out, "per round: rate") {
				t.Errorf("a summary printed for a run that lost a message")
			}
		})
	}
}

// TestPairStallsAreReported runs async publishes in paired mode with a
// window of one message and a 1 µs stall wait: the blocks stall, succeed,
// and the summary counts the stalls.
func TestPairStallsAreReported(t *testing.T) {
	code, out, _ := runPairBench(t, "-fault", "stall", "-pair", "natsio,natsgo", "-scenarios", "jspub.async.mem.128")
	if code != 0 {
		t.Fatalf("exit status %d when the window was full", code)
	}
	for _, n := range []string{"natsio", "natsgo"} {
		if !regexp.MustCompile(`(?m)^` + n + `: [1-9][0-9]* stalls \(`).MatchString(out) {
			t.Errorf("no stall note for %s", n)
		}
	}
}
