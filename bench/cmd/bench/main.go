// Command bench measures natsio against nats.go and a raw protocol client
// (the ceiling) on the same scenarios, against a nats-server running in a
// process of its own.
//
// It builds and starts cmd/benchserver, then runs every (scenario, client)
// pair in a fresh child process of itself, one at a time. Repetitions are
// interleaved (rep 1: all scenarios, each with every client; rep 2: the
// same with the client order rotated; …) so that drift of the machine
// affects every client alike. It prints one table of medians and writes
// every run and the summary to results/latest.json.
//
// Run from the bench directory:
//
//	go run ./cmd/bench                         # REPS (default 3) repetitions of the default scenarios
//	go run ./cmd/bench -scenarios 'pubsub' -clients natsio,natsgo -reps 5
//	go run ./cmd/bench -list
//	go run ./cmd/bench -pair natsio,raw -scenarios kvget.mem.128 -rounds 20       # paired blocks (pair.go)
//	go run ./cmd/bench -pair natsio,raw -scenarios pubsub.same.cb.16 -rounds 6    # the same for a streaming scenario
//	go run ./cmd/bench -pin -scenarios '^pub\.1024$'                              # server on the last CPU, clients on the others (pin.go)
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/natsio/natsio/bench/internal/clients"
	"github.com/natsio/natsio/bench/internal/harness"
	"github.com/natsio/natsio/bench/internal/scenarios"
)

