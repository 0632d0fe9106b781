package leakcheck_test

import (
	"runtime"
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

// parked waits in this package until release is closed.
func parked(entered chan<- struct{}, release <-chan struct{}) {
	close(entered)
	<-release
}

func TestInPackageCountsGoroutinesInThatPackage(t *testing.T) {
	const pkg = "internal/leakcheck_test"
	before := leakcheck.InPackage(pkg)
	entered, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() { parked(entered, release); close(done) }()
	<-entered
	if got := leakcheck.InPackage(pkg); got != before+1 {
		t.Fatalf("with one goroutine parked here: %d, want %d", got, before+1)
	}
	if got := leakcheck.InPackage("conn"); got != 0 {
		t.Fatalf("goroutines in conn: %d, want 0 (nothing here runs conn)", got)
	}
	close(release)
	<-done
	deadline := time.Now().Add(10 * time.Second)
	for leakcheck.InPackage(pkg) != before {
		if time.Now().After(deadline) {
			t.Fatalf("still %d after the goroutine returned, want %d", leakcheck.InPackage(pkg), before)
		}
		runtime.Gosched()
	}
}
