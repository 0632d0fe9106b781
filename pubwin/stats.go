package pubwin

import (
	"errors"
	"sync/atomic"
)

// Stats are a window's counters since New. Every future ends exactly once,
// and is counted before its slot is freed and before the window reports
// idle (Complete), so a Stats value always has Published = Acked + Failed
// + TimedOut + Lost + Pending.
type Stats struct {
	// Published counts futures created: publishes that took a slot.
	Published uint64
	// Acked counts futures ended by a PubAck.
	Acked uint64
	// Failed counts futures ended by the stream's error (a *jsapi.APIError,
	// jsapi.ErrNoStreamResponse once retries are used up) or by a send that
	// failed at once (Publish then returned the error).
	Failed uint64
	// TimedOut counts futures ended by ErrAckTimeout; Lost those ended by
	// ErrAckLost (the connection went) or ErrClosed. The messages of both
	// may or may not be stored.
	TimedOut, Lost uint64
	// Retries counts messages sent again (RetryOnNoResponders).
	Retries uint64
	// Stalls counts publishes that found the window full and waited;
	// StallFailures those that gave up with ErrTooManyStalled.
	Stalls, StallFailures uint64
	// Pending is the number of futures awaiting their outcome now,
	// PeakPending the most there ever were, MaxPending the bound.
	Pending, PeakPending, MaxPending int
}

// counters are the window's atomic counts. The outcome counts are added
// under w.mu, with the future leaving the pending set, and Stats reads them
// under w.mu too; the stall counts are added without it.
type counters struct {
	acked, failed, timedOut, lost, retries, stalls, stallFailures atomic.Uint64
}

// settled counts a future that ended with err.
func (c *counters) settled(err error) {
	switch {
	case err == nil:
		c.acked.Add(1)
	case errors.Is(err, ErrAckTimeout):
		c.timedOut.Add(1)
	case errors.Is(err, ErrAckLost) || errors.Is(err, ErrClosed):
		c.lost.Add(1)
	default:
		c.failed.Add(1)
	}
}

// Stats returns the window's counters. It may be called at any time, also
// after Close.
func (w *Window) Stats() Stats {
	w.mu.Lock()
	s := Stats{Published: w.next, Pending: w.pending.len(), PeakPending: w.peak, MaxPending: w.o.maxPending}
	s.Acked = w.count.acked.Load()
	s.Failed = w.count.failed.Load()
	s.TimedOut = w.count.timedOut.Load()
	s.Lost = w.count.lost.Load()
	w.mu.Unlock()
	s.Retries = w.count.retries.Load()
	s.Stalls = w.count.stalls.Load()
	s.StallFailures = w.count.stallFailures.Load()
	return s
}
