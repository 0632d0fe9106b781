package testutil

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/natsio/natsio/conn"
)

// Events records a connection's events, in order, with the time each was
// delivered. The zero value is ready; pass Opt to conn.Connect. It is safe
// for concurrent use.
type Events struct {
	mu   sync.Mutex
	evs  []conn.Event
	when []time.Time
}

// Opt is the option that makes a connection report its events to l.
func (l *Events) Opt() conn.Option {
	return conn.OnEvent(func(e conn.Event) {
		l.mu.Lock()
		l.evs = append(l.evs, e)
		l.when = append(l.when, time.Now())
		l.mu.Unlock()
	})
}

// All returns every event recorded so far.
func (l *Events) All() []conn.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.evs)
}

// Of returns the events of kind k.
func (l *Events) Of(k conn.EventKind) []conn.Event {
	var out []conn.Event
	for _, e := range l.All() {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// Count returns how many events of kind k were recorded.
func (l *Events) Count(k conn.EventKind) int { return len(l.Of(k)) }

// Has reports whether an event of kind k was recorded.
func (l *Events) Has(k conn.EventKind) bool { return l.Count(k) > 0 }

// First returns the first event of kind k and when it was delivered.
func (l *Events) First(k conn.EventKind) (conn.Event, time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, e := range l.evs {
		if e.Kind == k {
			return e, l.when[i], true
		}
	}
	return conn.Event{}, time.Time{}, false
}

// Find returns the first event of kind k for which match (nil: any) holds.
func (l *Events) Find(k conn.EventKind, match func(conn.Event) bool) (conn.Event, bool) {
	for _, e := range l.Of(k) {
		if match == nil || match(e) {
			return e, true
		}
	}
	return conn.Event{}, false
}

// Any reports whether an event of kind k (any kind when k is 0) whose
// error matches target was recorded.
func (l *Events) Any(k conn.EventKind, target error) bool {
	for _, e := range l.All() {
		if (k == 0 || e.Kind == k) && errors.Is(e.Err, target) {
			return true
		}
	}
	return false
}

func (l *Events) String() string {
	var b strings.Builder
	for _, e := range l.All() {
		fmt.Fprintf(&b, "[%v err=%v] ", e.Kind, e.Err)
	}
	return b.String()
}
