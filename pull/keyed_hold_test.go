package pull_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// A reader that takes over a consumer from another, which received
// messages and left them unacknowledged, holds with HoldConfirmed until the
// consumer shows nothing outstanding elsewhere: the left messages,
// redelivered after AckWait, are handled before their keys' later ones,
// though the hold itself is 1 ms. The same run without HoldConfirmed
// handles later messages first.
func TestConsumeKeyedHoldConfirmedWaitsForRedelivery(t *testing.T) {
	for _, confirmed := range []bool{true, false} {
		e := newEnv(t, jsapi.StorageMemory)
		publishKeys(t, e, 2, 4) // s.0 and s.1, stream sequences 1…8
		c := e.consumer(t, jsapi.ConsumerConfig{Durable: "k", AckWait: time.Second})
		left, err := c.Fetch(e.ctx, 4) // the previous reader's: 1…4, never acknowledged
		if err != nil || len(left) != 4 {
			t.Fatalf("fetch: %d %v", len(left), err)
		}
		publishKeys(t, e, 2, 4) // 9…16
		o := newKeyOracle()
		var mu sync.Mutex
		handled := 0
		done := make(chan struct{})
		kc, err := c.ConsumeKeyed(e.ctx, func(_ context.Context, m *jsapi.Msg) error {
			md, _ := m.Metadata()
			o.enter(m.Subject, md.StreamSeq)
			o.leave(m.Subject, md.StreamSeq, true)
			mu.Lock()
			defer mu.Unlock()
			if handled++; handled == 16 {
				close(done)
			}
			return nil
		}, pull.Keyed{HoldConfirmed: confirmed, HoldFor: holdFirst()})
		if err != nil {
			t.Fatal(err)
		}
		waitDone(t, e.ctx, done)
		kc.Drain()
		<-kc.Closed()
		st := kc.Stats()
		o.mu.Lock()
		bad := o.bad
		o.mu.Unlock()
		if confirmed {
			o.check(t, 16)
			if st.Holds != 1 || st.HoldsUnconfirmed != 0 {
				t.Fatalf("stats %+v: want one confirmed hold", st)
			}
		} else if len(bad) == 0 {
			t.Fatal("without HoldConfirmed the later messages did not go first: the test shows nothing")
		}
		t.Logf("HoldConfirmed %v: order violations %d, stats %+v", confirmed, len(bad), st)
	}
}

// A hold whose confirmation cannot come (another reader keeps its
// messages in progress) ends twice AckWait past its time, counted in
// HoldsUnconfirmed, and the messages here are handled.
func TestConsumeKeyedHoldConfirmedGivesUp(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	publishKeys(t, e, 2, 2)
	c := e.consumer(t, jsapi.ConsumerConfig{Durable: "k", AckWait: time.Second})
	kept, err := c.Fetch(e.ctx, 2)
	if err != nil || len(kept) != 2 {
		t.Fatalf("fetch: %d %v", len(kept), err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				for _, m := range kept {
					_ = m.InProgress()
				}
			}
		}
	})
	defer func() { close(stop); wg.Wait() }()
	var mu sync.Mutex
	var firstAt time.Time
	handled := 0
	done := make(chan struct{})
	start := time.Now()
	kc, err := c.ConsumeKeyed(e.ctx, func(context.Context, *jsapi.Msg) error {
		mu.Lock()
		defer mu.Unlock()
		if firstAt.IsZero() {
			firstAt = time.Now()
		}
		if handled++; handled == 2 {
			close(done)
		}
		return nil
	}, pull.Keyed{HoldConfirmed: true, HoldFor: holdFirst()})
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, e.ctx, done)
	kc.Stop()
	<-kc.Closed()
	st := kc.Stats()
	mu.Lock()
	waited := firstAt.Sub(start)
	mu.Unlock()
	if st.HoldsUnconfirmed != 1 || waited < 2*time.Second {
		t.Fatalf("stats %+v, first handler after %v: want one unconfirmed hold ended after 2 s", st, waited)
	}
	t.Logf("first handler after %v; stats %+v", waited.Round(time.Millisecond), st)
}

// holdFirst returns a Keyed.HoldFor that holds 1 ms on the first message.
func holdFirst() func(*jsapi.Msg) time.Duration {
	var first sync.Once
	return func(*jsapi.Msg) time.Duration {
		d := time.Duration(0)
		first.Do(func() { d = time.Millisecond })
		return d
	}
}

// waitDone waits for ch to be closed, failing t when ctx ends first.
func waitDone(t *testing.T, ctx context.Context, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
}
