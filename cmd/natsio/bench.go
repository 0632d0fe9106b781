package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
	"github.com/natsio/natsio/pubwin"
)

// benchFlags configure the benchmarks.
type benchFlags struct {
	msgs        int
	size        int64
	pubs        int
	subs        int
	async       int
	stream      string
	storage     string
	keep        bool
	noResponder bool
}

const defaultBenchSubject = "natsio.bench"

func (a *app) benchCmd() *cobra.Command {
	var f benchFlags
	c := group("bench", "Measure throughput and latency",
		`Load generators in the spirit of 'nats bench', using only natsio. Each
publisher, subscriber and client has its own connection. A progress bar is
drawn on stderr when it is a terminal (--progress always|never to choose);
the summary gives messages and bytes per second, per client and in total,
and latency percentiles for the request-style benchmarks (req, js).`,
		`  natsio bench pub --msgs 1000000 --size 128 --pubs 4
  natsio bench sub --msgs 100000 --subs 4
  natsio bench req --msgs 10000 --pubs 8
  natsio bench js --msgs 100000 --async 1000 --storage memory`,
		a.benchPubCmd(&f), a.benchSubCmd(&f), a.benchReqCmd(&f), a.benchJSCmd(&f))
	fl := c.PersistentFlags()
	fl.IntVarP(&f.msgs, "msgs", "n", 100_000, "number of messages to publish (in total, shared by the publishers)")
	fl.Var(newSize(&f.size, 128), "size", "message size, e.g. 128, 1KiB")
	fl.IntVar(&f.pubs, "pubs", 1, "number of concurrent publishers (clients for req)")
	fl.Var(newEnum(&a.progress, "auto", "auto", "always", "never"), "progress", "draw a progress bar on stderr")
	return c
}

func (a *app) benchPubCmd(f *benchFlags) *cobra.Command {
	c := &cobra.Command{
		Use:   "pub [SUBJECT]",
		Short: "Publish as fast as possible (core NATS)",
		Long: `Publish --msgs messages of --size bytes to SUBJECT (default natsio.bench)
from --pubs publishers and report the publish rate. With --subs, subscribers
receive every message and their rate is reported too.`,
		Example: `  natsio bench pub
  natsio bench pub orders.bench --msgs 1000000 --size 512 --pubs 4 --subs 2`,
		Args: rangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			return a.runCoreBench(c, benchSubject(args), f, "pub")
		},
	}
	c.Flags().IntVar(&f.subs, "subs", 0, "number of subscribers receiving every message")
	return c
}

func (a *app) benchSubCmd(f *benchFlags) *cobra.Command {
	c := &cobra.Command{
		Use:   "sub [SUBJECT]",
		Short: "Measure how fast subscribers receive (core NATS)",
		Long: `Start --subs subscribers on SUBJECT (default natsio.bench), publish --msgs
messages of --size bytes to it from --pubs publishers, and report the rate at
which each subscriber received them (first to last message). Messages a slow
subscriber dropped are reported.`,
		Example: `  natsio bench sub
  natsio bench sub --subs 4 --msgs 500000 --size 64`,
		Args: rangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			return a.runCoreBench(c, benchSubject(args), f, "sub")
		},
	}
	c.Flags().IntVar(&f.subs, "subs", 1, "number of subscribers receiving every message")
	return c
}

func (a *app) benchReqCmd(f *benchFlags) *cobra.Command {
	c := &cobra.Command{
		Use:   "req [SUBJECT]",
		Short: "Measure request/reply latency and rate",
		Long: `Send --msgs requests of --size bytes to SUBJECT (default natsio.bench) from
--pubs concurrent clients, each waiting for its reply before the next, and
report the rate and the round-trip latency percentiles. --subs responders
(a queue group, echoing the request) are started unless --no-responder, in
which case another service must answer.`,
		Example: `  natsio bench req --msgs 10000
  natsio bench req --pubs 8 --subs 2
  natsio bench req svc.echo --no-responder`,
		Args: rangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			return a.runReqBench(c, benchSubject(args), f)
		},
	}
	c.Flags().IntVar(&f.subs, "subs", 1, "number of responders to start")
	c.Flags().BoolVar(&f.noResponder, "no-responder", false, "start no responder (another service answers)")
	return c
}

