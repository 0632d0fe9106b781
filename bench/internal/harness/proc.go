package harness

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// clockTick is the unit of utime and stime in /proc/<pid>/stat: USER_HZ,
// which Linux fixes at 100 for user space whatever the kernel's HZ.
const clockTick = 10 * time.Millisecond

// ProcCPU returns the user+system CPU time consumed so far by process pid,
// read from /proc/<pid>/stat (10 ms resolution).
func ProcCPU(pid int) (time.Duration, error) {
	var buf [1024]byte
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	n, err := f.Read(buf[:])
	f.Close()
	if err != nil {
		return 0, err
	}
	return ParseProcStat(buf[:n])
}

// ParseProcStat extracts utime+stime from the contents of /proc/<pid>/stat.
// The command name (field 2) may hold spaces and parentheses, so fields are
// counted from the last ')'.
func ParseProcStat(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("harness: malformed /proc stat: no ')'")
	}
	// After ") " come field 3 (state), 4 (ppid), ... 14 (utime), 15 (stime).
	fields := bytes.Fields(stat[i+1:])
	const utimeIdx = 14 - 3
	if len(fields) <= utimeIdx+1 {
		return 0, fmt.Errorf("harness: malformed /proc stat: %d fields", len(fields))
	}
	ut, err1 := strconv.ParseUint(string(fields[utimeIdx]), 10, 64)
	st, err2 := strconv.ParseUint(string(fields[utimeIdx+1]), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("harness: malformed /proc stat: %w", err)
	}
	return time.Duration(ut+st) * clockTick, nil
}

// SelfCPU returns the user+system CPU time consumed so far by this process
// (all threads), from getrusage(RUSAGE_SELF).
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// SelfMaxRSS returns this process's peak resident set size in bytes (0 when
// it cannot be read).
func SelfMaxRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Maxrss) * 1024 // kilobytes on Linux
}

// LoadAvg returns the 1-minute load average from /proc/loadavg (0 when it
// cannot be read).
func LoadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(string(f[0]), 64)
	return v
}
