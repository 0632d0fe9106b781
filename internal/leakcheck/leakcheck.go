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

// stacks returns the stacks of all goroutines created by natsio code,
// excluding those created by this package itself.
func stacks() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
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

// Snapshot returns how many goroutines created by natsio code are running.
func Snapshot() int { return len(stacks()) }

// Wait polls until at most before goroutines created by natsio code are
// running, and fails t with the surviving stacks if that has not happened
// within the given time.
func Wait(t testing.TB, before int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	delay := time.Millisecond
	for {
		s := stacks()
		if len(s) <= before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("leakcheck: %d natsio goroutines still running, %d before:\n\n%s",
				len(s), before, strings.Join(s, "\n\n"))
		}
		time.Sleep(delay)
		if delay < 20*time.Millisecond {
			delay *= 2
		}
	}
}
