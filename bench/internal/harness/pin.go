package harness

import (
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// CPUs is a set of CPU numbers, sorted, without duplicates.
type CPUs []int

// String prints the set as the kernel's CPU lists do (Cpus_allowed_list,
// taskset -c): ranges and single CPUs separated by commas, as in "0-2,5".
func (c CPUs) String() string {
	var b strings.Builder
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(c[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(c[j]))
		}
		i = j + 1
	}
	return b.String()
}

// ParseCPUs reads a CPU list such as "0-2,5" (the format of String).
func ParseCPUs(s string) (CPUs, error) {
	var c CPUs
	for part := range strings.SplitSeq(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("harness: bad CPU list %q", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("harness: bad CPU list %q", s)
			}
		}
		for i := a; i <= b; i++ {
			c = append(c, i)
		}
	}
	slices.Sort(c)
	return slices.Compact(c), nil
}

// SplitCPUs divides the CPUs a run may use between the server and the
// clients: the server gets the last one, the clients the others.
func SplitCPUs(allowed CPUs) (server, clients CPUs, err error) {
	if len(allowed) < 2 {
		return nil, nil, fmt.Errorf("-pin needs at least 2 CPUs, one for the server and one for the clients; this process may run on %d (CPU %s)", len(allowed), allowed)
	}
	n := len(allowed) - 1
	return CPUs{allowed[n]}, slices.Clone(allowed[:n]), nil
}

// PinPlan splits the CPUs this process may run on (its affinity, which a
// surrounding taskset or cgroup may have narrowed) with SplitCPUs. It
// fails on systems without sched_setaffinity and with fewer than 2 CPUs.
func PinPlan() (server, clients CPUs, err error) {
	allowed, err := SelfCPUs()
	if err != nil {
		return nil, nil, err
	}
	return SplitCPUs(allowed)
}

// Start starts cmd; with cpus, every thread of the new process may run
// only on those CPUs, from its first instruction (StartOn).
func Start(cmd *exec.Cmd, cpus CPUs) error {
	if len(cpus) == 0 {
		return cmd.Start()
	}
	return StartOn(cmd, cpus)
}
