// Command lifecycle measures natsio against nats.go on the costs of a
// connection's life that the main bench does not cover: many goroutines
// requesting on one connection, the heap an idle connection holds, closing
// a connection with many subscriptions, and the socket writes a burst of
// subscriptions takes.
//
// It builds and starts cmd/benchserver, then runs each (scenario, client,
// repetition) in a child process of its own, interleaving the clients, and
// prints the median of each figure. Run from the bench directory:
//
//	go run ./cmd/lifecycle                                  # every scenario, 3 repetitions
//	go run ./cmd/lifecycle -scenarios 'req' -reps 5 -duration 3s
//
// Scenarios:
//
//	req.conc.100, req.conc.10000  N goroutines share one connection and request
//	                              in a loop for -duration; the responder is on another
//	                              connection in the same process. Columns: requests/s,
//	                              p50 and p99 latency, process CPU per request and write
//	                              system calls per request (of the whole process: the
//	                              requests and the responses).
//	idle.100                      heap held per connection by 100 idle connections with
//	                              one subscription each.
//	close.100k                    time to Close a connection with 100,000 subscriptions.
//	subburst.1, .1000, .100000    write system calls to make N subscriptions and Flush.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natsio/natsio/bench/internal/harness"
	"github.com/natsio/natsio/conn"
)

type result struct {
	Scenario string  `json:"scenario"`
	Client   string  `json:"client"`
	Ops      int     `json:"ops"`
	PerSec   float64 `json:"per_sec,omitempty"`
	P50us    float64 `json:"p50_us,omitempty"`
	P99us    float64 `json:"p99_us,omitempty"`
	CPUus    float64 `json:"cpu_us_per_op,omitempty"`
	Writes   float64 `json:"writes_per_op,omitempty"`
	HeapKiB  float64 `json:"heap_kib_per_conn,omitempty"`
	CloseMs  float64 `json:"close_ms,omitempty"`
	Syscalls float64 `json:"writes,omitempty"`
}

var allScenarios = []string{"req.conc.100", "req.conc.10000", "idle.100", "close.100k", "subburst.1", "subburst.1000", "subburst.100000"}

func main() {
	child := flag.Bool("child", false, "run one scenario (internal)")
	scen := flag.String("scenario", "", "child: scenario")
	client := flag.String("client", "", "child: natsio or natsgo")
	url := flag.String("url", "", "child: server URL")
	scens := flag.String("scenarios", ".", "regexp of scenarios to run")
	clientsFlag := flag.String("clients", "natsio,natsgo", "clients")
	reps := flag.Int("reps", 3, "repetitions")
	dur := flag.Duration("duration", 3*time.Second, "length of each request run")
	flag.Parse()
	if *child {
		r, err := runChild(*scen, *client, *url, *dur)
		if err != nil {
			log.Fatal(err)
		}
		_ = json.NewEncoder(os.Stdout).Encode(r)
		return
	}
	ctx := context.Background()
	dir, err := harness.ModuleDir(ctx)
	if err != nil {
		log.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "lifecycle")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	bin, err := harness.BuildServer(ctx, dir, tmp)
	if err != nil {
		log.Fatal(err)
	}
	self := tmp + "/lifecycle"
	if out, err := exec.Command("go", "build", "-o", self, "./cmd/lifecycle").CombinedOutput(); err != nil {
		log.Fatalf("build: %v\n%s", err, out)
	}
	srv, err := harness.StartServer(bin)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Stop()
	re := regexp.MustCompile(*scens)
	cls := strings.Split(*clientsFlag, ",")
	got := map[string][]result{}
	var order []string
	for rep := range *reps {
		for _, sc := range allScenarios {
			if !re.MatchString(sc) {
				continue
			}
			for i := range cls {
				cl := cls[(i+rep)%len(cls)]
				out, err := exec.Command(self, "-child", "-scenario", sc, "-client", cl, "-url", srv.URL, "-duration", dur.String()).Output()
				if err != nil {
					log.Fatalf("%s %s: %v", sc, cl, err)
				}
				var r result
				if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
					log.Fatalf("%s %s: %v: %s", sc, cl, err, out)
				}
				key := sc + " " + cl
				if _, ok := got[key]; !ok {
					order = append(order, key)
				}
				got[key] = append(got[key], r)
			}
		}
	}
	fmt.Printf("load average %.2f (a shared machine: compare ratios within this run)\n", harness.LoadAvg())
	fmt.Printf("%-18s %-7s %10s %9s %9s %9s %9s %10s %9s %8s\n", "scenario", "client", "req/s", "p50 µs", "p99 µs", "cpu µs/op", "writes/op", "heap KiB", "close ms", "writes")
	for _, key := range order {
		rs := got[key]
		med := func(f func(result) float64) float64 {
			xs := make([]float64, len(rs))
			for i, r := range rs {
				xs[i] = f(r)
			}
			return harness.Median(xs)
		}
		f := strings.Fields(key)
		fmt.Printf("%-18s %-7s %10.0f %9.1f %9.1f %9.2f %9.3f %10.1f %9.1f %8.0f\n", f[0], f[1],
			med(func(r result) float64 { return r.PerSec }), med(func(r result) float64 { return r.P50us }),
			med(func(r result) float64 { return r.P99us }), med(func(r result) float64 { return r.CPUus }),
			med(func(r result) float64 { return r.Writes }), med(func(r result) float64 { return r.HeapKiB }),
			med(func(r result) float64 { return r.CloseMs }), med(func(r result) float64 { return r.Syscalls }))
	}
}

