package chaos

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"
)

// TestChaos runs every workload under the seeded fault schedule, first on a
// single server behind the fault proxy, then on a 3-node cluster, and judges
// the run with the oracle of RELIABILITY.md §d.4. SOAK_SECONDS scales it
// (make soak); without it a short, deterministic version runs.
func TestChaos(t *testing.T) {
	cfg := loadConfig(t)

	// Baselines, before anything of ours runs. The network poller is
	// started first: its descriptors live as long as the process.
	if l, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		l.Close()
	}
	fg := &figures{}
	fg.Resources.FDsBaseline = openFDs()
	fg.Resources.GoroutinesBaseline = len(moduleGoroutines())

	lag := newLagMeter()
	t.Cleanup(lag.close)
	rec := newRecorder(t, lag)
	t.Logf("chaos: %s (GOMAXPROCS %d)", cfg, runtime.GOMAXPROCS(0))

	wd := newWatchdog(t, rec, cfg.grace, lag)
	t.Cleanup(wd.close)
	live := &liveSet{}
	t.Cleanup(live.stopAll)
	var checks []*check
	var timelines []string
	var heapWarm uint64

	// Whatever happens, a failing run prints what is needed to replay
	// and understand it.
	reported := false
	report := func() {
		if reported || !t.Failed() {
			return
		}
		reported = true
		var b strings.Builder
		fmt.Fprintf(&b, "CHAOS FAILED — seed %d (replay with CHAOS_SEED=%d", cfg.seed, cfg.seed)
		if cfg.soak {
			fmt.Fprintf(&b, " SOAK_SECONDS=%d", cfg.seconds)
		}
		fmt.Fprintf(&b, ")\nfault timeline:\n%s", rec.timeline())
		b.WriteString("first anomalies:\n")
		for _, c := range checks {
			if c.Pass {
				continue
			}
			for i, a := range c.Anoms {
				if i == 10 {
					fmt.Fprintf(&b, "  [%d %s] … %d more\n", c.N, c.Phase, len(c.Anoms)-10)
					break
				}
				fmt.Fprintf(&b, "  [%d %s] %s\n", c.N, c.Phase, a)
			}
		}
		if len(timelines) > 0 {
			b.WriteString("timelines of the first anomalous IDs:\n")
			for _, tl := range timelines {
				b.WriteString("  " + tl + "\n")
			}
		}
		t.Log(b.String())
	}
	t.Cleanup(report)

	runPhase := func(ph *phase, plan []plannedFault, budget time.Duration) {
		t.Logf("%8s  %s phase: schedule %s", fmtDur(rec.now()), ph.name, describePlan(plan))
		ph.setup()
		time.Sleep(cfg.warm)
		ph.faultsFrom = rec.now()
		if heapWarm == 0 {
			heapWarm = heapInUse()
		}
		ph.runSchedule(plan, budget)
		time.Sleep(cfg.gapMin) // let the last fault settle before quiescing
		ph.quiesce()
		t.Logf("%8s  %s phase: quiesced", fmtDur(rec.now()), ph.name)
		ph.final = ph.finalRead()
		ph.teardown()
		cs, bad := ph.judge()
		checks = append(checks, cs...)
		for _, id := range bad {
			timelines = append(timelines, ph.name+" "+ph.idTimeline(id))
		}
		fg.Phases = append(fg.Phases, ph.figures())
		t.Logf("%8s  %s phase: done (final read %v)", fmtDur(rec.now()), ph.name, ph.final.readTook.Round(time.Millisecond))
		live.remove(ph)
	}

	{ // a block, so that the phase's records can be collected before the heap check
		ph := newSinglePhase(t, cfg, rec, wd, live)
		runPhase(ph, planSingle(cfg, ph.rng), cfg.single)
	}

	if cfg.withCluster {
		start := rec.now()
		ph := newClusterPhase(t, cfg, rec, wd, live)
		budget := cfg.cluster - (rec.now() - start) - cfg.warm
		runPhase(ph, planCluster(cfg, ph.rng), budget)
	}

	// 7 (whole run): the watchdog.
	wd.close()
	fg.Watchdog = wd.figures()
	cw := newCheck(7, "no hang: watchdog (deadline + grace)", "all")
	for _, h := range fg.Watchdog.Fired {
		cw.fail("%s", h)
	}
	cw.Detail = fmt.Sprintf("%d blocking calls watched, grace %v, worst return %.1f ms past its deadline net of scheduling lag (%.1f ms raw; %s)",
		fg.Watchdog.Calls, cfg.grace, fg.Watchdog.MaxOverrunMS, fg.Watchdog.MaxRawMS, fg.Watchdog.MaxOverrunOf)
	checks = append(checks, cw)

	lag.close()
	fg.Lag = lag.figures(rec.start)

	// 9. No leak: goroutines of the module, descriptors, heap.
	c9 := newCheck(9, "no leak: goroutines, fds, heap, futures", "all")
	gWait := 5 * time.Second
	if cfg.race {
		gWait = 10 * time.Second
	}
	left := waitGoroutinesGone(gWait)
	fg.Resources.GoroutinesFinal = len(left)
	if len(left) > 0 {
		c9.fail("%d goroutines created by %s* left after Close:\n%s", len(left), modulePrefix, strings.Join(left[:min(len(left), 10)], "\n\n"))
	}
	fg.Resources.FDsFinal = waitFDs(fg.Resources.FDsBaseline, 5*time.Second)
	if fg.Resources.FDsFinal > fg.Resources.FDsBaseline {
		c9.fail("%d file descriptors open, %d at the start:\n%s", fg.Resources.FDsFinal, fg.Resources.FDsBaseline, listFDs())
	}
	heapEnd := heapInUse()
	if path := os.Getenv("CHAOS_HEAPPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			_ = pprof.WriteHeapProfile(f)
			f.Close()
		}
	}
	fg.Resources.HeapWarmMiB, fg.Resources.HeapEndMiB = mib(heapWarm), mib(heapEnd)
	wd.mu.Lock()
	fg.Resources.HeapPeakMiB = mib(wd.heapPeak)
	wd.mu.Unlock()
	if heapEnd > heapWarm+16<<20 {
		c9.fail("heap in use %.1f MiB at the end, %.1f MiB after the warm-up (limit +16 MiB)", mib(heapEnd), mib(heapWarm))
	}
	for _, p := range fg.Phases {
		if p.Window.PendingAfter != 0 {
			c9.fail("%s: the publish window still held %d futures", p.Name, p.Window.PendingAfter)
		}
	}
	c9.Detail = fmt.Sprintf("module goroutines %d → %d; fds %d → %d; heap in use %.1f MiB after warm-up → %.1f MiB at the end (peak %.1f)",
		fg.Resources.GoroutinesBaseline, fg.Resources.GoroutinesFinal, fg.Resources.FDsBaseline, fg.Resources.FDsFinal,
		fg.Resources.HeapWarmMiB, fg.Resources.HeapEndMiB, fg.Resources.HeapPeakMiB)
	checks = append(checks, c9)

	// 10. Race-clean: the race detector fails the test by itself.
	c10 := newCheck(10, "race-clean", "all")
	if cfg.race {
		c10.Detail = "run under -race: any data race fails the test"
	} else {
		c10.Detail = "not under -race in this run (the short run under -race is part of make test)"
	}
	checks = append(checks, c10)

	fg.Checks = checks
	fg.Pass = true
	for _, c := range checks {
		if !c.Pass {
			fg.Pass = false
			t.Errorf("oracle %d (%s, %s) failed: %s", c.N, c.Phase, c.Name, c.Detail)
		}
	}
	fg.fillRun(cfg, rec)
	path := fg.write(t)
	t.Logf("figures written to %s\n%s", path, fg.table())
	report()
}
