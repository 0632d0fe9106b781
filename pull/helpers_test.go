package pull_test

// Helpers of the fault tests: what Messages reported to OnError, a
// consume loop in the background, waiting for a range of stream sequences
// or for a condition.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/pull"
)

// errLog records the conditions Messages reports to OnError, with the time
// they were reported.
type errLog struct {
	mu   sync.Mutex
	errs []error
	at   []time.Time
}

func (l *errLog) add(err error) {
	l.mu.Lock()
	l.errs = append(l.errs, err)
	l.at = append(l.at, time.Now())
	l.mu.Unlock()
}

func (l *errLog) opt() pull.Opt { return pull.OnError(l.add) }

// count returns how many reports match target.
func (l *errLog) count(target error) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, err := range l.errs {
		if errors.Is(err, target) {
			n++
		}
	}
	return n
}

// firstAfter returns when the first report matching target at or after t0
// was made.
func (l *errLog) firstAfter(target error, t0 time.Time) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, err := range l.errs {
		if errors.Is(err, target) && !l.at[i].Before(t0) {
			return l.at[i], true
		}
	}
	return time.Time{}, false
}

// String summarises the reports: each distinct one with its count.
func (l *errLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var order []string
	n := map[string]int{}
	for _, err := range l.errs {
		k := err.Error()
		if n[k] == 0 {
			order = append(order, k)
		}
		n[k]++
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, k := range order {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s ×%d", k, n[k])
	}
	b.WriteByte(']')
	return b.String()
}

// waitUntil polls cond until it holds, failing after d.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for step := time.Millisecond; !cond(); step = min(2*step, 50*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(step) // polling, not synchronisation
	}
}

// consume runs Messages in the background, acknowledging (AckSync) every
// message and handing its stream sequence to the test; the terminal error
// (or nil) goes to done.
func consume(ctx context.Context, c *pull.Consumer, opts ...pull.Opt) (<-chan uint64, <-chan error) {
	got := make(chan uint64, 1024)
	done := make(chan error, 1)
	go func() {
		for m, err := range c.Messages(ctx, opts...) {
			if err != nil {
				done <- err
				return
			}
			md, _ := m.Metadata()
			actx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_ = m.AckSync(actx)
			cancel()
			got <- md.StreamSeq
		}
		done <- nil
	}()
	return got, done
}

// expectRange waits until every stream sequence in from..to was delivered
// (redeliveries tolerated), failing on a sequence outside the range, on the
// end of Messages or at ctx's end.
func expectRange(t *testing.T, ctx context.Context, got <-chan uint64, done <-chan error, from, to uint64) {
	t.Helper()
	seen := map[uint64]bool{}
	for uint64(len(seen)) < to-from+1 {
		select {
		case seq := <-got:
			if seq < from || seq > to {
				t.Fatalf("got stream seq %d, want %d..%d", seq, from, to)
			}
			seen[seq] = true
		case err := <-done:
			t.Fatalf("Messages ended after %d of %d..%d: %v", len(seen), from, to, err)
		case <-ctx.Done():
			t.Fatalf("only %d of stream seqs %d..%d delivered", len(seen), from, to)
		}
	}
}