func (a *app) benchJSCmd(f *benchFlags) *cobra.Command {
	c := &cobra.Command{
		Use:   "js [SUBJECT]",
		Short: "Measure JetStream publishing with acknowledgements",
		Long: `Publish --msgs messages of --size bytes to SUBJECT (default natsio.bench) in
JetStream from --pubs publishers and report the rate and the latency from
publish to the stream's acknowledgement. With --async N each publisher keeps
up to N publishes awaiting acks (a pubwin window); without it each publish
waits for its ack. The stream --stream is created for the run (on SUBJECT,
with --storage) and deleted afterwards unless it existed or --keep is given.`,
		Example: `  natsio bench js
  natsio bench js --async 1000 --msgs 1000000 --storage memory
  natsio bench js orders.bench --stream ORDERS --keep`,
		Args: rangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			return a.runJSBench(c, benchSubject(args), f)
		},
	}
	fl := c.Flags()
	fl.IntVar(&f.async, "async", 0, "publishes awaiting acks per publisher (0: wait for each ack)")
	fl.StringVar(&f.stream, "stream", "NATSIO_BENCH", "stream to publish into")
	fl.Var(newEnum(&f.storage, "file", "file", "memory"), "storage", "storage of the stream created for the run")
	fl.BoolVar(&f.keep, "keep", false, "keep the stream created for the run")
	return c
}

func benchSubject(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	return defaultBenchSubject
}

// validate checks the common flags.
func (f *benchFlags) validate(c *cobra.Command) error {
	switch {
	case f.msgs < 1:
		return usageError{err: fmt.Errorf("--msgs must be at least 1, got %d", f.msgs), cmd: c}
	case f.size < 0 || f.size > 64<<20:
		return usageError{err: fmt.Errorf("--size must be 0 to 64MiB, got %d", f.size), cmd: c}
	case f.pubs < 1:
		return usageError{err: fmt.Errorf("--pubs must be at least 1, got %d", f.pubs), cmd: c}
	case f.subs < 0:
		return usageError{err: fmt.Errorf("--subs must not be negative, got %d", f.subs), cmd: c}
	case f.async < 0:
		return usageError{err: fmt.Errorf("--async must not be negative, got %d", f.async), cmd: c}
	}
	return nil
}

// split divides n messages among p clients.
func split(n, p int) []int {
	out := make([]int, p)
	for i := range out {
		out[i] = n / p
		if i < n%p {
			out[i]++
		}
	}
	return out
}

// clientStat is one client's share of a run.
type clientStat struct {
	Role       string       `json:"role"`
	ID         int          `json:"id"`
	Msgs       int64        `json:"msgs"`
	Elapsed    jsonDuration `json:"elapsed"`
	MsgsPerSec float64      `json:"msgs_per_sec"`
	MiBPerSec  float64      `json:"mib_per_sec"`
	Dropped    uint64       `json:"dropped,omitempty"`
	Errors     int64        `json:"errors,omitempty"`
}

// benchStat sums one role (publishers or subscribers) of a run.
type benchStat struct {
	Role       string       `json:"role"`
	Clients    int          `json:"clients"`
	Msgs       int64        `json:"msgs"`
	Size       int64        `json:"size"`
	Elapsed    jsonDuration `json:"elapsed"`
	MsgsPerSec float64      `json:"msgs_per_sec"`
	MiBPerSec  float64      `json:"mib_per_sec"`
	PerClient  []clientStat `json:"per_client,omitempty"`
}

// latencyStats are the percentiles of a request-style run.
type latencyStats struct {
	What  string       `json:"what"`
	Count int          `json:"count"`
	Min   jsonDuration `json:"min"`
	Mean  jsonDuration `json:"mean"`
	P50   jsonDuration `json:"p50"`
	P90   jsonDuration `json:"p90"`
	P99   jsonDuration `json:"p99"`
	P999  jsonDuration `json:"p99_9"`
	Max   jsonDuration `json:"max"`
}

// benchReport is the whole summary (--json prints it).
type benchReport struct {
	Benchmark string        `json:"benchmark"`
	Subject   string        `json:"subject"`
	Stream    string        `json:"stream,omitempty"`
	Async     int           `json:"async,omitempty"`
	Stats     []*benchStat  `json:"stats"`
	Latency   *latencyStats `json:"latency,omitempty"`
	Warnings  []string      `json:"warnings,omitempty"`
}

func rate(n int64, size int64, d time.Duration) (msgsPerSec, mibPerSec float64) {
	s := d.Seconds()
	if s <= 0 {
		return 0, 0
	}
	return float64(n) / s, float64(n) * float64(size) / s / (1 << 20)
}

