package main

// Paired mode (-pair A,B): two clients alternate blocks of one scenario,
// each in a child process that stays up for the whole run, so that each
// block of A runs next to a block of B in the same state of the machine.
// On a shared 2-core VM a round trip's time moves by a factor of two from
// one minute to the next with how the cores are scheduled, and a
// streaming rate moves with whatever else holds a core; one process per
// client and repetition (the default mode) puts that drift into the
// ratio, blocks alternated ABBA take it out.
//
// It runs the round-trip scenarios and the streaming ones (pub, pubsub,
// jspub.async), whose fixtures take any number of blocks. Every block is
// checked on the server as it ends (pair_check.go): a block that lost a
// message fails the run.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/natsio/natsio/bench/internal/clients"
	"github.com/natsio/natsio/bench/internal/harness"
	"github.com/natsio/natsio/bench/internal/scenarios"
)

// pairChild is one client's child process in paired mode.
type pairChild struct {
	name  string
	procs int // the child's GOMAXPROCS, 0 when it did not say
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Scanner
}

// pairResult is what one block cost one client.
type pairResult struct {
	Client   string  `json:"client"`
	Round    int     `json:"round"`
	N        int     `json:"n"`
	WallNs   int64   `json:"wall_ns"`
	CliCPUNs int64   `json:"cli_cpu_ns"`
	SrvCPUNs int64   `json:"srv_cpu_ns"`
	P50Ns    int64   `json:"p50_ns,omitempty"`
	Rate     float64 `json:"msgs_per_s"`
	// Stalls counts the async publishes of the block that met a full
	// window for the library's whole stall wait and were sent again.
	Stalls int64 `json:"stalls,omitempty"`
	// With -pin: the CPUs the client's and the server's threads may run
	// on, read by the parent after the block.
	CliAffinity string `json:"cli_affinity,omitempty"`
	SrvAffinity string `json:"srv_affinity,omitempty"`
	// GOMAXPROCS is the child's, in its first line (a build without it
	// leaves it 0).
	GOMAXPROCS int    `json:"gomaxprocs,omitempty"`
	Err        string `json:"error,omitempty"`
}

// pairBlock is the default block of a scenario in paired mode: about a
// tenth to a third of a second of work on a 2-core machine, long enough
// for the server's CPU (10 ms ticks) and the window's start and drain
// (jspub.async) to matter little. ok is false for the kinds paired mode
// cannot run: their fixtures are sized for exactly one timed run.
func pairBlock(s scenarios.Scenario) (block int, ok bool) {
	switch {
	case s.Latency():
		return 2000, true
	case s.Kind == scenarios.Publish:
		return 200_000, true
	case s.Kind == scenarios.PubSub:
		return 100_000, true
	case s.Kind == scenarios.JSPubAsync:
		return 50_000, true
	}
	return 0, false
}

