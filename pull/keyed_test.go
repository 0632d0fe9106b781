package pull_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// keyOracle checks what per-key processing promises: no two handlers of
// one key at once, and each key's messages handled in stream order.
type keyOracle struct {
	mu       sync.Mutex
	inFlight map[string]int
	lastSeq  map[string]uint64
	handled  map[uint64]int
	bad      []string
}

func newKeyOracle() *keyOracle {
	return &keyOracle{inFlight: map[string]int{}, lastSeq: map[string]uint64{}, handled: map[uint64]int{}}
}

func (o *keyOracle) enter(key string, seq uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.inFlight[key]++
	if o.inFlight[key] > 1 {
		o.bad = append(o.bad, fmt.Sprintf("key %s: %d handlers at once", key, o.inFlight[key]))
	}
	if seq <= o.lastSeq[key] {
		o.bad = append(o.bad, fmt.Sprintf("key %s: seq %d after %d", key, seq, o.lastSeq[key]))
	}
}

// leave records the end of a handler; ok tells whether it succeeded (a
// failed message is not the key's last handled one).
func (o *keyOracle) leave(key string, seq uint64, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.inFlight[key]--
	if ok {
		o.lastSeq[key] = seq
		o.handled[seq]++
	}
}

func (o *keyOracle) check(t *testing.T, want int) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, b := range o.bad[:min(len(o.bad), 10)] {
		t.Error(b)
	}
	if len(o.handled) != want {
		t.Errorf("%d distinct messages handled, want %d", len(o.handled), want)
	}
}