func newClientStat(role string, id int, n int64, size int64, d time.Duration) clientStat {
	m, b := rate(n, size, d)
	return clientStat{Role: role, ID: id, Msgs: n, Elapsed: jsonDuration(d), MsgsPerSec: m, MiBPerSec: b}
}

// aggregate sums the clients of one role: total messages over the span
// from the earliest start to the latest end.
func aggregate(role string, size int64, clients []clientStat, span time.Duration) *benchStat {
	st := &benchStat{Role: role, Clients: len(clients), Size: size, Elapsed: jsonDuration(span), PerClient: clients}
	for _, c := range clients {
		st.Msgs += c.Msgs
	}
	st.MsgsPerSec, st.MiBPerSec = rate(st.Msgs, size, span)
	if len(clients) == 1 {
		st.PerClient = nil
	}
	return st
}

func percentiles(what string, lat []time.Duration) *latencyStats {
	if len(lat) == 0 {
		return nil
	}
	slices.Sort(lat)
	at := func(p float64) jsonDuration {
		i := int(math.Ceil(p/100*float64(len(lat)))) - 1
		return jsonDuration(lat[max(0, min(i, len(lat)-1))])
	}
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	return &latencyStats{What: what, Count: len(lat), Min: jsonDuration(lat[0]), Mean: jsonDuration(sum / time.Duration(len(lat))),
		P50: at(50), P90: at(90), P99: at(99), P999: at(99.9), Max: jsonDuration(lat[len(lat)-1])}
}

// printReport prints the summary.
func (a *app) printReport(r *benchReport) error {
	if a.json {
		return a.printJSON(r)
	}
	title := fmt.Sprintf("natsio bench %s on %q", r.Benchmark, r.Subject)
	if r.Stream != "" {
		title += " (stream " + r.Stream + ")"
	}
	if r.Async > 0 {
		title += fmt.Sprintf(", async window %d", r.Async)
	}
	fmt.Fprintln(a.stdout, title)
	var rows [][]string
	for _, s := range r.Stats {
		rows = append(rows, []string{s.Role, strconv.Itoa(s.Clients), commas(uint64(s.Msgs)), humanBytes(s.Size),
			humanDuration(time.Duration(s.Elapsed), "0s"), commas(uint64(s.MsgsPerSec)), fmt.Sprintf("%.2f", s.MiBPerSec)})
	}
	a.table([]string{"ROLE", "CLIENTS", "MSGS", "SIZE", "ELAPSED", "MSGS/S", "MiB/S"}, rows)
	for _, s := range r.Stats {
		if len(s.PerClient) == 0 {
			continue
		}
		fmt.Fprintf(a.stdout, "\n%s:\n", s.Role)
		lossy := slices.ContainsFunc(s.PerClient, func(c clientStat) bool { return c.Dropped > 0 || c.Errors > 0 })
		var rows [][]string
		for _, c := range s.PerClient {
			row := []string{"#" + strconv.Itoa(c.ID), commas(uint64(c.Msgs)), humanDuration(time.Duration(c.Elapsed), "0s"),
				commas(uint64(c.MsgsPerSec)), fmt.Sprintf("%.2f", c.MiBPerSec)}
			if lossy {
				row = append(row, strconv.FormatUint(c.Dropped, 10))
			}
			rows = append(rows, row)
		}
		headers := []string{"CLIENT", "MSGS", "ELAPSED", "MSGS/S", "MiB/S"}
		if lossy {
			headers = append(headers, "DROPPED")
		}
		a.table(headers, rows)
	}
	if l := r.Latency; l != nil {
		fmt.Fprintf(a.stdout, "\nLatency (%s, %s samples):\n", l.What, commas(uint64(l.Count)))
		d := func(j jsonDuration) string {
			x := time.Duration(j)
			if x >= time.Millisecond {
				return x.Round(10 * time.Microsecond).String()
			}
			return x.Round(100 * time.Nanosecond).String()
		}
		a.table([]string{"MIN", "MEAN", "P50", "P90", "P99", "P99.9", "MAX"},
			[][]string{{d(l.Min), d(l.Mean), d(l.P50), d(l.P90), d(l.P99), d(l.P999), d(l.Max)}})
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(a.stderr, "warning: %s\n", w)
	}
	return nil
}

// progress counts work done across goroutines and mirrors it on a bar.
type progress struct {
	done atomic.Int64
	stop chan struct{}
	wg   sync.WaitGroup
}

