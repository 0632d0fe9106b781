package harness

import (
	"runtime"
	"time"
)

// Sample is what one timed section cost.
type Sample struct {
	Wall   time.Duration
	CliCPU time.Duration // this process, user+sys
	SrvCPU time.Duration // the server process, user+sys (10 ms resolution)
	// Mallocs and AllocBytes are runtime.MemStats deltas (Mallocs,
	// TotalAlloc) for the whole process.
	Mallocs    uint64
	AllocBytes uint64
	// LiveHeap is the growth of the live heap over the section: HeapAlloc
	// after a collection that follows the section, minus HeapAlloc after
	// the one that precedes it. It is what the section left reachable (the
	// connections and subscriptions a scale scenario keeps; about 0
	// elsewhere), and can be negative.
	LiveHeap int64
	// MaxRSS is the process's peak resident set size so far, in bytes.
	MaxRSS int64
}

// Measure runs f as the timed section. Before it, the heap is collected so
// that garbage of the setup is not collected on f's time. The server's CPU
// is read from /proc/<srvPID>/stat when srvPID > 0. Reading the counters
// allocates nothing inside the measured window.
func Measure(srvPID int, f func() error) (Sample, error) {
	var s Sample
	runtime.GC()
	var srv0, srv1 time.Duration
	var srvErr error
	if srvPID > 0 {
		srv0, srvErr = ProcCPU(srvPID)
	}
	var m0, m1 runtime.MemStats
	cpu0 := SelfCPU()
	runtime.ReadMemStats(&m0)
	t0 := time.Now()

	err := f()

	t1 := time.Now()
	runtime.ReadMemStats(&m1)
	cpu1 := SelfCPU()
	if srvPID > 0 && srvErr == nil {
		srv1, srvErr = ProcCPU(srvPID)
	}

	s.Wall = t1.Sub(t0)
	s.CliCPU = cpu1 - cpu0
	if srvPID > 0 && srvErr == nil {
		s.SrvCPU = srv1 - srv0
	}
	s.Mallocs = m1.Mallocs - m0.Mallocs
	s.AllocBytes = m1.TotalAlloc - m0.TotalAlloc
	runtime.GC() // outside the window: what the section left reachable
	var m2 runtime.MemStats
	runtime.ReadMemStats(&m2)
	s.LiveHeap = int64(m2.HeapAlloc) - int64(m0.HeapAlloc)
	s.MaxRSS = SelfMaxRSS()
	if err == nil && srvErr != nil {
		err = srvErr
	}
	return s, err
}