func publishKeys(t testing.TB, e *env, keys, perKey int) {
	t.Helper()
	for i := range perKey {
		for k := range keys {
			if _, err := e.js.Publish(e.ctx, "s."+strconv.Itoa(k), []byte(strconv.Itoa(i))); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Per-key parallelism against the classic way to keep order on one
// consumer, MaxAckPending 1: 100 keys, a 5 ms handler, both runs in one
// test; the ratio of their times is the figure, and the per-key order
// oracle must hold.
func TestConsumeKeyedThroughputAgainstMaxAckPendingOne(t *testing.T) {
	const keys, perKey, work = 100, 3, 5 * time.Millisecond
	total := keys * perKey
	e := newEnv(t, jsapi.StorageMemory)
	publishKeys(t, e, keys, perKey)

	// One at a time: MaxAckPending 1.
	serial := e.consumer(t, jsapi.ConsumerConfig{Durable: "serial", MaxAckPending: 1})
	var n atomic.Int64
	done := make(chan struct{})
	t0 := time.Now()
	cc, err := serial.Consume(e.ctx, func(m *jsapi.Msg) {
		time.Sleep(work)
		m.Ack()
		if n.Add(1) == int64(total) {
			close(done)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	serialTime := time.Since(t0)
	cc.Stop()
	<-cc.Closed()

	// Per key.
	keyed := e.consumer(t, jsapi.ConsumerConfig{Durable: "keyed", MaxAckPending: 2000})
	o := newKeyOracle()
	var got atomic.Int64
	kdone := make(chan struct{})
	t0 = time.Now()
	kc, err := keyed.ConsumeKeyed(e.ctx, func(_ context.Context, m *jsapi.Msg) error {
		md, _ := m.Metadata()
		o.enter(m.Subject, md.StreamSeq)
		time.Sleep(work)
		o.leave(m.Subject, md.StreamSeq, true)
		if got.Add(1) == int64(total) {
			close(kdone)
		}
		return nil
	}, pull.Keyed{Workers: keys})
	if err != nil {
		t.Fatal(err)
	}
	<-kdone
	keyedTime := time.Since(t0)
	kc.Drain()
	<-kc.Closed()
	if kc.Err() != nil {
		t.Fatal(kc.Err())
	}
	o.check(t, total)
	info, err := keyed.Info(e.ctx)
	if err != nil || info.NumAckPending != 0 || info.NumPending != 0 {
		t.Fatalf("keyed consumer left ack pending %d, pending %d (%v)", info.NumAckPending, info.NumPending, err)
	}
	ratio := float64(serialTime) / float64(keyedTime)
	st := kc.Stats()
	t.Logf("%d keys × %d msgs, %v handler: MaxAckPending 1 %v, per key %v: %.1fx (max running %d, max buffered %d)",
		keys, perKey, work, serialTime.Round(time.Millisecond), keyedTime.Round(time.Millisecond), ratio, st.MaxRunning, st.MaxBuffered)
	if ratio < 5 {
		t.Fatalf("per-key parallelism only %.1fx faster than MaxAckPending 1", ratio)
	}
}

// A handler that fails once on a message of one key: that message and the
// key's later ones are naked and come back in order; other keys go on.
func TestConsumeKeyedFailureKeepsKeyOrder(t *testing.T) {
	const keys, perKey = 5, 6
	total := keys * perKey
	e := newEnv(t, jsapi.StorageMemory)
	publishKeys(t, e, keys, perKey)
	c := e.consumer(t, jsapi.ConsumerConfig{Durable: "k", AckWait: 30 * time.Second})
	o := newKeyOracle()
	var failed atomic.Bool
	var got atomic.Int64
	done := make(chan struct{})
	kc, err := c.ConsumeKeyed(e.ctx, func(_ context.Context, m *jsapi.Msg) error {
		md, _ := m.Metadata()
		o.enter(m.Subject, md.StreamSeq)
		// Fail the second message of key 3 once.
		if m.Subject == "s.3" && string(m.Data) == "1" && failed.CompareAndSwap(false, true) {
			o.leave(m.Subject, md.StreamSeq, false)
			return errors.New("transient")
		}
		o.leave(m.Subject, md.StreamSeq, true)
		if got.Add(1) == int64(total) {
			close(done)
		}
		return nil
	}, pull.Keyed{Workers: 4, MaxPerKey: 3}, pull.MaxMessages(10))
	if err != nil {
		t.Fatal(err)
	}
	<-done
	kc.Stop()
	<-kc.Closed()
	o.check(t, total)
	if st := kc.Stats(); st.Failed != 1 || st.Handled != uint64(total) {
		t.Fatalf("stats %+v", st)
	}
}

// Bounded memory: with a handler that holds every key, reading stops at
// MaxBufferedMsgs (and a key's queue at MaxPerKey); nothing is dropped.
func TestConsumeKeyedBackpressure(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	publishKeys(t, e, 2, 40)
	c := e.consumer(t, jsapi.ConsumerConfig{Durable: "k"})
	release := make(chan struct{})
	var got atomic.Int64
	done := make(chan struct{})
	kc, err := c.ConsumeKeyed(e.ctx, func(_ context.Context, m *jsapi.Msg) error {
		<-release
		if got.Add(1) == 80 {
			close(done)
		}
		return nil
	}, pull.Keyed{Workers: 2, MaxBufferedMsgs: 8, MaxPerKey: 3}, pull.MaxMessages(4))
	if err != nil {
		t.Fatal(err)
	}
	// Both keys' queues fill up (3 each, including the running one), and
	// then the reader waits.
	for kc.Stats().MaxBuffered < 6 {
		select {
		case <-e.ctx.Done():
			t.Fatal("buffer never filled")
		case <-time.After(time.Millisecond):
		}
	}
	close(release)
	<-done
	kc.Drain()
	<-kc.Closed()
	if st := kc.Stats(); st.MaxBuffered > 6 || st.Handled != 80 || st.MaxRunning > 2 {
		t.Fatalf("stats %+v: the per-key bound (3 × 2 keys) was not kept", st)
	}
}

func TestConsumeKeyedRefusesBadOptions(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{Durable: "k"})
	h := func(context.Context, *jsapi.Msg) error { return nil }
	if _, err := c.ConsumeKeyed(e.ctx, h, pull.Keyed{}, pull.Borrowed()); !errors.Is(err, pull.ErrKeyedBorrowed) || !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("Borrowed: %v", err)
	}
	if _, err := c.ConsumeKeyed(e.ctx, nil, pull.Keyed{}); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("nil handler: %v", err)
	}
	if _, err := c.ConsumeKeyed(e.ctx, h, pull.Keyed{Workers: -1}); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("negative workers: %v", err)
	}
}

func TestConsumeKeyedKeyToken(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	for _, s := range []string{"s.a.1", "s.b.1", "s.a.2"} {
		if _, err := e.js.Publish(e.ctx, s, nil); err != nil {
			t.Fatal(err)
		}
	}
	c := e.consumer(t, jsapi.ConsumerConfig{Durable: "k"})
	var mu sync.Mutex
	keys := map[string]int{}
	var got atomic.Int64
	done := make(chan struct{})
	kc, err := c.ConsumeKeyed(e.ctx, func(_ context.Context, m *jsapi.Msg) error {
		mu.Lock()
		keys[m.Subject[:3]]++
		mu.Unlock()
		if got.Add(1) == 3 {
			close(done)
		}
		return nil
	}, pull.Keyed{KeyToken: 2})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	kc.Stop()
	<-kc.Closed()
	if keys["s.a"] != 2 || keys["s.b"] != 1 {
		t.Fatalf("keys %v", keys)
	}
}

// HoldFor holds back handlers while messages keep arriving; a hold longer
// than AckWait keeps the held messages in progress, so none is redelivered.
func TestConsumeKeyedHoldKeepsMessagesInProgress(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	publishKeys(t, e, 2, 4)
	c := e.consumer(t, jsapi.ConsumerConfig{Durable: "k", AckWait: time.Second})
	const hold = 1500 * time.Millisecond
	var mu sync.Mutex
	var deliveries []uint64
	var first time.Time
	var asked atomic.Bool
	done := make(chan struct{})
	t0 := time.Now()
	kc, err := c.ConsumeKeyed(e.ctx, func(_ context.Context, m *jsapi.Msg) error {
		md, _ := m.Metadata()
		mu.Lock()
		defer mu.Unlock()
		if first.IsZero() {
			first = time.Now()
		}
		deliveries = append(deliveries, md.NumDelivered)
		if len(deliveries) == 8 {
			close(done)
		}
		return nil
	}, pull.Keyed{HoldFor: func(*jsapi.Msg) time.Duration {
		if asked.CompareAndSwap(false, true) {
			return hold
		}
		return 0
	}})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	kc.Drain()
	<-kc.Closed()
	mu.Lock()
	defer mu.Unlock()
	if first.Sub(t0) < hold {
		t.Fatalf("a handler started %v after the start, within the %v hold", first.Sub(t0), hold)
	}
	for i, d := range deliveries {
		if d != 1 {
			t.Fatalf("message %d delivered %d times: the hold let AckWait expire", i, d)
		}
	}
}