// syscw returns the write system calls this process made so far.
func syscw() uint64 {
	f, err := os.Open("/proc/self/io")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "syscw: "); ok {
			n, _ := strconv.ParseUint(v, 10, 64)
			return n
		}
	}
	return 0
}

// client is the little each scenario needs of a client library. Its
// subscriptions are callback subscriptions (natsio SubscribeFunc, nats.go
// Subscribe): nats.go's SubscribeSync allocates a 64 Ki-entry channel
// each, which at 100,000 subscriptions does not fit in memory.
type client interface {
	subscribe(subject string) error
	respond(subject string) error
	request(subject string, data []byte) error
	flush() error
	close()
}

type natsioClient struct{ nc *conn.Conn }

func (c natsioClient) subscribe(s string) error {
	_, err := c.nc.SubscribeFunc(s, func(*conn.Msg) {})
	return err
}
func (c natsioClient) respond(s string) error {
	_, err := c.nc.SubscribeFunc(s, func(m *conn.Msg) { _ = m.Respond(m.Data) })
	return err
}
func (c natsioClient) request(s string, d []byte) error {
	_, err := c.nc.Request(context.Background(), s, d)
	return err
}
func (c natsioClient) flush() error { return c.nc.Flush(context.Background()) }
func (c natsioClient) close()       { _ = c.nc.Close() }

type natsgoClient struct{ nc *nats.Conn }

func (c natsgoClient) subscribe(s string) error {
	_, err := c.nc.Subscribe(s, func(*nats.Msg) {})
	return err
}
func (c natsgoClient) respond(s string) error {
	_, err := c.nc.Subscribe(s, func(m *nats.Msg) { _ = m.Respond(m.Data) })
	return err
}
func (c natsgoClient) request(s string, d []byte) error {
	_, err := c.nc.Request(s, d, 5*time.Second)
	return err
}
func (c natsgoClient) flush() error { return c.nc.Flush() }
func (c natsgoClient) close()       { c.nc.Close() }

func dial(name, url string) (client, error) {
	switch name {
	case "natsio":
		nc, err := conn.Connect(context.Background(), url)
		return natsioClient{nc}, err
	case "natsgo":
		nc, err := nats.Connect(url)
		return natsgoClient{nc}, err
	}
	return nil, fmt.Errorf("unknown client %q", name)
}

