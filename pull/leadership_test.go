package pull_test

// More regression and fault-scenario tests against a real embedded server
// (RELIABILITY.md sections (a) and (b)), through internal/faultproxy where
// the network must misbehave.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/internal/testserver"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// newProxy starts a fault proxy in front of s.
func newProxy(t *testing.T, s *testserver.Server) *faultproxy.Proxy {
	t.Helper()
	_, hp, _ := strings.Cut(s.URL(), "://")
	p, err := faultproxy.New(hp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

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

// consumerLeader returns the index of the server leading the consumer, or
// -1.
func consumerLeader(cl *testserver.Cluster, stream, consumer string) int {
	for i, s := range cl.Servers() {
		if srv := s.Srv(); srv != nil && srv.JetStreamIsConsumerLeader("$G", stream, consumer) {
			return i
		}
	}
	return -1
}

// nats.go#2063: a 409 "Leadership Change" ends the outstanding pulls. The
// consumer must pull again at once, not only when the missed-heartbeat
// watchdog fires (or never, the bug). A durable pull consumer of an R3
// stream is parked at MaxAckPending with a pull waiting at the consumer
// leader and plenty still pending; the leader steps down via
// $JS.API.CONSUMER.LEADER.STEPDOWN. Every message must then arrive, well
// before the watchdog could have fired (2 × a 4 s heartbeat), with the
// leadership change reported and no missed heartbeat.
func TestRegressionNatsGo2063RepullAfterLeadershipChange(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	cl := testserver.StartCluster(t, 3, testserver.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, cl.URLs(), conn.ReconnectBackoff(20*time.Millisecond, 200*time.Millisecond), conn.ReconnectJitter(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jsapi.New(nc)
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "R", Subjects: []string{"r.>"}, Replicas: 3}); err != nil {
		t.Fatal(err)
	}
	cl.WaitStreamLeader(t, "", "R")
	const total = 300
	for i := range total {
		if _, err := js.Publish(ctx, "r.x", []byte(fmt.Sprint(i)), jsapi.MsgID(fmt.Sprint(i)), jsapi.RetryOnNoResponders(20, 50*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	const held = 20
	c, err := pull.CreateOrUpdate(ctx, js, "R", jsapi.ConsumerConfig{
		Durable: "C", AckPolicy: jsapi.AckExplicit, AckWait: 2 * time.Second, MaxAckPending: held,
	})
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 20*time.Second, "a consumer leader", func() bool { return consumerLeader(cl, "R", "C") >= 0 })

	const hb = 4 * time.Second
	var reports errLog
	mctx, mcancel := context.WithTimeout(ctx, 30*time.Second)
	defer mcancel()
	seen := map[uint64]bool{}
	var hold []*jsapi.Msg
	var steppedAt time.Time
	var pendingAtStepDown uint64
	for m, err := range c.Messages(mctx, pull.MaxMessages(50), pull.Expires(20*time.Second), pull.Heartbeat(hb), reports.opt()) {
		if err != nil {
			t.Fatalf("Messages ended after %d of %d (stepped down %v ago): %v; reports %v",
				len(seen), total, time.Since(steppedAt), err, reports.String())
		}
		md, _ := m.Metadata()
		seen[md.StreamSeq] = true
		if steppedAt.IsZero() {
			// Unacked: at MaxAckPending the leader keeps the pull waiting.
			hold = append(hold, m)
			if len(hold) < held {
				continue
			}
			pendingAtStepDown = md.NumPending
			old := consumerLeader(cl, "R", "C")
			stepDown(t, ctx, nc, "R", "C")
			waitUntil(t, 20*time.Second, "a new consumer leader", func() bool {
				l := consumerLeader(cl, "R", "C")
				return l >= 0 && l != old
			})
			steppedAt = time.Now()
			for _, h := range hold {
				h.Ack()
			}
			continue
		}
		m.Ack()
		if len(seen) == total {
			break
		}
	}
	took := time.Since(steppedAt)
	t.Logf("all %d delivered %v after the step-down (%d pending then); reports: %v", total, took, pendingAtStepDown, reports.String())
	if pendingAtStepDown == 0 {
		t.Fatal("nothing was pending at the step-down: the scenario did not happen")
	}
	if n := reports.count(pull.ErrLeadershipChange); n == 0 {
		t.Fatal("no 409 Leadership Change was reported")
	}
	if n := reports.count(pull.ErrNoHeartbeat); n != 0 {
		t.Fatalf("recovered through the missed-heartbeat watchdog (%d reports), not by pulling again on the 409", n)
	}
	if took >= 2*hb {
		t.Fatalf("took %v after the step-down, the watchdog's bound is %v: no re-pull on the 409", took, 2*hb)
	}
}

// stepDown asks the consumer's leader to step down.
func stepDown(t *testing.T, ctx context.Context, nc *conn.Conn, stream, consumer string) {
	t.Helper()
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	m, err := nc.Request(rctx, "$JS.API.CONSUMER.LEADER.STEPDOWN."+stream+"."+consumer, nil)
	if err != nil {
		t.Fatalf("step-down: %v", err)
	}
	var resp struct {
		Success bool            `json:"success"`
		Error   *jsapi.APIError `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &resp); err != nil || !resp.Success {
		t.Fatalf("step-down: %s (%v)", m.Data, err)
	}
}

// nats.go#1900: a named consumer with a short InactiveThreshold is deleted
// by the server while the link to it is stalled (its pulls expire, nobody
// pulls). Once the link works again, Messages must end with the terminal
// pull.ErrConsumerDeleted (the re-pull finds no responder and the consumer
// lookup says it is gone) instead of looping forever on missed heartbeats.
func TestRegressionNatsGo1900InactiveThresholdDeletionSurfaced(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	p := newProxy(t, s)
	e := envOn(t, s, p.URL(), jsapi.StorageMemory) // the consumer's side, proxied
	admin := envOn(t, s, s.URL(), jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{Durable: "C", InactiveThreshold: time.Second})
	admin.publish(t, 5)

	const hb = 500 * time.Millisecond
	var reports errLog
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	got, done := consume(ctx, c, pull.Expires(time.Second), pull.Heartbeat(hb), reports.opt())
	expectRange(t, ctx, got, done, 1, 5) // all acknowledged: nothing keeps the consumer alive

	p.Stall(faultproxy.Up, true)
	p.Stall(faultproxy.Down, true)
	stalledAt := time.Now()
	waitUntil(t, 15*time.Second, "the server to delete the inactive consumer", func() bool {
		ictx, icancel := context.WithTimeout(ctx, 2*time.Second)
		defer icancel()
		_, err := admin.js.Consumer(ictx, "S", "C")
		return errors.Is(err, jsapi.ErrConsumerNotFound)
	})
	t.Logf("consumer deleted %v into the stall", time.Since(stalledAt))
	select {
	case err := <-done:
		t.Fatalf("Messages ended while the link was stalled: %v", err)
	default:
	}
	p.Stall(faultproxy.Up, false)
	p.Stall(faultproxy.Down, false)
	liftedAt := time.Now()

	select {
	case err := <-done:
		if !errors.Is(err, pull.ErrConsumerDeleted) {
			t.Fatalf("Messages ended with %v, want pull.ErrConsumerDeleted", err)
		}
		t.Logf("terminal %v, %v after the stall was lifted; reports: %v", err, time.Since(liftedAt), reports.String())
	case seq := <-got:
		t.Fatalf("stream seq %d delivered by a deleted consumer", seq)
	case <-time.After(10 * time.Second):
		t.Fatalf("no terminal error 10s after the stall, reports: %v (%d missed heartbeats)",
			reports.String(), reports.count(pull.ErrNoHeartbeat))
	}
}

// nats.rs#860 (F06/F20): a pull consumer whose link goes silent (black
// hole: the proxy holds bytes both ways, sockets stay open, connection
// pings too rare to notice) must surface pull.ErrNoHeartbeat within about
// 2-2¼ heartbeats (asserted < 4 × heartbeat for noisy machines), keep
// going while the stall lasts, and deliver new messages once it ends.
func TestRegressionNatsRs860StallSurfaced(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	p := newProxy(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, p.URL(), conn.PingInterval(time.Minute), conn.MaxPingsOutstanding(2),
		conn.ReconnectBackoff(20*time.Millisecond, 200*time.Millisecond), conn.ReconnectJitter(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jsapi.New(nc)
	e := &env{s: s, nc: nc, js: js, ctx: ctx}
	admin := envOn(t, s, s.URL(), jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})

	const hb = 500 * time.Millisecond
	var reports errLog
	got, done := consume(ctx, c, pull.Expires(5*time.Second), pull.Heartbeat(hb), reports.opt())
	admin.publish(t, 5)
	expectRange(t, ctx, got, done, 1, 5)
	// Start from a live link: a heartbeat (bytes with no message) came
	// through after the messages.
	after := p.BytesDown()
	waitUntil(t, 10*hb, "an idle heartbeat", func() bool { return p.BytesDown() > after })

	p.Stall(faultproxy.Up, true)
	p.Stall(faultproxy.Down, true)
	stalledAt := time.Now()
	var detected time.Time
	waitUntil(t, 10*time.Second, "pull.ErrNoHeartbeat", func() bool {
		var ok bool
		detected, ok = reports.firstAfter(pull.ErrNoHeartbeat, stalledAt)
		return ok
	})
	lat := detected.Sub(stalledAt)
	t.Logf("stall surfaced as ErrNoHeartbeat after %v (heartbeat %v, promised 2-2¼ ×)", lat, hb)
	if lat >= 4*hb {
		t.Fatalf("stall surfaced after %v, want < %v", lat, 4*hb)
	}
	// Keep the black hole for a few more heartbeats: missed heartbeats
	// are not terminal.
	time.Sleep(3 * hb) // holding the fault
	select {
	case err := <-done:
		t.Fatalf("Messages ended during the stall: %v", err)
	default:
	}
	p.Stall(faultproxy.Up, false)
	p.Stall(faultproxy.Down, false)
	admin.publish(t, 5)
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	expectRange(t, rctx, got, done, 6, 10)
	n := reports.count(pull.ErrNoHeartbeat)
	t.Logf("%d missed-heartbeat reports in all", n)
	// Each report was counted first (Consumer.Stats), and each forgot the
	// pulls (a reset).
	if st := c.Stats(); st.MissedHeartbeats < uint64(n) || st.Resets < st.MissedHeartbeats {
		t.Fatalf("Stats after %d missed-heartbeat reports: %+v", n, st)
	}
}

// F03 (b): a durable pull consumer of a MEMORY stream; the server restarts
// and both are gone. Messages must not go silent: it ends with the
// terminal jsapi.ErrStreamNotFound soon after the reconnect.
func TestF03DurablePullOnLostMemoryStreamSurfaced(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	e.publish(t, 3)
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	var reports errLog
	var reconnects atomic.Int32
	defer e.nc.OnReconnect(func() { reconnects.Add(1) })()
	got, done := consume(ctx, c, pull.Expires(time.Second), pull.Heartbeat(200*time.Millisecond), reports.opt())
	expectRange(t, ctx, got, done, 1, 3)

	e.s.Restart(t)
	restartedAt := time.Now()
	select {
	case err := <-done:
		if !errors.Is(err, jsapi.ErrStreamNotFound) {
			t.Fatalf("Messages ended with %v, want jsapi.ErrStreamNotFound", err)
		}
		t.Logf("terminal %v, %v after the restart (%d reconnects); reports: %v", err, time.Since(restartedAt), reconnects.Load(), reports.String())
	case seq := <-got:
		t.Fatalf("stream seq %d delivered from a lost stream", seq)
	case <-time.After(10 * time.Second):
		t.Fatalf("Messages silent 10s after losing its stream; reports: %v", reports.String())
	}
	if reconnects.Load() == 0 {
		t.Fatal("ended without the restart being seen as a reconnect")
	}
}