type config struct {
	scenarios string
	clients   string
	reps      int
	count     int
	warmup    int
	scale     float64
	duration  time.Duration
	out       string
	server    string
	url       string
	timeout   time.Duration
	list      bool
	profile   string
	srvPerf   string
	memRate   int

	// pinned mode (pin.go): the server on srvCPUs, the client children
	// on cliCPUs; with -child, report the CPUs of the child's threads
	pin     bool
	srvCPUs harness.CPUs
	cliCPUs harness.CPUs

	// paired mode (pair.go)
	pair    string
	rounds  int
	block   int
	serve   bool
	pairOut string // -out when given explicitly: paired mode writes no file by default

	// child mode
	child    bool
	scenario string
	client   string
	rep      int
	srvPID   int
	setup    bool
	fault    string // internal: scenarios.FaultDrop or FaultStall, for the bench's own tests
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("bench: ")
	var c config
	flag.StringVar(&c.scenarios, "scenarios", os.Getenv("SCENARIOS"), "regexp of scenario names (default: the default set; env SCENARIOS)")
	flag.StringVar(&c.clients, "clients", envOr("CLIENTS", strings.Join(clients.Names, ",")), "comma-separated clients (env CLIENTS)")
	flag.IntVar(&c.reps, "reps", envInt("REPS", 3), "repetitions (env REPS)")
	flag.IntVar(&c.count, "count", envInt("COUNT", 0), "operations per timed section for every scenario (0: each scenario's default; env COUNT)")
	flag.IntVar(&c.warmup, "warmup", 0, "untimed operations before every timed section (0: each scenario's default)")
	flag.Float64Var(&c.scale, "scale", 1, "multiply each scenario's default count")
	flag.DurationVar(&c.duration, "duration", 0, "instead of a count, size each timed section to about this long (calibrated on the warm-up)")
	flag.StringVar(&c.out, "out", filepath.Join("results", "latest.json"), "JSON results file (empty: none)")
	flag.StringVar(&c.server, "server", "", "prebuilt benchserver binary (default: go build ./cmd/benchserver)")
	flag.DurationVar(&c.timeout, "timeout", 3*time.Minute, "limit for one run (child process)")
	flag.BoolVar(&c.list, "list", false, "list scenarios and exit")
	flag.StringVar(&c.profile, "profile", "", "write CPU and allocation profiles of each timed section to this directory")
	flag.StringVar(&c.srvPerf, "srvperf", "", "with -child: record the server process with `perf record -g` during the timed section into this file (Linux, perf installed)")
	flag.IntVar(&c.memRate, "memprofilerate", 0, "with -profile: runtime.MemProfileRate (1 records every allocation but slows the run; 0 keeps the default sampling)")
	flag.BoolVar(&c.child, "child", false, "internal: run one scenario for one client and print the result")
	flag.StringVar(&c.scenario, "scenario", "", "internal (child): scenario name")
	flag.StringVar(&c.client, "client", "", "internal (child): client name")
	flag.IntVar(&c.rep, "rep", 0, "internal (child): repetition")
	flag.StringVar(&c.url, "url", "", "internal (child): server URL")
	flag.IntVar(&c.srvPID, "srvpid", 0, "internal (child): server pid")
	flag.StringVar(&c.pair, "pair", "", "paired mode: two clients (as natsio,raw) alternate blocks of the one scenario named by -scenarios (round trips, pub, pubsub, jspub.async), each in a child process kept for the whole run")
	flag.IntVar(&c.rounds, "rounds", 10, "with -pair: rounds (one block of each client per round, the order alternating)")
	flag.IntVar(&c.block, "block", 0, "with -pair: operations per block (0: by kind: 2000 round trips, 200000 pub, 100000 pubsub, 50000 jspub.async)")
	flag.BoolVar(&c.serve, "serve", false, "internal (child of -pair): run a block for each line on stdin")
	flag.StringVar(&c.fault, "fault", "", "internal (tests of the bench): inject a fault into every run: drop (one operation fewer than reported) or stall (async publish window of 1)")
	flag.BoolVar(&c.pin, "pin", false, "Linux, 2 or more CPUs: run the server on the last CPU and every client child on the others (with -child: report the CPUs the child's threads may run on)")
	flag.BoolVar(&c.setup, "setup", false, "with -child: create the scenario's fixture first (to run a child by hand under perf or strace)")
	flag.Parse()
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "out" {
			c.pairOut = c.out
		}
	})

	if c.child && c.serve {
		if err := serveBlocks(c); err != nil {
			log.Fatal(err)
		}
		return
	}
	if c.child {
		res := runChild(c)
		if c.pin {
			reportAffinity(&res)
		}
		if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
			log.Fatal(err)
		}
		return
	}
	if c.list {
		for _, s := range scenarios.Registry {
			def := " "
			if s.Default {
				def = "*"
			}
			fmt.Printf("%s %-22s %-12s %8d B  count %-9d %s\n", def, s.Name, s.Kind, s.Size, s.Count, s.Note)
		}
		fmt.Println("(* = run by default)")
		return
	}
	if c.pin {
		var err error
		if c.srvCPUs, c.cliCPUs, err = harness.PinPlan(); err != nil {
			log.Fatal(err)
		}
	}
	if c.pair != "" {
		if err := runPair(c); err != nil {
			log.Fatal(err)
		}
		return
	}
	if _, err := runParent(c); err != nil {
		log.Fatal(err)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func envInt(k string, def int) int {
	if v := os.Getenv(k); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			log.Fatalf("%s=%q: %v", k, v, err)
		}
		return n
	}
	return def
}

// timedCount is the number of operations of a scenario's timed section.
func timedCount(c config, s scenarios.Scenario) int {
	if c.count > 0 {
		return c.count
	}
	return max(1, int(float64(s.Count)*c.scale))
}

// withWarmup applies -warmup to a scenario.
func withWarmup(c config, s scenarios.Scenario) scenarios.Scenario {
	if c.warmup > 0 {
		s.Warmup = c.warmup
	}
	return s
}

// maxDurationFactor caps a -duration run at this many times the default
// count (subscriber queues are sized for it).
const maxDurationFactor = 10

// --- child ---

