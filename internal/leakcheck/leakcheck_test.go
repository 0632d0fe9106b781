package leakcheck_test

import (
	"testing"
	"time"

	"github.com/natsio/natsio/internal/leakcheck"
)

type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

func TestWaitPassesWithNothingRunning(t *testing.T) {
	before := leakcheck.Snapshot()
	leakcheck.Wait(t, before, time.Second)
}

func TestGoroutinesOfOtherCodeNotCounted(t *testing.T) {
	before := leakcheck.Snapshot()
	stop := make(chan struct{})
	defer close(stop)
	go func() { <-stop }() // created by this test package: natsio/.../leakcheck_test
	if got := leakcheck.Snapshot(); got != before {
		t.Fatalf("test-package goroutine counted: %d, before %d", got, before)
	}
	r := &recorder{TB: t}
	leakcheck.Wait(r, before, 10*time.Millisecond)
	if r.failed {
		t.Fatal("Wait failed though nothing of natsio is running")
	}
}
