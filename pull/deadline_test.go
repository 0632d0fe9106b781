package pull_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// The deadline rule of Fetch and Next: a Fetch whose wait ends with no
// message returns an empty batch and no error (as nats.go does), at its
// deadline or when a NoWait pull finds nothing; Next, which has no batch
// to return, fails: at the deadline with an error matching ErrNoMessages,
// conn.ErrTimeout and context.DeadlineExceeded, and with ErrNoMessages
// (not a timeout) when a NoWait pull finds nothing. A canceled ctx is
// context.Canceled; a deadline that passed before the call is the timeout
// error; what arrived before the wait ended is returned with a nil error.
func TestDeadlineRule(t *testing.T) {
	timeout := []error{pull.ErrNoMessages, pull.ErrFetchTimeout, conn.ErrTimeout, context.DeadlineExceeded}
	cases := []struct {
		name      string
		published int
		call      func(ctx context.Context, c *pull.Consumer) ([]*jsapi.Msg, error)
		ctx       func(ctx context.Context, c *pull.Consumer, e *env) (context.Context, context.CancelFunc)
		msgs      int
		empty     bool // no message, no error
		match     []error
		notMatch  []error
	}{
		{
			name: "Next, deadline, nothing", call: next(), ctx: within(300 * time.Millisecond),
			match: timeout, notMatch: []error{context.Canceled},
		},
		{
			name: "Fetch, deadline, nothing", call: fetch(5), ctx: within(300 * time.Millisecond),
			empty: true,
		},
		{
			name: "Fetch with heartbeats, deadline, nothing", call: fetch(5, pull.FetchHeartbeat(100*time.Millisecond)), ctx: within(500 * time.Millisecond),
			empty: true,
		},
		{
			name: "Fetch, deadline, some", published: 2, call: fetch(5), ctx: within(300 * time.Millisecond),
			msgs: 2,
		},
		{
			name: "Next, deadline, one", published: 1, call: next(), ctx: within(300 * time.Millisecond),
			msgs: 1,
		},
		{
			name: "Fetch, NoWait, nothing", call: fetch(5, pull.NoWait()), ctx: within(5 * time.Second),
			empty: true,
		},
		{
			name: "Next, NoWait, nothing", call: next(pull.NoWait()), ctx: within(5 * time.Second),
			match: []error{pull.ErrNoMessages}, notMatch: []error{context.DeadlineExceeded, conn.ErrTimeout},
		},
		{
			name: "Fetch, NoWait, some", published: 3, call: fetch(5, pull.NoWait()), ctx: within(5 * time.Second),
			msgs: 3,
		},
		{
			name: "Fetch, deadline already passed", call: fetch(5), ctx: passed,
			match: timeout, notMatch: []error{context.Canceled},
		},
		{
			name: "Fetch, canceled while waiting", call: fetch(5), ctx: cancelWhenWaiting,
			match: []error{context.Canceled}, notMatch: []error{pull.ErrNoMessages, context.DeadlineExceeded},
		},
		{
			name: "Next, canceled while waiting", call: next(), ctx: cancelWhenWaiting,
			match: []error{context.Canceled}, notMatch: []error{pull.ErrNoMessages, context.DeadlineExceeded},
		},
		{
			name: "Next, canceled before", call: next(), ctx: canceled,
			match: []error{context.Canceled}, notMatch: []error{pull.ErrNoMessages, context.DeadlineExceeded},
		},
	}
	e := newEnv(t, jsapi.StorageMemory)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			subject := fmt.Sprintf("s.rule.%d", i)
			info, err := e.js.CreateConsumer(e.ctx, "S", jsapi.ConsumerConfig{Durable: fmt.Sprint("R", i), FilterSubject: subject})
			if err != nil {
				t.Fatal(err)
			}
			c, err := pull.FromInfo(e.js, info)
			if err != nil {
				t.Fatal(err)
			}
			for j := range tc.published {
				if _, err := e.js.Publish(e.ctx, subject, []byte(fmt.Sprint(j))); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := tc.ctx(e.ctx, c, e)
			defer cancel()
			msgs, err := tc.call(ctx, c)
			if len(msgs) != tc.msgs {
				t.Fatalf("%d messages (%v), want %d", len(msgs), err, tc.msgs)
			}
			if tc.msgs > 0 && err != nil {
				t.Fatalf("%d messages with error %v, want nil", len(msgs), err)
			}
			if tc.empty {
				if err != nil {
					t.Fatalf("no message and error %v, want none", err)
				}
				return
			}
			if tc.msgs == 0 && err == nil {
				t.Fatal("no message and no error")
			}
			for _, target := range tc.match {
				if !errors.Is(err, target) {
					t.Errorf("%v does not match %v", err, target)
				}
			}
			for _, target := range tc.notMatch {
				if errors.Is(err, target) {
					t.Errorf("%v matches %v", err, target)
				}
			}
		})
	}
}

