//go:build unix

package conn_test

import (
	"syscall"
	"testing"
	"time"
)

// reportCPU reports the CPU time this process (every thread, the
// collector's included; not the server's process) spent per operation
// since start, a figure that a busy machine disturbs less than the
// elapsed time.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