func (a *app) startProgress(total int64, desc string) *progress {
	p := &progress{stop: make(chan struct{})}
	bar := a.newBar(total, desc, false)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				bar.Set64(p.done.Load())
			case <-p.stop:
				bar.Set64(p.done.Load())
				bar.Finish()
				bar.Clear()
				return
			}
		}
	}()
	return p
}

func (p *progress) finish() {
	close(p.stop)
	p.wg.Wait()
}

// workers runs f(i) for i in [0, n) concurrently and returns the first
// error. A panic in a worker is returned as an error instead of crashing
// the process with a trace.
func workers(n int, f func(i int) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for i := range n {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					mu.Lock()
					errs = append(errs, panicError{r})
					mu.Unlock()
				}
			}()
			if err := f(i); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// connectN opens n connections named after role.
func (a *app) connectN(ctx context.Context, n int, role string) ([]*conn.Conn, error) {
	if err := a.resolveConn(); err != nil {
		return nil, err
	}
	conns := make([]*conn.Conn, 0, n)
	for i := range n {
		opts, err := a.conn.options()
		if err != nil {
			closeAll(conns)
			return nil, err
		}
		opts = append(opts, conn.Name(fmt.Sprintf("%s-bench-%s-%d", a.conn.name, role, i+1)))
		nc, err := conn.Connect(ctx, a.conn.server, opts...)
		if err != nil {
			closeAll(conns)
			return nil, connectError{url: redactURL(a.conn.server), timeout: a.conn.timeout, err: err}
		}
		conns = append(conns, nc)
	}
	return conns, nil
}

func closeAll(conns []*conn.Conn) {
	for _, nc := range conns {
		nc.Close()
	}
}

// benchSub is one subscriber of a core benchmark.
type benchSub struct {
	sub         *conn.Subscription
	want        int64
	got         atomic.Int64
	first, last atomic.Int64 // unix nanos
	done        chan struct{}
}

func (a *app) runCoreBench(c *cobra.Command, subject string, f *benchFlags, kind string) error {
	ctx := c.Context()
	if err := f.validate(c); err != nil {
		return err
	}
	if err := proto.ValidatePublishSubject(subject); err != nil {
		return badSubject(subject, true, err)
	}
	pubs, err := a.connectN(ctx, f.pubs, "pub")
	if err != nil {
		return err
	}
	defer closeAll(pubs)
	subConns, err := a.connectN(ctx, f.subs, "sub")
	if err != nil {
		return err
	}
	defer closeAll(subConns)

	total := int64(f.msgs)
	subs := make([]*benchSub, f.subs)
	var received atomic.Int64
	for i, nc := range subConns {
		bs := &benchSub{want: total, done: make(chan struct{})}
		bs.sub, err = nc.SubscribeFunc(subject, func(*conn.Msg) {
			now := time.Now().UnixNano()
			n := bs.got.Add(1)
			received.Add(1)
			if n == 1 {
				bs.first.Store(now)
			}
			bs.last.Store(now)
			if n == bs.want {
				close(bs.done)
			}
		})
		if err != nil {
			return err
		}
		// Room for every message (within 1 GiB): a benchmark subscriber
		// that only counts keeps up unless the machine is saturated.
		if err := bs.sub.SetPendingLimits(int(total)+1, 1<<30); err != nil {
			return err
		}
		if err := nc.Flush(ctx); err != nil {
			return err
		}
		subs[i] = bs
	}

	payload := make([]byte, f.size)
	counts := split(f.msgs, f.pubs)
	pubStats := make([]clientStat, f.pubs)
	countRecv := kind == "sub" && f.subs > 0
	var prog *progress
	if countRecv {
		prog = a.startProgress(total*int64(f.subs), "receiving")
	} else {
		prog = a.startProgress(total, "publishing")
	}
	start := time.Now()
	err = workers(f.pubs, func(i int) error {
		nc := pubs[i]
		t0 := time.Now()
		for j := 0; j < counts[i]; j++ {
			if err := nc.Publish(subject, payload); err != nil {
				return err
			}
			if !countRecv && j&255 == 0 {
				prog.done.Add(min(256, int64(counts[i]-j)))
			}
			if j&4095 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
		}
		if err := nc.Flush(ctx); err != nil {
			return err
		}
		pubStats[i] = newClientStat("publishers", i+1, int64(counts[i]), f.size, time.Since(t0))
		return nil
	})
	pubSpan := time.Since(start)
	if err != nil {
		prog.finish()
		return err
	}

	// Wait for the subscribers: until each has every message, or no new
	// message arrived for --timeout (messages were dropped).
	var warnings []string
	if len(subs) > 0 {
		idle := time.NewTicker(50 * time.Millisecond)
		lastCount, lastChange := int64(-1), time.Now()
	wait:
		for {
			if countRecv {
				prog.done.Store(received.Load())
			}
			allDone := true
			for _, s := range subs {
				select {
				case <-s.done:
				default:
					allDone = false
				}
			}
			if allDone {
				break
			}
			if n := received.Load(); n != lastCount {
				lastCount, lastChange = n, time.Now()
			} else if time.Since(lastChange) > a.conn.timeout {
				warnings = append(warnings, fmt.Sprintf("subscribers stopped receiving for %v; some messages were lost (slow consumer)", a.conn.timeout))
				break wait
			}
			select {
			case <-idle.C:
			case <-ctx.Done():
				idle.Stop()
				prog.finish()
				return ctx.Err()
			}
		}
		idle.Stop()
		if countRecv {
			prog.done.Store(received.Load())
		}
	}
	prog.finish()

	report := &benchReport{Benchmark: kind, Subject: subject}
	report.Stats = append(report.Stats, aggregate("publishers", f.size, pubStats, pubSpan))
	if len(subs) > 0 {
		var subStats []clientStat
		var firstAll, lastAll int64 = math.MaxInt64, 0
		for i, s := range subs {
			got, first, last := s.got.Load(), s.first.Load(), s.last.Load()
			var d time.Duration
			if got > 0 {
				d = time.Duration(last - first)
				firstAll, lastAll = min(firstAll, first), max(lastAll, last)
			}
			cs := newClientStat("subscribers", i+1, got, f.size, d)
			cs.Dropped = s.sub.Dropped()
			subStats = append(subStats, cs)
		}
		span := time.Duration(0)
		if lastAll > 0 {
			span = time.Duration(lastAll - firstAll)
		}
		st := aggregate("subscribers", f.size, subStats, span)
		if len(subStats) == 1 {
			st.PerClient = nil
		}
		report.Stats = append(report.Stats, st)
	}
	report.Warnings = warnings
	return a.printReport(report)
}