func runChild(sc, cl, url string, dur time.Duration) (result, error) {
	r := result{Scenario: sc, Client: cl}
	switch {
	case strings.HasPrefix(sc, "req.conc."):
		n, _ := strconv.Atoi(strings.TrimPrefix(sc, "req.conc."))
		return requests(r, cl, url, n, dur)
	case sc == "idle.100":
		return idle(r, cl, url, 100)
	case sc == "close.100k":
		return closeMany(r, cl, url, 100_000)
	case strings.HasPrefix(sc, "subburst."):
		n, _ := strconv.Atoi(strings.TrimPrefix(sc, "subburst."))
		return subBurst(r, cl, url, n)
	}
	return r, fmt.Errorf("unknown scenario %q", sc)
}

func requests(r result, cl, url string, n int, dur time.Duration) (result, error) {
	svc, err := dial(cl, url)
	if err != nil {
		return r, err
	}
	defer svc.close()
	subject := "lifecycle.req." + cl
	if err := svc.respond(subject); err != nil {
		return r, err
	}
	if err := svc.flush(); err != nil {
		return r, err
	}
	c, err := dial(cl, url)
	if err != nil {
		return r, err
	}
	defer c.close()
	data := []byte("0123456789abcdef")
	// Warm up.
	for range 1000 {
		if err := c.request(subject, data); err != nil {
			return r, err
		}
	}
	lats := make([][]time.Duration, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	runtime.GC()
	cpu0, w0 := harness.SelfCPU(), syscw()
	start := time.Now()
	end := start.Add(dur)
	for i := range n {
		wg.Go(func() {
			l := make([]time.Duration, 0, 1024)
			for {
				t := time.Now()
				if t.After(end) {
					break
				}
				if err := c.request(subject, data); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					break
				}
				l = append(l, time.Since(t))
			}
			lats[i] = l
		})
	}
	wg.Wait()
	el := time.Since(start)
	cpu, w := harness.SelfCPU()-cpu0, syscw()-w0
	if firstErr != nil {
		return r, firstErr
	}
	all := slices.Concat(lats...)
	slices.Sort(all)
	r.Ops = len(all)
	r.PerSec = float64(len(all)) / el.Seconds()
	r.P50us = float64(harness.Percentile(all, 50)) / 1e3
	r.P99us = float64(harness.Percentile(all, 99)) / 1e3
	r.CPUus = float64(cpu) / 1e3 / float64(len(all))
	r.Writes = float64(w) / float64(len(all))
	return r, nil
}

func heap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func idle(r result, cl, url string, n int) (result, error) {
	before := heap()
	cs := make([]client, 0, n)
	for i := range n {
		c, err := dial(cl, url)
		if err != nil {
			return r, err
		}
		if err := c.subscribe(fmt.Sprintf("lifecycle.idle.%d", i)); err != nil {
			return r, err
		}
		if err := c.flush(); err != nil {
			return r, err
		}
		cs = append(cs, c)
	}
	after := heap()
	r.Ops = n
	r.HeapKiB = float64(after-before) / 1024 / float64(n)
	for _, c := range cs {
		c.close()
	}
	return r, nil
}

func closeMany(r result, cl, url string, n int) (result, error) {
	c, err := dial(cl, url)
	if err != nil {
		return r, err
	}
	for i := range n {
		if err := c.subscribe("lifecycle.close." + strconv.Itoa(i)); err != nil {
			return r, err
		}
	}
	if err := c.flush(); err != nil {
		return r, err
	}
	start := time.Now()
	c.close()
	r.Ops = n
	r.CloseMs = float64(time.Since(start)) / 1e6
	return r, nil
}

func subBurst(r result, cl, url string, n int) (result, error) {
	c, err := dial(cl, url)
	if err != nil {
		return r, err
	}
	defer c.close()
	if err := c.flush(); err != nil {
		return r, err
	}
	w0 := syscw()
	for i := range n {
		if err := c.subscribe("lifecycle.burst." + strconv.Itoa(i)); err != nil {
			return r, err
		}
	}
	if err := c.flush(); err != nil {
		return r, err
	}
	r.Ops = n
	r.Syscalls = float64(syscw() - w0)
	return r, nil
}