func runChild(c config) (res harness.Result) {
	res = harness.Result{Scenario: c.scenario, Client: c.client, Rep: c.rep}
	fail := func(err error) harness.Result {
		res.Err = err.Error()
		res.Timeout = clients.IsTimeout(err)
		return res
	}
	s, ok := scenarios.Lookup(c.scenario)
	if !ok {
		return fail(fmt.Errorf("unknown scenario %q", c.scenario))
	}
	s = withWarmup(c, s)
	cl, ok := clients.All()[c.client]
	if !ok {
		return fail(fmt.Errorf("unknown client %q", c.client))
	}
	res.Size, res.Latency, res.Warmup = s.Size, s.Latency(), s.Warmup
	n := timedCount(c, s)
	calibrate := c.duration > 0 && !s.FixedCount()
	plan := scenarios.Plan{Warmup: s.Warmup, N: n, Fault: c.fault}
	if calibrate {
		plan.MaxMsgs = s.Warmup + maxDurationFactor*s.Count
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c.setup {
		if err := s.Setup(ctx, c.url, plan); err != nil {
			return fail(fmt.Errorf("setup: %w", err))
		}
	}
	p, err := s.Prepare(ctx, cl, c.url, plan)
	if err != nil {
		return fail(err)
	}
	defer func() {
		if err := p.Close(); err != nil && res.Err == "" {
			res.Err = "close: " + err.Error()
		}
	}()

	var lat []time.Duration
	if s.Latency() {
		lat = make([]time.Duration, s.Warmup)
	}
	t0 := time.Now()
	if err := p.Run(s.Warmup, lat); err != nil {
		return fail(fmt.Errorf("warm-up: %w", err))
	}
	if calibrate {
		rate := float64(s.Warmup) / time.Since(t0).Seconds()
		n = int(rate * c.duration.Seconds())
		n = max(1, min(n, maxDurationFactor*s.Count))
	}
	res.N = n
	res.ExpectInMsgs = int64((s.Warmup + n) * s.InMsgsPerOp())
	if s.Latency() {
		lat = make([]time.Duration, n)
	}

	run := func() error { return p.Run(n, lat) }
	if c.profile != "" {
		run = profiled(c, run)
	}
	if c.srvPerf != "" {
		run = serverPerf(c, run)
	}
	sample, err := harness.Measure(c.srvPID, run)
	res.Stalls = p.Stalls()
	res.WallNs = int64(sample.Wall)
	res.CliCPUNs = int64(sample.CliCPU)
	res.SrvCPUNs = int64(sample.SrvCPU)
	res.Mallocs = sample.Mallocs
	res.AllocBytes = sample.AllocBytes
	res.LiveHeap = sample.LiveHeap
	res.MaxRSS = sample.MaxRSS
	if err != nil {
		return fail(err)
	}
	if s.Latency() {
		l := harness.LatencyPercentiles(lat)
		res.P50Ns, res.P90Ns, res.P99Ns, res.MaxNs = int64(l.P50), int64(l.P90), int64(l.P99), int64(l.Max)
	}
	return res
}

// profiled wraps the timed section with a CPU profile and heap profiles
// before and after it (compare them with go tool pprof -base). Profiling
// costs CPU: figures of profiled runs are not comparable with others.
func profiled(c config, run func() error) func() error {
	base := filepath.Join(c.profile, fmt.Sprintf("%s.%s.%d.", c.scenario, c.client, c.rep))
	if c.memRate > 0 {
		runtime.MemProfileRate = c.memRate
	}
	writeHeap := func(name string) error {
		f, err := os.Create(base + name)
		if err != nil {
			return err
		}
		defer f.Close()
		return pprof.Lookup("allocs").WriteTo(f, 0)
	}
	return func() error {
		if err := writeHeap("allocs0.pprof"); err != nil {
			return err
		}
		f, err := os.Create(base + "cpu.pprof")
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		err = run()
		pprof.StopCPUProfile()
		return errors.Join(err, writeHeap("allocs1.pprof"))
	}
}

// serverPerf wraps the timed section with `perf record` of the server
// process, to see where the server spends its time for one client.
func serverPerf(c config, run func() error) func() error {
	return func() error {
		cmd := exec.Command("perf", "record", "-g", "-F", "2999", "-p", strconv.Itoa(c.srvPID), "-o", c.srvPerf)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("srvperf: %w", err)
		}
		time.Sleep(300 * time.Millisecond) // perf attaches to the process's threads
		err := run()
		_ = cmd.Process.Signal(os.Interrupt)
		return errors.Join(err, cmd.Wait())
	}
}

