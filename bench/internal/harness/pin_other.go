//go:build !linux

package harness

import (
	"errors"
	"os/exec"
)

// errNoAffinity is what the affinity functions return where Linux's
// sched_setaffinity is not available.
var errNoAffinity = errors.New("-pin is Linux only (it sets CPU affinity with sched_setaffinity)")

// StartOn starts cmd with its process confined to cpus: Linux only.
func StartOn(cmd *exec.Cmd, cpus CPUs) error { return errNoAffinity }

// SelfCPUs returns the CPUs this process may run on: Linux only.
func SelfCPUs() (CPUs, error) { return nil, errNoAffinity }

// ThreadCPUs returns the CPUs the threads of process pid may run on: Linux only.
func ThreadCPUs(pid int) (CPUs, error) { return nil, errNoAffinity }
