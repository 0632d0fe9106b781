package pull_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pull"
)

func TestMain(m *testing.M) {
	natstest.RunIfChild()
	os.Exit(m.Run())
}

type env struct {
	s   *natstest.Server
	nc  *conn.Conn
	js  *jsapi.JS
	ctx context.Context
}

func newEnv(t testing.TB, storage jsapi.StorageType) *env {
	t.Helper()
	s := natstest.NewServer(t)
	return envOn(t, s, s.URL(), storage)
}

func envOn(t testing.TB, s *natstest.Server, url string, storage jsapi.StorageType) *env {
	t.Helper()
	j := testutil.JSEnvOn(t, s, url)
	nc, js, ctx := j.Conn, j.JS, j.Ctx
	if _, err := js.CreateOrUpdateStream(ctx, jsapi.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Storage: storage}); err != nil {
		t.Fatal(err)
	}
	return &env{s: s, nc: nc, js: js, ctx: ctx}
}

func (e *env) publish(t testing.TB, n int) {
	t.Helper()
	for i := range n {
		if _, err := e.js.Publish(e.ctx, "s.x", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
}

// reconnect makes the client drop its connection and waits until it has
// reconnected (and resubscribed).
func (e *env) reconnect(t testing.TB) {
	t.Helper()
	reconnected := make(chan struct{}, 1)
	remove := e.nc.OnReconnect(func() { reconnected <- struct{}{} })
	defer remove()
	e.nc.ForceReconnect()
	select {
	case <-reconnected:
	case <-e.ctx.Done():
		t.Fatal("no reconnect")
	}
}

// publishAfterRestart publishes n messages while the client may still be
// finding out that its server restarted: a publish whose link dropped
// before the ack (conn.ErrDisconnected, fate unknown) is sent again with
// the same message id, which the stream's duplicate window drops if the
// first one was stored.
func (e *env) publishAfterRestart(t testing.TB, n int) {
	t.Helper()
	for i := range n {
		id := jsapi.MsgID(fmt.Sprintf("after-restart-%d", i))
		for {
			_, err := e.js.Publish(e.ctx, "s.x", []byte(fmt.Sprint(i)), id)
			if err == nil {
				break
			}
			if !errors.Is(err, conn.ErrDisconnected) {
				t.Fatal(err)
			}
		}
	}
}

// otherJS returns a JetStream handle on a connection of its own, closed
// when the test ends.
func (e *env) otherJS(t testing.TB) *jsapi.JS {
	t.Helper()
	nc, err := conn.Connect(e.ctx, e.s.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	js, _ := jsapi.New(nc)
	return js
}

// bindOther binds consumer C through a connection of its own: a second
// client of the same consumer.
func (e *env) bindOther(t testing.TB) *pull.Consumer {
	t.Helper()
	js := e.otherJS(t)
	info, err := js.Consumer(e.ctx, "S", "C")
	if err != nil {
		t.Fatal(err)
	}
	c, err := pull.FromInfo(js, info)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (e *env) consumer(t testing.TB, cfg jsapi.ConsumerConfig) *pull.Consumer {
	t.Helper()
	if cfg.Durable == "" {
		cfg.Durable = "C"
	}
	if cfg.AckPolicy == "" {
		cfg.AckPolicy = jsapi.AckExplicit
	}
	info, err := e.js.CreateOrUpdateConsumer(e.ctx, "S", cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := pull.FromInfo(e.js, info)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFetchAndNext(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, 10)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	ctx, cancel := context.WithTimeout(e.ctx, 2*time.Second)
	defer cancel()
	msgs, err := c.Fetch(ctx, 4)
	if err != nil || len(msgs) != 4 {
		t.Fatalf("fetch: %d %v", len(msgs), err)
	}
	for i, m := range msgs {
		md, _ := m.Metadata()
		if string(m.Data) != fmt.Sprint(i) || md.StreamSeq != uint64(i+1) {
			t.Fatalf("msg %d: %q %+v", i, m.Data, md)
		}
		m.Ack()
	}
	// More requested than available: returns the rest when the pull expires.
	ctx2, cancel2 := context.WithTimeout(e.ctx, 500*time.Millisecond)
	defer cancel2()
	msgs, err = c.Fetch(ctx2, 100)
	if err != nil || len(msgs) != 6 {
		t.Fatalf("fetch rest: %d %v", len(msgs), err)
	}
	// Nothing left: NoWait returns an empty batch at once.
	msgs, err = c.Fetch(e.ctx, 5, pull.NoWait())
	if err != nil || len(msgs) != 0 {
		t.Fatalf("no-wait: %d %v", len(msgs), err)
	}
	ctx3, cancel3 := context.WithTimeout(e.ctx, 300*time.Millisecond)
	defer cancel3()
	if _, err := c.Next(ctx3); !errors.Is(err, pull.ErrNoMessages) {
		t.Fatalf("next on empty: %v", err)
	}
	e.publish(t, 1)
	m, err := c.Next(e.ctx)
	if err != nil || string(m.Data) != "0" {
		t.Fatalf("next: %v %v", m, err)
	}
}

func TestFetchHeartbeats(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	ctx, cancel := context.WithTimeout(e.ctx, 1500*time.Millisecond)
	defer cancel()
	// Idle consumer: heartbeats keep the fetch alive until its deadline.
	msgs, err := c.Fetch(ctx, 1, pull.FetchHeartbeat(200*time.Millisecond))
	if err != nil || len(msgs) != 0 {
		t.Fatalf("idle fetch with heartbeats: %d %v", len(msgs), err)
	}
	if _, err := c.Fetch(e.ctx, 1, pull.FetchHeartbeat(time.Hour)); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("heartbeat longer than half the wait: %v", err)
	}
}

func TestMessagesConsume(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	const n = 3000
	published := make(chan error, 1)
	go func() {
		for i := range n {
			if _, err := e.js.Publish(e.ctx, "s.x", []byte(fmt.Sprint(i))); err != nil {
				published <- err
				return
			}
		}
		published <- nil
	}()
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	seen := 0
	for m, err := range c.Messages(ctx, pull.MaxMessages(100)) {
		if err != nil {
			t.Fatal(err)
		}
		md, _ := m.Metadata()
		if md.StreamSeq != uint64(seen+1) {
			t.Fatalf("got seq %d, want %d", md.StreamSeq, seen+1)
		}
		m.Ack()
		if seen++; seen == n {
			break
		}
	}
	// The last acknowledgement may still be on its way to the publisher.
	if err := <-published; err != nil {
		t.Fatal(err)
	}
	info, _ := c.Info(e.ctx)
	if info.NumPending != 0 {
		t.Fatalf("num_pending %d", info.NumPending)
	}
}

func TestMessagesEndsOnConsumerDelete(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	e.publish(t, 3)
	base := runtime.NumGoroutine()
	var got int
	var last error
	for m, err := range c.Messages(e.ctx, pull.Expires(2*time.Second)) {
		if err != nil {
			last = err
			break
		}
		m.Ack()
		if got++; got == 3 {
			if err := e.js.DeleteConsumer(e.ctx, "S", "C"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !errors.Is(last, pull.ErrConsumerDeleted) {
		t.Fatalf("ended with %v", last)
	}
	waitGoroutines(t, base)
	// Fetch and Next on the deleted consumer fail the same way.
	if _, err := c.Fetch(e.ctx, 1); !errors.Is(err, pull.ErrConsumerDeleted) {
		t.Fatalf("fetch: %v", err)
	}
}

func waitGoroutines(t testing.TB, base int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines: %d > %d\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestMessagesStopsOnCancel(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	base := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() {
		for _, err := range c.Messages(ctx) {
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	e.publish(t, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("ended with %v", err)
	}
	waitGoroutines(t, base)
}

// F01: a server restart under Messages (file store): nothing lost.
func TestMessagesSurvivesRestart(t *testing.T) {
	e := newEnv(t, jsapi.StorageFile)
	c := e.consumer(t, jsapi.ConsumerConfig{AckWait: 2 * time.Second})
	const n = 400
	e.publish(t, n/2)
	var errs atomic.Int32
	got := map[uint64]bool{}
	restarted := false
	for m, err := range c.Messages(e.ctx, pull.MaxMessages(50), pull.Expires(2*time.Second),
		pull.OnError(func(error) { errs.Add(1) })) {
		if err != nil {
			t.Fatal(err)
		}
		md, _ := m.Metadata()
		got[md.StreamSeq] = true
		if err := m.AckSync(e.ctx); err != nil && !errors.Is(err, conn.ErrDisconnected) {
			// An ack lost with the connection is redelivered later.
			t.Logf("ack: %v", err)
		}
		if len(got) == n/4 && !restarted {
			restarted = true
			if err := e.s.Restart(); err != nil {
				t.Fatal(err)
			}
			e.publishAfterRestart(t, n/2)
		}
		if len(got) == n {
			break
		}
	}
	for i := uint64(1); i <= n; i++ {
		if !got[i] {
			t.Fatalf("message %d never delivered", i)
		}
	}
}

// Priority groups: pinned_client delivers to one client; the other waits.
func TestPinnedClient(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{PriorityPolicy: jsapi.PriorityPinnedClient,
		PriorityGroups: []string{"g"}, PriorityTimeout: 5 * time.Second})
	if _, err := c.Fetch(e.ctx, 1); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("pull without group: %v", err)
	}
	if _, err := c.Fetch(e.ctx, 1, pull.FetchGroup("other")); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("pull with unknown group: %v", err)
	}
	e.publish(t, 20)
	c2, _ := pull.FromInfo(e.js, c.CachedInfo())
	ctx, cancel := context.WithTimeout(e.ctx, time.Second)
	defer cancel()
	msgs, err := c.Fetch(ctx, 5, pull.FetchGroup("g"))
	if err != nil || len(msgs) != 5 {
		t.Fatalf("pinned fetch: %d %v", len(msgs), err)
	}
	for _, m := range msgs {
		m.Ack()
	}
	// The second client is not pinned: it gets nothing while the pin holds.
	ctx2, cancel2 := context.WithTimeout(e.ctx, 500*time.Millisecond)
	defer cancel2()
	msgs2, err := c2.Fetch(ctx2, 5, pull.FetchGroup("g"))
	if len(msgs2) != 0 {
		t.Fatalf("unpinned client got %d messages (%v)", len(msgs2), err)
	}
	// Unpin: the next client to pull gets the pin.
	if err := e.js.UnpinConsumer(e.ctx, c.Stream(), c.Name(), "g"); err != nil {
		t.Fatal(err)
	}
	ctx3, cancel3 := context.WithTimeout(e.ctx, 2*time.Second)
	defer cancel3()
	msgs2, err = c2.Fetch(ctx3, 5, pull.FetchGroup("g"))
	if len(msgs2) == 0 {
		t.Fatalf("after unpin the other client got nothing (%v)", err)
	}
}

func TestOverflowGroup(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{PriorityPolicy: jsapi.PriorityOverflow, PriorityGroups: []string{"g"}})
	e.publish(t, 5)
	ctx, cancel := context.WithTimeout(e.ctx, 300*time.Millisecond)
	defer cancel()
	// Served only past 10 pending: nothing.
	msgs, _ := c.Fetch(ctx, 5, pull.FetchGroup("g"), pull.FetchMinPending(10))
	if len(msgs) != 0 {
		t.Fatalf("overflow pull below min_pending got %d", len(msgs))
	}
	// Served while at least 3 are pending: 3 of the 5 (5, 4 and 3 pending).
	ctx2, cancel2 := context.WithTimeout(e.ctx, time.Second)
	defer cancel2()
	msgs, err := c.Fetch(ctx2, 5, pull.FetchGroup("g"), pull.FetchMinPending(3))
	if err != nil || len(msgs) != 3 {
		t.Fatalf("overflow pull above min_pending: %d %v", len(msgs), err)
	}
	if _, err := c.Fetch(e.ctx, 1, pull.FetchGroup("g"), pull.FetchPriority(1)); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("priority on overflow consumer: %v", err)
	}
}

func TestPrioritized(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{PriorityPolicy: jsapi.PriorityPrioritized, PriorityGroups: []string{"g"}})
	// Two waiting pulls: priority 0 is served before priority 5.
	var wg sync.WaitGroup
	var low, high int
	ctx, cancel := context.WithTimeout(e.ctx, 1500*time.Millisecond)
	defer cancel()
	wg.Go(func() { m, _ := c.Fetch(ctx, 5, pull.FetchGroup("g"), pull.FetchPriority(5)); low = len(m) })
	waitWaiting(t, e, c, 1) // the low-priority pull waits first
	wg.Go(func() { m, _ := c.Fetch(ctx, 5, pull.FetchGroup("g"), pull.FetchPriority(0)); high = len(m) })
	waitWaiting(t, e, c, 2)
	e.publish(t, 5)
	wg.Wait()
	if high != 5 || low != 0 {
		t.Fatalf("priority 0 got %d, priority 5 got %d", high, low)
	}
}

func TestPlainConsumerRejectsGroup(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	if _, err := c.Fetch(e.ctx, 1, pull.FetchGroup("g")); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("got %v", err)
	}
	for _, err := range c.Messages(e.ctx, pull.MinPending(3)) {
		if !errors.Is(err, conn.ErrInvalidOption) {
			t.Fatalf("got %v", err)
		}
		break
	}
}

// waitWaiting polls until the consumer has n waiting pulls.
func waitWaiting(t testing.TB, e *env, c *pull.Consumer, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := c.Info(e.ctx)
		if err == nil && info.NumWaiting >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumer never had %d waiting pulls", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
