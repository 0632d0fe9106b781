package conn_test

import (
	"sync"
	"time"

	"github.com/natsio/natsio/conn"
)

// timedEvent is an event with the fake time it was delivered at, relative to
// the start of the test.
type timedEvent struct {
	conn.Event
	at time.Duration
}

// timedEvents records events with their fake time.
type timedEvents struct {
	start time.Time
	mu    sync.Mutex
	evs   []timedEvent
	ch    chan timedEvent
}

func newTimedEvents(start time.Time) *timedEvents {
	return &timedEvents{start: start, ch: make(chan timedEvent, 1024)}
}

func (r *timedEvents) opt() conn.Option {
	return conn.OnEvent(func(ev conn.Event) {
		e := timedEvent{ev, time.Since(r.start)}
		r.mu.Lock()
		r.evs = append(r.evs, e)
		r.mu.Unlock()
		r.ch <- e
	})
}

func (r *timedEvents) all() []timedEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]timedEvent(nil), r.evs...)
}

// wait returns the next event of kind k (skipping others).
func (r *timedEvents) wait(k conn.EventKind) timedEvent {
	for e := range r.ch {
		if e.Kind == k {
			return e
		}
	}
	panic("unreachable")
}