// runPair runs c.scenarios (one scenario) with the two clients of c.pair
// in alternating blocks, checks every block on the server, and prints the
// summary. A failed check or client ends the run with an error.
func runPair(c config) error {
	names := strings.Split(c.pair, ",")
	if len(names) != 2 || names[0] == names[1] {
		return fmt.Errorf("-pair wants two different clients, as in natsio,raw or natsio@/tmp/old-bench,natsio; got %q", c.pair)
	}
	all := clients.All()
	var bins, kinds [2]string
	for i, n := range names {
		kinds[i], bins[i], _ = strings.Cut(n, "@")
		if _, ok := all[kinds[i]]; !ok {
			return fmt.Errorf("unknown client %q (have natsio, natsgo, raw)", kinds[i])
		}
	}
	s, ok := scenarios.Lookup(c.scenarios)
	if !ok {
		return fmt.Errorf("-pair runs one scenario: -scenarios %q is not a scenario name (see -list)", c.scenarios)
	}
	s = withWarmup(c, s)
	block, ok := pairBlock(s)
	if !ok {
		return fmt.Errorf("-pair runs the round-trip scenarios (req, jspub.sync, kvput, kvget, jsdirectget) and the streaming ones (pub, pubsub, jspub.async), whose fixtures take any number of blocks; %s is not one", s.Name)
	}
	for _, k := range kinds {
		if !s.Supports(all[k]) {
			return fmt.Errorf("%s: %w for %s", s.Name, scenarios.ErrNotApplicable, k)
		}
	}
	if c.block != 0 {
		block = c.block
	}
	if c.rounds < 1 || block < 1 {
		return errors.New("-rounds and -block must be at least 1")
	}
	c.block = block
	self, ctx, srv, done, err := begin(c)
	if err != nil {
		return err
	}
	defer done()

	// One fixture for both clients: its totals are both clients' runs.
	plan := scenarios.Plan{Warmup: 2 * s.Warmup, N: 2 * c.rounds * c.block, Writers: 2}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := s.Setup(sctx, srv.URL, plan); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	check, err := newBlockCheck(sctx, s, srv)
	if err != nil {
		return err
	}
	defer check.close()
	log.Printf("nats-server pid %d at %s; %s: %s and %s, %d rounds of %d operations each; each block checked: %s",
		srv.PID, srv.URL, s.Name, names[0], names[1], c.rounds, c.block, check)
	if c.pin {
		log.Printf("pinned: nats-server on CPU %s, client children on CPU %s", c.srvCPUs, c.cliCPUs)
	}
	srvProcs := 0
	if v, err := srv.Varz(); err == nil {
		srvProcs = v.GOMAXPROCS
	}
	load0 := harness.LoadAvg()

	var kids [2]*pairChild
	defer func() {
		for _, k := range kids {
			if k != nil {
				k.stop()
			}
		}
	}()
	for i, n := range names {
		bin := self
		if bins[i] != "" {
			bin = bins[i]
		}
		if kids[i], err = startPairChild(ctx, bin, c, srv, s, kinds[i], n); err != nil {
			return err
		}
	}
	var blocks []pairResult
	for r := range c.rounds {
		order := []int{0, 1}
		if r%2 == 1 {
			order = []int{1, 0}
		}
		for _, i := range order {
			if err := check.before(ctx); err != nil {
				return fmt.Errorf("%s, round %d: before the block: %w", names[i], r, err)
			}
			res, err := kids[i].run(r)
			if err == nil {
				err = check.after(ctx, res.N)
			}
			if err == nil && c.pin {
				err = checkPairPinned(c, srv.PID, kids[i], &res)
			}
			if err != nil {
				return fmt.Errorf("%s, round %d: %w", names[i], r, err)
			}
			blocks = append(blocks, res)
		}
	}
	load1 := harness.LoadAvg()
	kids0procs := kids[0].procs
	for i, k := range kids {
		if err := k.stop(); err != nil {
			return fmt.Errorf("%s: %w", names[i], err)
		}
		kids[i] = nil
	}
	// A fresh bound: the rounds may have outlasted the setup's.
	vctx, vcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer vcancel()
	if err := s.Verify(vctx, srv.URL, plan); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if err := s.Teardown(vctx, srv.URL); err != nil {
		return fmt.Errorf("teardown: %w", err)
	}

	fmt.Printf("\nnatsio bench -pair: %s, GOMAXPROCS=%d, %d CPUs, %s/%s, load average %.1f before / %.1f after\n",
		runtime.Version(), runtime.GOMAXPROCS(0), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, load0, load1)
	if c.pin {
		fmt.Println(pinHeader(c, srvProcs, kids0procs, "block"))
	}
	fmt.Print(formatPair(s.Name, s.Latency(), c.pin, names, blocks))
	if c.pairOut != "" {
		o := map[string]any{"scenario": s.Name, "clients": names, "rounds": c.rounds, "block": c.block,
			"warmup": s.Warmup, "checked": check.String(), "loadavg": []float64{load0, load1}, "blocks": blocks, "pinned": c.pin}
		if c.pin {
			o["server_cpus"], o["client_cpus"] = c.srvCPUs.String(), c.cliCPUs.String()
		}
		b, err := json.MarshalIndent(o, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(c.pairOut, b, 0o644); err != nil {
			return err
		}
		fmt.Printf("results written to %s\n", c.pairOut)
	}
	return nil
}

// startPairChild starts bin (this program, or another build of it) as a
// child serving blocks of s for client, labelled name, and waits until it
// has warmed up.
func startPairChild(ctx context.Context, bin string, c config, srv *harness.Server, s scenarios.Scenario, client, name string) (*pairChild, error) {
	args := []string{"-child", "-serve", "-scenario", s.Name, "-client", client,
		"-url", srv.URL, "-srvpid", strconv.Itoa(srv.PID), "-count", strconv.Itoa(c.block), "-out", ""}
	if c.warmup > 0 {
		args = append(args, "-warmup", strconv.Itoa(c.warmup))
	}
	if c.fault != "" {
		args = append(args, "-fault", c.fault)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = os.Environ()
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := harness.Start(cmd, c.cliCPUs); err != nil {
		return nil, err
	}
	k := &pairChild{name: name, cmd: cmd, in: in, out: bufio.NewScanner(out)}
	var ready pairResult
	if err := k.read(&ready); err != nil {
		k.stop()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	k.procs = ready.GOMAXPROCS
	return k, nil
}

// read decodes the child's next line into v; a child error is returned.
func (k *pairChild) read(v *pairResult) error {
	if !k.out.Scan() {
		if err := k.out.Err(); err != nil {
			return err
		}
		return errors.New("child exited")
	}
	if err := json.Unmarshal(k.out.Bytes(), v); err != nil {
		return fmt.Errorf("child said %q: %w", k.out.Text(), err)
	}
	if v.Err != "" {
		return errors.New(v.Err)
	}
	return nil
}

// run has the child run one block.
func (k *pairChild) run(round int) (pairResult, error) {
	var res pairResult
	if _, err := io.WriteString(k.in, "run\n"); err != nil {
		return res, err
	}
	if err := k.read(&res); err != nil {
		return res, err
	}
	res.Client, res.Round = k.name, round
	res.Rate = float64(res.N) / time.Duration(res.WallNs).Seconds()
	return res, nil
}

// stop ends the child (closing its stdin ends its loop) and waits for it.
func (k *pairChild) stop() error {
	k.in.Close()
	done := make(chan error, 1)
	go func() { done <- k.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		_ = k.cmd.Process.Kill()
		return errors.New("child did not exit")
	}
}

// serveBlocks is the child's side of paired mode: prepare and warm up,
// say so, then run a block of c.count operations for each "run" line on
// stdin, answering each with its pairResult, until stdin ends. Each block
// checks what its client checks in a normal run (every message received,
// every reply or ack there and right); the parent then checks it on the
// server.
func serveBlocks(c config) error {
	enc := json.NewEncoder(os.Stdout)
	fail := func(err error) error {
		_ = enc.Encode(pairResult{Client: c.client, Err: err.Error()})
		return err
	}
	s, ok := scenarios.Lookup(c.scenario)
	if !ok {
		return fail(fmt.Errorf("unknown scenario %q", c.scenario))
	}
	cl, ok := clients.All()[c.client]
	if !ok {
		return fail(fmt.Errorf("unknown client %q", c.client))
	}
	s = withWarmup(c, s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := s.Prepare(ctx, cl, c.url, scenarios.Plan{Warmup: s.Warmup, N: c.count, Private: strconv.Itoa(os.Getpid()), Fault: c.fault})
	if err != nil {
		return fail(err)
	}
	defer p.Close()
	var warm, lat []time.Duration
	if s.Latency() {
		warm, lat = make([]time.Duration, s.Warmup), make([]time.Duration, c.count)
	}
	if err := p.Run(s.Warmup, warm); err != nil {
		return fail(fmt.Errorf("warm-up: %w", err))
	}
	if err := enc.Encode(pairResult{Client: c.client, GOMAXPROCS: runtime.GOMAXPROCS(0)}); err != nil {
		return err
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() != "run" {
			return fail(fmt.Errorf("unknown command %q", in.Text()))
		}
		stalls := p.Stalls()
		sample, err := harness.Measure(c.srvPID, func() error { return p.Run(c.count, lat) })
		if err != nil {
			return fail(err)
		}
		res := pairResult{Client: c.client, N: c.count, WallNs: int64(sample.Wall),
			CliCPUNs: int64(sample.CliCPU), SrvCPUNs: int64(sample.SrvCPU), Stalls: p.Stalls() - stalls}
		if s.Latency() {
			res.P50Ns = int64(harness.LatencyPercentiles(lat).P50)
		}
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	return in.Err()
}

// checkPairPinned reads back, after a block, the CPUs the threads of the
// block's client and of the server may run on, and checks them.
func checkPairPinned(c config, srvPID int, k *pairChild, res *pairResult) error {
	cpus, err := harness.ThreadCPUs(k.cmd.Process.Pid)
	if err != nil {
		return fmt.Errorf("pinning: the client's threads: %w", err)
	}
	res.CliAffinity = cpus.String()
	return checkPinned(c, srvPID, &res.SrvAffinity, res.CliAffinity)
}

// formatPair summarizes the blocks. Per client: the median and range of
// the blocks' msgs/s, the client's and the server's CPU per operation and
// the cores each kept busy (CPU time over wall time), summed over the
// blocks, and for round trips the median of the blocks' p50. Then the
// ratio of the first client to the second per round (each round is one
// block of each, next to each other). Pinned, the cores are printed as
// percentages of one core (cli core %, srv core %): each process has its
// own.
func formatPair(scenario string, latency, pinned bool, names []string, blocks []pairResult) string {
	var b strings.Builder
	type total struct {
		n             int
		wall, cli, sv int64
		stalls        int64
		rates, p50    []float64
	}
	var t [2]total
	perRound := map[int][2]float64{}
	cpuRound := map[int][2]float64{}
	for _, r := range blocks {
		i := slices.Index(names, r.Client)
		t[i].n += r.N
		t[i].wall += r.WallNs
		t[i].cli += r.CliCPUNs
		t[i].sv += r.SrvCPUNs
		t[i].stalls += r.Stalls
		t[i].rates = append(t[i].rates, r.Rate)
		t[i].p50 = append(t[i].p50, float64(r.P50Ns)/1e3)
		pr, cr := perRound[r.Round], cpuRound[r.Round]
		pr[i], cr[i] = r.Rate, float64(r.CliCPUNs)/float64(r.N)
		perRound[r.Round], cpuRound[r.Round] = pr, cr
	}
	fmt.Fprintf(&b, "\n%s, %d rounds (blocks alternated ABBA)\n\n", scenario, len(perRound))
	header := "%-8s %10s %18s %14s %14s %10s %10s"
	cols := []any{"client", "msgs/s", "min–max", "cli-cpu ns/op", "srv-cpu ns/op", "cli cores", "srv cores"}
	coreFmt, coreScale := " %10.2f %10.2f", 1.0
	if pinned {
		cols[5], cols[6] = "cli core %", "srv core %"
		coreFmt, coreScale = " %10.0f %10.0f", 100
	}
	if latency {
		header += " %10s"
		cols = append(cols, "p50 µs")
	}
	fmt.Fprintf(&b, header+"\n", cols...)
	for i, n := range names {
		x := t[i]
		if x.n == 0 {
			continue
		}
		lo, hi := slices.Min(x.rates), slices.Max(x.rates)
		fmt.Fprintf(&b, "%-8s %10s %18s %14.0f %14.0f"+coreFmt, n, harness.FormatRate(median(x.rates)),
			harness.FormatRate(lo)+"–"+harness.FormatRate(hi),
			float64(x.cli)/float64(x.n), float64(x.sv)/float64(x.n),
			coreScale*float64(x.cli)/float64(x.wall), coreScale*float64(x.sv)/float64(x.wall))
		if latency {
			fmt.Fprintf(&b, " %10.1f", median(x.p50))
		}
		b.WriteString("\n")
	}
	var rates, cpus []float64
	wins := 0
	for r, v := range perRound {
		if v[0] == 0 || v[1] == 0 {
			continue
		}
		rates = append(rates, v[0]/v[1])
		cpus = append(cpus, cpuRound[r][0]/cpuRound[r][1])
		if v[0] > v[1] {
			wins++
		}
	}
	if len(rates) > 0 {
		fmt.Fprintf(&b, "\n%s/%s per round: rate ×%.3f median (%.3f–%.3f), faster in %d of %d; client CPU per op ×%.3f median\n",
			names[0], names[1], median(rates), slices.Min(rates), slices.Max(rates), wins, len(rates), median(cpus))
	}
	for i, n := range names {
		if t[i].stalls > 0 {
			fmt.Fprintf(&b, "%s: %d stalls (a full publish window for the library's whole stall wait; waited and went on)\n", n, t[i].stalls)
		}
	}
	return b.String()
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
