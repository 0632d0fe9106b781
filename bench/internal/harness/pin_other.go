//go:build !linux

package harness

import "os/exec"

// StartOn starts cmd with its process confined to cpus: Linux only.
func StartOn(cmd *exec.Cmd, cpus CPUs) error { return errNoAffinity }

// SelfCPUs returns the CPUs this process may run on: Linux only.
func SelfCPUs() (CPUs, error) { return nil, errNoAffinity }

// ThreadCPUs returns the CPUs the threads of process pid may run on: Linux only.
func ThreadCPUs(pid int) (CPUs, error) { return nil, errNoAffinity }