// --- parent ---

// errFailed is what runParent returns when a run failed a correctness
// check (or its client crashed): the only outcome that makes bench exit
// non-zero once the table is printed. Timeouts and stalls are reported in
// the table and its notes, not failed.
var errFailed = errors.New("failed")

// runParent runs the selected scenarios, prints the table and writes the
// results. It returns the table's rows, and an error wrapping errFailed when
// some row failed.
func runParent(c config) ([]harness.Row, error) {
	sel, err := scenarios.Select(c.scenarios)
	if err != nil {
		return nil, err
	}
	for i := range sel {
		sel[i] = withWarmup(c, sel[i])
	}
	all := clients.All()
	var names []string
	for _, n := range strings.Split(c.clients, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if _, ok := all[n]; !ok {
			return nil, fmt.Errorf("unknown client %q (have natsio, natsgo, raw)", n)
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return nil, errors.New("no clients")
	}
	if c.reps < 1 {
		return nil, errors.New("-reps must be at least 1")
	}
	self, ctx, srv, done, err := begin(c)
	if err != nil {
		return nil, err
	}
	defer done()
	log.Printf("nats-server pid %d at %s; %d scenarios × %d clients × %d reps", srv.PID, srv.URL, len(sel), len(names), c.reps)
	if c.pin {
		log.Printf("pinned: nats-server on CPU %s, client children on CPU %s", c.srvCPUs, c.cliCPUs)
	}

	if c.profile != "" {
		if err := os.MkdirAll(c.profile, 0o755); err != nil {
			return nil, err
		}
	}
	srvVersion, srvProcs := "", 0
	if v, err := srv.Varz(); err == nil {
		srvVersion, srvProcs = v.Version, v.GOMAXPROCS
	}
	load0 := harness.LoadAvg()
	if load0 > float64(runtime.NumCPU()) {
		log.Printf("warning: load average %.1f on %d CPUs: other work is running, expect noisy figures", load0, runtime.NumCPU())
	}
	start := time.Now()
	var results []harness.Result
	for rep := range c.reps {
		for _, s := range sel {
			for i := range names {
				name := names[(i+rep)%len(names)]
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				r := runOne(ctx, c, self, srv, s, name, rep)
				results = append(results, r)
				logRun(rep, c.reps, &r)
			}
		}
	}
	elapsed := time.Since(start)
	load1 := harness.LoadAvg()
	srv.Stop()

	var order []string
	for _, s := range sel {
		order = append(order, s.Name)
	}
	rows := harness.Summarize(results, order, names)
	fmt.Printf("\nnatsio bench: %d reps, GOMAXPROCS=%d, %d CPUs, %s, %s/%s, load average %.1f before / %.1f after\n",
		c.reps, runtime.GOMAXPROCS(0), runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, load0, load1)
	if c.pin {
		fmt.Println(pinHeader(c, srvProcs, childProcs(results), "run"))
	}
	fmt.Printf("medians over reps; min–max of msgs/s; ×raw, natsio/natsgo: medians of per-rep msgs/s ratios; cpu natsio/natsgo: of cli-cpu ns/op\n")
	if c.pin {
		fmt.Printf("cli core %%, srv core %%: the process's CPU time over the timed section's wall time; 100: its pinned core busy all the time\n")
	}
	fmt.Println()
	if c.pin {
		fmt.Print(harness.FormatPinnedTable(rows))
	} else {
		fmt.Print(harness.FormatTable(rows))
	}
	if notes := harness.FormatNotes(rows); notes != "" {
		fmt.Printf("\n%s", notes)
	}
	growth := harness.Growths(rows, scaleGroups(sel), names)
	if g := harness.FormatGrowth(growth); g != "" {
		fmt.Printf("\ngrowth: the cost at the largest scale over the cost at the smallest (×1.00: per-op cost flat, total linear in the work); live heap per op and peak RSS at both ends\n\n%s", g)
	}
	fmt.Printf("\n%d runs in %s\n", len(results), elapsed.Round(time.Second))

	if c.out != "" {
		m := harness.Machine{GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(),
			GOMAXPROCS: runtime.GOMAXPROCS(0), ServerVersion: srvVersion, Timestamp: time.Now().UTC().Format(time.RFC3339), Pinned: c.pin}
		if err := writeJSON(c, results, rows, growth, elapsed, load0, load1); err != nil {
			return nil, err
		}
		jsonl, svg, err := writeLinesAndChart(c, results, rows, order, names, m, load0, load1)
		if err != nil {
			return nil, err
		}
		if abs, err := filepath.Abs(svg); err == nil {
			svg = abs
		}
		fmt.Printf("results written to %s and %s\nchart: %s\n", c.out, jsonl, svg)
	}
	if n := countFailed(rows); n > 0 {
		return rows, fmt.Errorf("%d scenario rows %w a correctness check", n, errFailed)
	}
	return rows, nil
}

// begin sets up a run: this program's path (for its child processes), a
// context ended by SIGINT or SIGTERM, and the benchserver. done stops the
// server and releases the signals.
func begin(c config) (self string, ctx context.Context, srv *harness.Server, done func(), err error) {
	if self, err = os.Executable(); err != nil {
		return "", nil, nil, nil, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	srv, stopServer, err := startServer(ctx, c)
	if err != nil {
		stop()
		return "", nil, nil, nil, err
	}
	return self, ctx, srv, func() { stopServer(); stop() }, nil
}

// startServer starts the benchserver (-server, or cmd/benchserver built
// into a temporary directory). done stops it and removes what was built.
func startServer(ctx context.Context, c config) (srv *harness.Server, done func(), err error) {
	bin, dir := c.server, ""
	if bin == "" {
		if dir, err = os.MkdirTemp("", "natsio-bench-"); err != nil {
			return nil, nil, err
		}
		mod, err := harness.ModuleDir(ctx)
		if err == nil {
			log.Printf("building cmd/benchserver")
			bin, err = harness.BuildServer(ctx, mod, dir)
		}
		if err != nil {
			os.RemoveAll(dir)
			return nil, nil, err
		}
	}
	if srv, err = harness.StartServerOn(bin, c.srvCPUs); err != nil {
		if dir != "" {
			os.RemoveAll(dir)
		}
		return nil, nil, err
	}
	return srv, func() {
		srv.Stop()
		if dir != "" {
			os.RemoveAll(dir)
		}
	}, nil
}

func countFailed(rows []harness.Row) int {
	n := 0
	for _, r := range rows {
		if r.Failed > 0 {
			n++
		}
	}
	return n
}

// runOne runs one (scenario, client, rep) in a child process and checks the
// server's message counter against what the child says it sent.
//
// For the JetStream, KV and object store scenarios it first creates the
// run's stream (scenarios.Setup, natsio in this process: the same fixture
// whichever client runs), and after the run checks the stream's state
// exactly (scenarios.Verify) and deletes it.
func runOne(ctx context.Context, c config, self string, srv *harness.Server, s scenarios.Scenario, client string, rep int) (res harness.Result) {
	res = harness.Result{Scenario: s.Name, Client: client, Rep: rep, Size: s.Size, Latency: s.Latency()}
	if !s.Supports(clients.All()[client]) {
		res.Err = scenarios.ErrNotApplicable.Error()
		return res
	}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := s.Setup(sctx, srv.URL, scenarios.Plan{Warmup: s.Warmup, N: timedCount(c, s)}); err != nil {
		res.Err, res.Timeout = "setup: "+err.Error(), clients.IsTimeout(err)
		return res
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if res.Err == "" {
			if err := s.Verify(sctx, srv.URL, scenarios.Plan{Warmup: res.Warmup, N: res.N}); err != nil {
				res.Err, res.Timeout = "verify: "+err.Error(), clients.IsTimeout(err)
			}
		}
		if err := s.Teardown(sctx, srv.URL); err != nil && res.Err == "" {
			res.Err, res.Timeout = "teardown: "+err.Error(), clients.IsTimeout(err)
		}
	}()
	v0, err := srv.Varz()
	if err != nil {
		res.Err, res.Timeout = "varz: "+err.Error(), clients.IsTimeout(err)
		return res
	}
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	args := []string{"-child", "-scenario", s.Name, "-client", client, "-rep", strconv.Itoa(rep),
		"-url", srv.URL, "-srvpid", strconv.Itoa(srv.PID), "-count", strconv.Itoa(c.count), "-warmup", strconv.Itoa(c.warmup),
		"-scale", strconv.FormatFloat(c.scale, 'g', -1, 64), "-duration", c.duration.String(), "-out", ""}
	if c.fault != "" {
		args = append(args, "-fault", c.fault)
	}
	if c.profile != "" {
		args = append(args, "-profile", c.profile, "-memprofilerate", strconv.Itoa(c.memRate))
	}
	if c.pin {
		args = append(args, "-pin")
	}
	cmd := exec.CommandContext(cctx, self, args...)
	cmd.Env = os.Environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := harness.Start(cmd, c.cliCPUs)
	if runErr == nil {
		runErr = cmd.Wait()
	}
	line := bytes.TrimSpace(stdout.Bytes())
	if i := bytes.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	if err := json.Unmarshal(line, &res); err != nil {
		msg := fmt.Sprintf("child: %v", runErr)
		if cctx.Err() != nil && ctx.Err() == nil {
			msg = fmt.Sprintf("child timed out after %v", c.timeout)
			res.Timeout = true
		}
		if tail := lastLines(stderr.String(), 5); tail != "" {
			msg += ": " + tail
		}
		res.Err = msg
		return res
	}
	if res.Err == "" && runErr != nil {
		res.Err = fmt.Sprintf("child: %v: %s", runErr, lastLines(stderr.String(), 5))
	}
	if res.Err == "" && res.ExpectInMsgs > 0 {
		if res.ServerInMsgs, err = inMsgsSince(srv, v0.InMsgs, res.ExpectInMsgs); err != nil {
			res.Err, res.Timeout = "varz: "+err.Error(), clients.IsTimeout(err)
		} else if res.ServerInMsgs != res.ExpectInMsgs {
			res.Err = fmt.Sprintf("server received %d messages, the client sent %d", res.ServerInMsgs, res.ExpectInMsgs)
		}
	}
	if c.pin && res.Err == "" {
		if err := checkPinned(c, srv.PID, &res.SrvAffinity, res.CliAffinity); err != nil {
			res.Err = err.Error()
		}
	}
	return res
}

// inMsgsSince returns how many messages the server has received since its
// in_msgs counter read from; it waits up to half a second for want of them
// (the server updates its counters after each read of a connection).
func inMsgsSince(srv *harness.Server, from, want int64) (int64, error) {
	var got int64
	for range 50 {
		v, err := srv.Varz()
		if err != nil {
			return 0, err
		}
		if got = v.InMsgs - from; got >= want {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return got, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

func logRun(rep, reps int, r *harness.Result) {
	if r.Err != "" {
		kind := "ERROR"
		if r.Timeout {
			kind = "TIMEOUT"
		}
		log.Printf("rep %d/%d %-22s %-7s %s %s", rep+1, reps, r.Scenario, r.Client, kind, r.Err)
		return
	}
	n := float64(r.N)
	extra := ""
	if r.Latency {
		extra = fmt.Sprintf(" p50 %.1fµs p99 %.1fµs", float64(r.P50Ns)/1e3, float64(r.P99Ns)/1e3)
	}
	log.Printf("rep %d/%d %-22s %-7s %8s msgs/s %6.2f allocs/op %7.0f cli-ns/op %7.0f srv-ns/op%s",
		rep+1, reps, r.Scenario, r.Client, harness.FormatRate(r.Rate()), float64(r.Mallocs)/n,
		float64(r.CliCPUNs)/n, float64(r.SrvCPUNs)/n, extra)
}

// scaleGroups collects the scale families of the selection.
func scaleGroups(sel []scenarios.Scenario) map[string][]harness.Member {
	g := map[string][]harness.Member{}
	for _, s := range sel {
		if s.Group != "" {
			g[s.Group] = append(g[s.Group], harness.Member{Scenario: s.Name, Scale: s.Scale})
		}
	}
	return g
}

// writeLinesAndChart writes, next to the JSON file out, one JSON line per
// run (.jsonl) and the chart (.svg), and returns their paths.
func writeLinesAndChart(c config, results []harness.Result, rows []harness.Row, order, names []string, m harness.Machine, load0, load1 float64) (jsonl, svg string, err error) {
	base := strings.TrimSuffix(c.out, filepath.Ext(c.out))
	jsonl, svg = base+".jsonl", base+".svg"
	var lines, chart bytes.Buffer
	if err := harness.WriteJSONL(&lines, results, m); err != nil {
		return "", "", err
	}
	title := fmt.Sprintf("%s, %s %s/%s, %d CPUs, nats-server %s, load average %.1f before / %.1f after; medians of %s",
		m.Timestamp, m.GoVersion, m.GOOS, m.GOARCH, m.CPUs, m.ServerVersion, load0, load1, repsOf(rows))
	if c.pin {
		title += fmt.Sprintf("; pinned: server on CPU %s, clients on CPU %s", c.srvCPUs, c.cliCPUs)
	}
	if err := harness.WriteChart(&chart, rows, order, names, title); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(jsonl, lines.Bytes(), 0o644); err != nil {
		return "", "", err
	}
	return jsonl, svg, os.WriteFile(svg, chart.Bytes(), 0o644)
}

// repsOf says how many repetitions the rows' medians are over.
func repsOf(rows []harness.Row) string {
	n := 0
	for _, r := range rows {
		n = max(n, r.Reps+r.Failed+r.TimedOut)
	}
	if n == 1 {
		return "1 repetition"
	}
	return fmt.Sprintf("%d repetitions", n)
}

type output struct {
	Meta   map[string]any   `json:"meta"`
	Rows   []harness.Row    `json:"rows"`
	Growth []harness.Growth `json:"growth,omitempty"`
	Runs   []harness.Result `json:"runs"`
}

func writeJSON(c config, results []harness.Result, rows []harness.Row, growth []harness.Growth, elapsed time.Duration, load0, load1 float64) error {
	host, _ := os.Hostname()
	o := output{
		Meta: map[string]any{
			"time":       time.Now().UTC().Format(time.RFC3339),
			"host":       host,
			"go":         runtime.Version(),
			"gomaxprocs": runtime.GOMAXPROCS(0),
			"num_cpu":    runtime.NumCPU(),
			"reps":       c.reps,
			"count":      c.count,
			"scale":      c.scale,
			"duration":   c.duration.String(),
			"scenarios":  c.scenarios,
			"clients":    c.clients,
			"elapsed_s":  elapsed.Seconds(),
			"loadavg":    []float64{load0, load1},
			"goos":       runtime.GOOS,
			"goarch":     runtime.GOARCH,
			"pinned":     c.pin,
		},
		Rows:   rows,
		Growth: growth,
		Runs:   results,
	}
	if c.pin {
		o.Meta["server_cpus"], o.Meta["client_cpus"] = c.srvCPUs.String(), c.cliCPUs.String()
	}
	if err := os.MkdirAll(filepath.Dir(c.out), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(c.out, append(b, '\n'), 0o644)
}
