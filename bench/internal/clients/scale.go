package clients

import (
	"context"
	"fmt"
	"strconv"
	"sync"
)

// Scale kinds: how a client's cost grows with the number of connections
// and subscriptions it holds. natsio and nats.go only (the raw client has
// no client state to grow).

// IdleConnector: Run(n) opens n more connections (connect and a flush
// round trip each) and keeps them open, idle, until Close. The harness's
// live-heap and peak-RSS figures then say what an idle connection costs.
type IdleConnector interface {
	NewIdleConns(ctx context.Context, cfg Config) (Runner, error)
}

// ManySubscriber: one connection holds cfg.Subs callback subscriptions,
// one per subject SubSubject(cfg.Subject, i); another connection publishes.
// Run(n) publishes n messages round-robin over the subjects and returns
// once the subscriptions have received all n (a lost or malformed message
// is an error).
type ManySubscriber interface {
	NewManySubs(ctx context.Context, cfg Config) (Runner, error)
}

// ManyConnector: cfg.Conns connections in one process, each with a
// callback subscription on its own subject SubSubject(cfg.Subject, i) and
// publishing to it. Run(n) has all connections publish at once, n in total,
// and returns once every message has arrived.
type ManyConnector interface {
	NewManyConns(ctx context.Context, cfg Config) (Runner, error)
}

// SubSubject is the i-th subject of a scale scenario.
func SubSubject(base string, i int) string { return base + "." + strconv.Itoa(i) }

// subSubjects builds the subjects once, before any timed section.
func subSubjects(base string, n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = SubSubject(base, i)
	}
	return s
}

// shares splits n operations over k workers.
func shares(n, k int) []int {
	out := make([]int, k)
	for i := range out {
		out[i] = n / k
		if i < n%k {
			out[i]++
		}
	}
	return out
}

func checkSubs(subs int) error {
	if subs < 1 {
		return fmt.Errorf("%d subscriptions", subs)
	}
	return nil
}

// InFlighter: request/reply with cfg.InFlight requests in flight at once
// on one connection (one goroutine each, each making its share of the run's
// requests one after the other); the responder is on another connection
// in the same process. Every reply must arrive with the right size.
type InFlighter interface {
	NewInFlight(ctx context.Context, cfg Config) (Runner, error)
}

// runInFlight splits n requests over k goroutines, each calling req for
// its share, and returns the first error.
func runInFlight(n, k int, req func() error) error {
	var wg sync.WaitGroup
	var async errAsync
	for _, share := range shares(n, max(1, min(k, n))) {
		wg.Go(func() {
			for range share {
				if err := req(); err != nil {
					async.set(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return async.get()
}
