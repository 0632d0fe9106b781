package harness

import (
	"errors"
	"io/fs"
	"math/bits"
	"os"
	"os/exec"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// StartOn starts cmd with its process confined to cpus.
//
// A thread's CPU affinity is inherited by the threads and processes it
// creates, and kept across exec. StartOn therefore narrows the affinity
// of one locked OS thread of this process and forks the child from it
// (os/exec forks from the calling thread): the child's first thread, and
// every thread the child's runtime creates later, are confined from the
// start. Setting the affinity of a child after it has started
// (sched_setaffinity on its pid) would reach only its main thread, not
// the threads its Go runtime has already created; `taskset -c` would do
// the same as this, through an external program.
//
// The locked thread is never unlocked: it exits with its goroutine, so its
// narrowed affinity never runs other goroutines of this process.
func StartOn(cmd *exec.Cmd, cpus CPUs) error {
	var set unix.CPUSet
	set.Zero()
	for _, c := range cpus {
		set.Set(c)
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			errc <- err
			return
		}
		errc <- cmd.Start()
	}()
	return <-errc
}

// SelfCPUs returns the CPUs this process may run on.
func SelfCPUs() (CPUs, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, err
	}
	return cpusOf(&set), nil
}

// ThreadCPUs returns the CPUs the threads of process pid may run on: the
// union of every thread's affinity, so that a single thread left free
// shows. The threads are listed from /proc/<pid>/task; one that exits
// while they are read is skipped.
func ThreadCPUs(pid int) (CPUs, error) {
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return nil, err
	}
	var union unix.CPUSet
	union.Zero()
	seen := 0
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &set); err != nil {
			if errors.Is(err, unix.ESRCH) || errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		for i := range len(set) {
			union[i] |= set[i]
		}
		seen++
	}
	if seen == 0 {
		return nil, errors.New("harness: no threads in /proc/" + strconv.Itoa(pid) + "/task")
	}
	return cpusOf(&union), nil
}

func cpusOf(set *unix.CPUSet) CPUs {
	var c CPUs
	for i := range len(set) * bits.UintSize {
		if set.IsSet(i) {
			c = append(c, i)
		}
	}
	return c
}