func (a *app) runReqBench(c *cobra.Command, subject string, f *benchFlags) error {
	ctx := c.Context()
	if err := f.validate(c); err != nil {
		return err
	}
	if err := proto.ValidatePublishSubject(subject); err != nil {
		return badSubject(subject, true, err)
	}
	responders := f.subs
	if f.noResponder {
		responders = 0
	}
	resp, err := a.connectN(ctx, responders, "reply")
	if err != nil {
		return err
	}
	defer closeAll(resp)
	for _, nc := range resp {
		if _, err := nc.QueueSubscribeFunc(subject, "natsio-bench", func(m *conn.Msg) { m.Respond(m.Data) }); err != nil {
			return err
		}
		if err := nc.Flush(ctx); err != nil {
			return err
		}
	}
	clients, err := a.connectN(ctx, f.pubs, "req")
	if err != nil {
		return err
	}
	defer closeAll(clients)

	payload := make([]byte, f.size)
	counts := split(f.msgs, f.pubs)
	stats := make([]clientStat, f.pubs)
	lats := make([][]time.Duration, f.pubs)
	prog := a.startProgress(int64(f.msgs), "requesting")
	start := time.Now()
	err = workers(f.pubs, func(i int) error {
		nc := clients[i]
		lat := make([]time.Duration, 0, counts[i])
		t0 := time.Now()
		for j := 0; j < counts[i]; j++ {
			rctx, cancel := context.WithTimeout(ctx, a.conn.timeout)
			s := time.Now()
			_, err := nc.Request(rctx, subject, payload)
			cancel()
			if err != nil {
				return err
			}
			lat = append(lat, time.Since(s))
			prog.done.Add(1)
		}
		stats[i] = newClientStat("requesters", i+1, int64(counts[i]), f.size, time.Since(t0))
		lats[i] = lat
		return nil
	})
	span := time.Since(start)
	prog.finish()
	if err != nil {
		if errors.Is(err, conn.ErrNoResponders) && f.noResponder {
			return userError{msg: fmt.Sprintf("nobody answers requests on %q", subject),
				hint: "start a responder (`natsio reply " + subject + "`) or drop --no-responder", err: err}
		}
		return err
	}
	report := &benchReport{Benchmark: "req", Subject: subject}
	report.Stats = append(report.Stats, aggregate("requesters", f.size, stats, span))
	report.Latency = percentiles("request to reply", slices.Concat(lats...))
	return a.printReport(report)
}

