package chaos

import (
	"os"
	"runtime"
	"strings"
	"time"
)

// modulePrefix marks the goroutines the leak check counts: those whose
// "created by" frame is code of this module (the client packages, the
// harness and the test helpers). The embedded nats-server shares the
// process, so a raw runtime.NumGoroutine would be noise.
const modulePrefix = "github.com/natsio/natsio/"

// moduleGoroutines returns the goroutines created by code of this module,
// as stack dumps.
func moduleGoroutines() []string {
	var out []string
	for _, g := range strings.Split(allStacks(), "\n\n") {
		for _, line := range strings.Split(g, "\n") {
			if strings.HasPrefix(line, "created by ") && strings.Contains(line, modulePrefix) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// waitGoroutinesGone polls up to d until no goroutine of the module is left;
// it returns the survivors.
func waitGoroutinesGone(d time.Duration) []string {
	deadline := time.Now().Add(d)
	for {
		g := moduleGoroutines()
		if len(g) == 0 || time.Now().After(deadline) {
			return g
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// openFDs counts the process's open file descriptors (Linux; -1 elsewhere).
func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents) - 1 // the directory being read
}

// waitFDs polls up to d until at most base descriptors are open; it returns
// the last count.
func waitFDs(base int, d time.Duration) int {
	deadline := time.Now().Add(d)
	for {
		n := openFDs()
		if n <= base || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// listFDs describes the open descriptors, for a failure report.
func listFDs() string {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, e := range ents {
		target, _ := os.Readlink("/proc/self/fd/" + e.Name())
		b.WriteString("  " + e.Name() + " → " + target + "\n")
	}
	return b.String()
}

// heapInUse returns HeapInuse after a full collection.
func heapInUse() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}
