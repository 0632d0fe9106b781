package chaos

import (
	"sync"
	"sync/atomic"
	"time"
)

// lagMeter measures the time the process could not run: a goroutine sleeps
// 5 ms again and again and adds up how late it wakes. On a shared 2-core
// machine other processes (or the embedded servers' own bursts) starve the
// test for tens of milliseconds, sometimes for seconds; every timer of the
// client is then late by as much, through no fault of its own.
//
// Timing bounds of the oracle (watchdog, request overrun, stall detection,
// watch probes, consumer progress) are judged net of the lag accumulated
// while the measured call ran, and the raw values are reported next to the
// net ones. A real hang is never excused: the meter keeps running and
// accumulates nothing while the process is healthy.
type lagMeter struct {
	stolen atomic.Int64 // accumulated lateness, ns
	last   atomic.Int64 // unix ns of the meter's last wake-up

	mu      sync.Mutex
	freezes []freeze
	maxLag  time.Duration

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// freeze is a wake-up later than freezeMin.
type freeze struct {
	At  time.Time
	Lag time.Duration
}

const (
	lagTick   = 5 * time.Millisecond
	lagNoise  = time.Millisecond // lateness below this is timer noise
	freezeMin = 50 * time.Millisecond
)

func newLagMeter() *lagMeter {
	l := &lagMeter{stop: make(chan struct{}), done: make(chan struct{})}
	go l.run()
	return l
}

func (l *lagMeter) run() {
	defer close(l.done)
	defer l.last.Store(0) // stopped: nothing pending any more
	last := time.Now()
	l.last.Store(last.UnixNano())
	for {
		select {
		case <-l.stop:
			return
		default:
		}
		time.Sleep(lagTick)
		now := time.Now()
		lag := now.Sub(last) - lagTick
		last = now
		if lag <= lagNoise {
			l.last.Store(now.UnixNano())
			continue
		}
		l.stolen.Add(int64(lag))
		l.last.Store(now.UnixNano())
		if lag >= freezeMin {
			l.mu.Lock()
			if len(l.freezes) < 1000 {
				l.freezes = append(l.freezes, freeze{At: now.Add(-lag), Lag: lag})
			}
			l.maxLag = max(l.maxLag, lag)
			l.mu.Unlock()
		}
	}
}

// total is the lateness accumulated so far, including a freeze still in
// progress (the meter has not woken up yet to book it); the difference of
// two readings is the time lost between them.
func (l *lagMeter) total() time.Duration {
	if l == nil {
		return 0
	}
	stolen := time.Duration(l.stolen.Load())
	var pending time.Duration
	if last := l.last.Load(); last != 0 {
		pending = time.Since(time.Unix(0, last)) - lagTick
	}
	if pending <= lagNoise {
		pending = 0
	}
	// A wake-up between the two loads would count its lag twice; the
	// second reading is then stale by at most one tick.
	if again := time.Duration(l.stolen.Load()); again != stolen {
		return again
	}
	return stolen + pending
}

func (l *lagMeter) close() {
	l.once.Do(func() { close(l.stop) })
	<-l.done
}

type lagFigures struct {
	TotalMS  float64  `json:"total_lag_ms"`
	Freezes  int      `json:"wakeups_later_than_50ms"`
	MaxLagMS float64  `json:"max_lag_ms"`
	Worst    []string `json:"worst,omitempty"`
}

func (l *lagMeter) figures(start time.Time) lagFigures {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := lagFigures{TotalMS: ms(l.total()), Freezes: len(l.freezes), MaxLagMS: ms(l.maxLag)}
	for _, fr := range l.freezes {
		if fr.Lag >= 250*time.Millisecond && len(f.Worst) < 20 {
			f.Worst = append(f.Worst, fmtDur(fr.At.Sub(start))+" "+fr.Lag.Round(time.Millisecond).String())
		}
	}
	return f
}