func fetch(n int, opts ...pull.FetchOpt) func(context.Context, *pull.Consumer) ([]*jsapi.Msg, error) {
	return func(ctx context.Context, c *pull.Consumer) ([]*jsapi.Msg, error) { return c.Fetch(ctx, n, opts...) }
}

func next(opts ...pull.FetchOpt) func(context.Context, *pull.Consumer) ([]*jsapi.Msg, error) {
	return func(ctx context.Context, c *pull.Consumer) ([]*jsapi.Msg, error) {
		m, err := c.Next(ctx, opts...)
		if m == nil {
			return nil, err
		}
		return []*jsapi.Msg{m}, err
	}
}

func within(d time.Duration) func(context.Context, *pull.Consumer, *env) (context.Context, context.CancelFunc) {
	return func(ctx context.Context, _ *pull.Consumer, _ *env) (context.Context, context.CancelFunc) {
		return context.WithTimeout(ctx, d)
	}
}

func passed(ctx context.Context, _ *pull.Consumer, _ *env) (context.Context, context.CancelFunc) {
	return context.WithDeadline(ctx, time.Now().Add(-time.Second))
}

func canceled(ctx context.Context, _ *pull.Consumer, _ *env) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	return ctx, cancel
}

// cancelWhenWaiting cancels the context once the call's pull waits at the
// server.
func cancelWhenWaiting(ctx context.Context, c *pull.Consumer, e *env) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			info, err := c.Info(e.ctx)
			if err == nil && info.NumWaiting > 0 {
				cancel()
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(5 * time.Millisecond): // polling interval
			}
		}
	})
	return ctx, func() { cancel(); wg.Wait() }
}

// Without a deadline Fetch and Next wait DefaultFetchWait, then end as at
// a deadline: Fetch empty with no error, Next with the timeout error (a
// fake clock: the scripted server of synctest_test.go
// never answers the pull).
func TestSynctestDefaultFetchWait(t *testing.T) {
	for _, call := range []string{"Fetch", "Next"} {
		t.Run(call, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				j, cons := startScriptedConsumer(t)
				t0 := time.Now()
				var err error
				if call == "Fetch" {
					msgs, ferr := cons.Fetch(context.Background(), 10)
					if len(msgs) != 0 {
						t.Fatalf("%d messages", len(msgs))
					}
					err = ferr
				} else {
					_, err = cons.Next(context.Background())
				}
				if waited := time.Since(t0); waited != pull.DefaultFetchWait {
					t.Fatalf("waited %v, want DefaultFetchWait %v", waited, pull.DefaultFetchWait)
				}
				if call == "Fetch" && err != nil {
					t.Fatalf("Fetch without a deadline ended with %v, want no error", err)
				}
				if call == "Next" && (!errors.Is(err, pull.ErrNoMessages) || !errors.Is(err, conn.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded)) {
					t.Fatalf("Next without a deadline ended with %v", err)
				}
				p := <-j.pulls
				want := fmt.Sprintf(`"expires":%d`, int64(pull.DefaultFetchWait-50*time.Millisecond))
				if !strings.Contains(p.body, want) {
					t.Fatalf("pull %s, want %s", p.body, want)
				}
			})
		})
	}
}