func (a *app) runJSBench(c *cobra.Command, subject string, f *benchFlags) error {
	ctx := c.Context()
	if err := f.validate(c); err != nil {
		return err
	}
	if err := proto.ValidatePublishSubject(subject); err != nil {
		return badSubject(subject, true, err)
	}
	if err := jsapi.ValidateName(f.stream); err != nil {
		return invalidName("stream", f.stream, err)
	}
	nc, js, err := a.jetstream(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()

	created := false
	if _, err := js.Stream(ctx, f.stream); errors.Is(err, jsapi.ErrStreamNotFound) {
		_, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: f.stream, Subjects: []string{subject},
			Storage: jsapi.StorageType(f.storage), AllowDirect: true})
		if err != nil {
			return err
		}
		created = true
	} else if err != nil {
		return err
	}
	if created && !f.keep {
		defer func() {
			dctx, cancel := context.WithTimeout(context.Background(), a.conn.timeout)
			defer cancel()
			if err := js.DeleteStream(dctx, f.stream); err != nil {
				fmt.Fprintf(a.stderr, "warning: could not delete the benchmark stream %s: %v\n", f.stream, trimPrefixes(err))
			}
		}()
	}

	pubs, err := a.connectN(ctx, f.pubs, "js")
	if err != nil {
		return err
	}
	defer closeAll(pubs)

	payload := make([]byte, f.size)
	counts := split(f.msgs, f.pubs)
	stats := make([]clientStat, f.pubs)
	lats := make([][]time.Duration, f.pubs)
	var (
		failures atomic.Int64
		errMu    sync.Mutex
		firstErr error
	)
	prog := a.startProgress(int64(f.msgs), "publishing")
	start := time.Now()
	err = workers(f.pubs, func(i int) error {
		pjs, err := jsapi.New(pubs[i], append(a.conn.resolved.JSOptions(), jsapi.Timeout(a.conn.timeout))...)
		if err != nil {
			return err
		}
		lat := make([]time.Duration, 0, counts[i])
		t0 := time.Now()
		if f.async == 0 {
			for j := 0; j < counts[i]; j++ {
				s := time.Now()
				if _, err := pjs.Publish(ctx, subject, payload); err != nil {
					return err
				}
				lat = append(lat, time.Since(s))
				prog.done.Add(1)
			}
		} else {
			w, err := pubwin.New(pjs, pubwin.MaxPending(f.async), pubwin.StallWait(a.conn.timeout), pubwin.AckTimeout(a.conn.timeout))
			if err != nil {
				return err
			}
			defer w.Close()
			type inflight struct {
				fut   *pubwin.Future
				start time.Time
			}
			ch := make(chan inflight, f.async)
			collected := make(chan []time.Duration)
			go func() {
				var l []time.Duration
				for it := range ch {
					if _, err := it.fut.Wait(ctx); err != nil {
						failures.Add(1)
						errMu.Lock()
						if firstErr == nil {
							firstErr = err
						}
						errMu.Unlock()
					} else {
						l = append(l, time.Since(it.start))
					}
					prog.done.Add(1)
				}
				collected <- l
			}()
			var perr error
			for j := 0; j < counts[i]; j++ {
				s := time.Now()
				fut, err := w.Publish(ctx, subject, payload)
				if err != nil {
					perr = err
					break
				}
				ch <- inflight{fut, s}
			}
			close(ch)
			lat = <-collected
			if perr != nil {
				return perr
			}
		}
		stats[i] = newClientStat("publishers", i+1, int64(counts[i]), f.size, time.Since(t0))
		lats[i] = lat
		return nil
	})
	span := time.Since(start)
	prog.finish()
	if err != nil {
		return err
	}
	report := &benchReport{Benchmark: "js", Subject: subject, Stream: f.stream, Async: f.async}
	report.Stats = append(report.Stats, aggregate("publishers", f.size, stats, span))
	report.Latency = percentiles("publish to ack", slices.Concat(lats...))
	if n := failures.Load(); n > 0 {
		report.Warnings = append(report.Warnings, fmt.Sprintf("%d publishes failed (first: %v)", n, trimPrefixes(firstErr)))
	}
	return a.printReport(report)
}
