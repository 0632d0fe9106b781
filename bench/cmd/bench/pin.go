package main

// Pinned mode (-pin, Linux): the server runs on the last CPU this program
// may use and every client child on the others, so that on a 2-core
// machine each has a core of its own and the report can show which one is
// the limit: a server at about 100 % of its core (srv core %) is.
//
// Each process is confined from its first instruction: it is forked from
// a thread of this program whose affinity is set to its CPUs
// (harness.StartOn), and the threads its Go runtime creates inherit that
// affinity. Go sets each process's GOMAXPROCS from the CPUs it may use:
// 1 for each on a 2-core machine. This program itself stays free; it
// waits while a timed section runs. After each run (each block in paired
// mode) the affinity of every thread of the server and of the client is
// read back and checked: a thread on the wrong CPUs fails the run.

import (
	"fmt"
	"os"
	"runtime"

	"github.com/natsio/natsio/bench/internal/harness"
)

// reportAffinity records, in a child of a pinned run, the CPUs its
// threads may run on and its GOMAXPROCS. It runs as the child ends, when
// every thread of the run exists.
func reportAffinity(res *harness.Result) {
	cpus, err := harness.ThreadCPUs(os.Getpid())
	if err != nil {
		if res.Err == "" {
			res.Err = "pinning: " + err.Error()
		}
		return
	}
	res.CliAffinity = cpus.String()
	res.GOMAXPROCS = runtime.GOMAXPROCS(0)
}

// checkPinned reads the CPUs the server's threads may run on into srvAff,
// and checks them and the client's (cli: a CPU list) against the plan.
func checkPinned(c config, srvPID int, srvAff *string, cli string) error {
	cpus, err := harness.ThreadCPUs(srvPID)
	if err != nil {
		return fmt.Errorf("pinning: the server's threads: %w", err)
	}
	*srvAff = cpus.String()
	if want := c.srvCPUs.String(); *srvAff != want {
		return fmt.Errorf("pinning: the server's threads may run on CPU %s, want %s", *srvAff, want)
	}
	if want := c.cliCPUs.String(); cli != want {
		return fmt.Errorf("pinning: the client's threads may run on CPU %q, want %s", cli, want)
	}
	return nil
}

// pinHeader is the report's line that says the run is pinned, and where.
// A GOMAXPROCS of 0 is unknown and left out; each is what names.
func pinHeader(c config, srvProcs, cliProcs int, each string) string {
	procs := func(n int) string {
		if n == 0 {
			return ""
		}
		return fmt.Sprintf(" (GOMAXPROCS %d)", n)
	}
	return fmt.Sprintf("pinned: nats-server on CPU %s%s, client children on CPU %s%s; every thread of both checked after each %s",
		c.srvCPUs, procs(srvProcs), c.cliCPUs, procs(cliProcs), each)
}

// childProcs is the GOMAXPROCS the client children reported (0: none did).
func childProcs(results []harness.Result) int {
	for _, r := range results {
		if r.GOMAXPROCS > 0 {
			return r.GOMAXPROCS
		}
	}
	return 0
}
