// Package leakcheck counts the goroutines started by natsio code, so that
// tests can assert that everything they started has ended.
package leakcheck

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

const creator = "created by github.com/natsio/natsio/"

// allStacks returns the stack of every goroutine.
func allStacks() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Split(string(buf[:n]), "\n\n")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// stacks returns the stacks of all goroutines created by natsio code,
// excluding those created by this package itself.
func stacks() []string {
	var out []string
	for _, g := range allStacks() {
		for _, line := range strings.Split(g, "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, creator) && !strings.HasPrefix(line, creator+"internal/leakcheck") {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// serverStacks returns the stacks of goroutines running nats-server code.
func serverStacks() []string {
	var out []string
	for _, g := range allStacks() {
		if strings.Contains(g, "nats-server/v2/server.") {
			out = append(out, g)
		}
	}
	return out
}

// Snapshot returns how many goroutines created by natsio code are running.
func Snapshot() int { return len(stacks()) }

// Wait polls until at most before goroutines created by natsio code are
// running, and fails t with the surviving stacks if that has not happened
// within the given time.
func Wait(t testing.TB, before int, within time.Duration) {
	t.Helper()
	wait(t, "natsio", stacks, before, within)
}

// ServerSnapshot returns how many goroutines run nats-server code (an
// embedded server's).
func ServerSnapshot() int { return len(serverStacks()) }

// WaitServer is Wait for the goroutines running nats-server code: it checks
// that embedded servers have stopped.
func WaitServer(t testing.TB, before int, within time.Duration) {
	t.Helper()
	wait(t, "nats-server", serverStacks, before, within)
}

func wait(t testing.TB, what string, list func() []string, before int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	delay := time.Millisecond
	for {
		s := list()
		if len(s) <= before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("leakcheck: %d %s goroutines still running, %d before:\n\n%s",
				len(s), what, before, strings.Join(s, "\n\n"))
		}
		time.Sleep(delay)
		if delay < 20*time.Millisecond {
			delay *= 2
		}
	}
}

// InPackage counts the goroutines with code of natsio's package pkg
// ("conn", "extra") anywhere on their stack, whoever created them.
func InPackage(pkg string) int {
	mark := "natsio/natsio/" + pkg + "."
	n := 0
	for _, g := range allStacks() {
		if strings.Contains(g, mark) {
			n++
		}
	}
	return n
}
