package chaos

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// watchdog wraps every blocking call of the workloads and the harness. A call
// still running grace past its deadline is a hang (RELIABILITY.md I2): the
// watchdog dumps every goroutine's stack (once) and fails the test, without
// waiting for the call to return.
//
// Progress probes extend this to iterators, which have no deadline: a
// consumer that is behind and delivers nothing for progressLimit is hung.
type watchdog struct {
	t     *testing.T
	rec   *recorder
	grace time.Duration
	lag   *lagMeter

	mu       sync.Mutex
	next     uint64
	calls    map[uint64]*wcall
	fired    []string
	dumped   bool
	total    uint64
	maxOver  time.Duration // worst return past a deadline, net of lag (≤ 0: none)
	maxName  string
	maxRaw   time.Duration // the same, raw
	probes   map[string]*probe
	heapPeak uint64

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

type wcall struct {
	name     string
	start    time.Time
	deadline time.Time
	lag0     time.Duration // lag meter reading at the start
	reported bool
}

// probe reports a consumer's progress: the time of its last delivery, and
// whether it is behind (something left to deliver).
type probe struct {
	limit    time.Duration
	state    func() (last time.Time, behind bool)
	reported bool
	last     time.Time
	lagAt    time.Duration // lag meter reading when last changed
}

func newWatchdog(t *testing.T, rec *recorder, grace time.Duration, lag *lagMeter) *watchdog {
	w := &watchdog{t: t, rec: rec, grace: grace, lag: lag, calls: map[uint64]*wcall{}, probes: map[string]*probe{},
		stop: make(chan struct{}), done: make(chan struct{}), maxOver: -time.Hour, maxRaw: -time.Hour}
	go w.monitor()
	return w
}

// begin registers a blocking call that must return by deadline; the returned
// function marks it returned.
func (w *watchdog) begin(name string, deadline time.Time) func() {
	w.mu.Lock()
	w.next++
	id := w.next
	w.total++
	w.calls[id] = &wcall{name: name, start: time.Now(), deadline: deadline, lag0: w.lag.total()}
	w.mu.Unlock()
	return func() {
		now := time.Now()
		lag := w.lag.total()
		w.mu.Lock()
		c := w.calls[id]
		delete(w.calls, id)
		raw := now.Sub(c.deadline)
		if over := raw - (lag - c.lag0); over > w.maxOver {
			w.maxOver, w.maxName = over, c.name
		}
		w.maxRaw = max(w.maxRaw, raw)
		w.mu.Unlock()
	}
}

// ctx returns a context with timeout d whose call is watched; call the
// returned function when the call returned.
func (w *watchdog) ctx(parent context.Context, name string, d time.Duration) (context.Context, func()) {
	ctx, cancel := context.WithTimeout(parent, d)
	dl, _ := ctx.Deadline()
	end := w.begin(name, dl)
	return ctx, func() { end(); cancel() }
}

// watch registers a progress probe.
func (w *watchdog) watch(name string, limit time.Duration, state func() (time.Time, bool)) {
	w.mu.Lock()
	w.probes[name] = &probe{limit: limit, state: state}
	w.mu.Unlock()
}

func (w *watchdog) unwatch(name string) {
	w.mu.Lock()
	delete(w.probes, name)
	w.mu.Unlock()
}

func (w *watchdog) monitor() {
	defer close(w.done)
	tk := time.NewTicker(100 * time.Millisecond)
	defer tk.Stop()
	var ms runtime.MemStats
	n := 0
	for {
		select {
		case <-tk.C:
		case <-w.stop:
			return
		}
		now := time.Now()
		lag := w.lag.total()
		var hung []string
		w.mu.Lock()
		for _, c := range w.calls {
			// The call's deadline moves by the time the process could not
			// run while it was in progress (see lagMeter).
			lost := lag - c.lag0
			if !c.reported && now.After(c.deadline.Add(w.grace+lost)) {
				c.reported = true
				hung = append(hung, fmt.Sprintf("%s: running %v, %v past its deadline (%v of it lost to scheduling lag)", c.name,
					now.Sub(c.start).Round(time.Millisecond), now.Sub(c.deadline).Round(time.Millisecond), lost.Round(time.Millisecond)))
			}
		}
		probes := make(map[string]*probe, len(w.probes))
		for k, p := range w.probes {
			probes[k] = p
		}
		w.mu.Unlock()
		for name, p := range probes {
			last, behind := p.state()
			if !last.Equal(p.last) {
				p.last, p.lagAt = last, lag
			}
			if behind && !p.reported && !last.IsZero() && now.Sub(last)-(lag-p.lagAt) > p.limit {
				p.reported = true
				hung = append(hung, fmt.Sprintf("%s: no progress for %v while behind", name, now.Sub(last).Round(time.Millisecond)))
			}
		}
		if len(hung) > 0 {
			w.fire(hung)
		}
		if n++; n%10 == 0 { // heap peak, sampled every second
			runtime.ReadMemStats(&ms)
			w.mu.Lock()
			w.heapPeak = max(w.heapPeak, ms.HeapInuse)
			w.mu.Unlock()
		}
	}
}

func (w *watchdog) fire(hung []string) {
	w.mu.Lock()
	w.fired = append(w.fired, hung...)
	dump := !w.dumped
	w.dumped = true
	w.mu.Unlock()
	for _, h := range hung {
		w.rec.event("", "watchdog", "hang", h)
		w.t.Errorf("watchdog: %s", h)
	}
	if dump {
		w.t.Logf("watchdog: goroutine dump:\n%s", allStacks())
	}
}

// close stops the monitor. It is safe to call more than once.
func (w *watchdog) close() {
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.done
}

type watchdogFigures struct {
	Calls        uint64   `json:"calls_watched"`
	Fired        []string `json:"fired"`
	MaxOverrunMS float64  `json:"max_return_past_deadline_net_ms"`
	MaxOverrunOf string   `json:"max_return_past_deadline_call"`
	MaxRawMS     float64  `json:"max_return_past_deadline_raw_ms"`
	GraceMS      float64  `json:"grace_ms"`
}

func (w *watchdog) figures() watchdogFigures {
	w.mu.Lock()
	defer w.mu.Unlock()
	f := watchdogFigures{Calls: w.total, Fired: append([]string(nil), w.fired...), GraceMS: ms(w.grace)}
	if w.maxOver > -time.Hour {
		f.MaxOverrunMS, f.MaxOverrunOf, f.MaxRawMS = ms(w.maxOver), w.maxName, ms(w.maxRaw)
	}
	return f
}

func allStacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}
