package ordered_test

// More regression and fault-scenario tests against a real embedded server
// (RELIABILITY.md sections (a) and (b)).

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/connx"
	"github.com/natsio/natsio/internal/testserver"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
)

// startHandoffReader runs Messages in the background and hands each stream
// sequence over an unbuffered channel: the iterator is parked in yield until
// the test takes the message, so the consumer is read at the test's pace
// and a fault can hit it mid-stream with pulls outstanding.
func startHandoffReader(ctx context.Context, oc *ordered.Consumer, opts ...ordered.Opt) (<-chan uint64, <-chan error) {
	got := make(chan uint64)
	done := make(chan error, 1)
	go func() {
		for m, err := range oc.Messages(ctx, opts...) {
			if err != nil {
				done <- err
				return
			}
			md, _ := m.Metadata()
			select {
			case got <- md.StreamSeq:
			case <-ctx.Done():
				// Keep ranging: the iterator yields ctx's error next.
			}
		}
		done <- nil
	}()
	return got, done
}

// publishOnce stores one message with message ID id, retrying across a
// reconnect or an election: the same ID makes the stream store it once.
func publishOnce(t *testing.T, ctx context.Context, js *jsapi.JS, subj, id string) uint64 {
	t.Helper()
	for {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		ack, err := js.Publish(actx, subj, []byte(id), jsapi.MsgID(id), jsapi.RetryOnNoResponders(20, 50*time.Millisecond))
		cancel()
		if err == nil {
			return ack.Sequence
		}
		if ctx.Err() != nil {
			t.Fatalf("publish %s: %v", id, err)
		}
	}
}

// resetLog records the reasons an ordered consumer gives for recreating
// itself.
type resetLog struct {
	mu      sync.Mutex
	reasons []error
}

func (l *resetLog) add(err error) {
	l.mu.Lock()
	l.reasons = append(l.reasons, err)
	l.mu.Unlock()
}

func (l *resetLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprint(l.reasons)
}

// nats.go#1370: an ordered consumer reading a file-store stream survives a
// hard server restart (same port, same store dir) in the middle of the
// stream. Its ephemeral consumer is gone after the restart ("consumer not
// found"); that must lead to a recreation at the last delivered sequence
// + 1, never to a terminal error. Every stream sequence 1..N arrives
// exactly once and in order, pre-restart backlog and post-restart
// publishes alike.
func TestRegressionNatsGo1370OrderedAfterHardRestart(t *testing.T) {
	e := newEnv(t, jsapi.StorageFile)
	const before, after = 300, 50
	e.publish(t, "o.a", before)
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	var resets resetLog
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	got, done := startHandoffReader(ctx, oc, ordered.MaxMessages(10), ordered.Heartbeat(200*time.Millisecond), ordered.OnReset(resets.add))
	expectSeqs(t, ctx, got, done, 1, 100)

	// Mid-stream: the reader waits in yield with a pull outstanding.
	e.s.Restart(t)
	expectSeqs(t, ctx, got, done, 101, before)
	for i := range after {
		if seq := publishOnce(t, ctx, e.js, "o.a", fmt.Sprint("post-", i)); seq != uint64(before+i+1) {
			t.Fatalf("post-restart publish %d stored at %d", i, seq)
		}
	}
	expectSeqs(t, ctx, got, done, before+1, before+after)
	// No duplicate is waiting either: the next thing delivered is the
	// next message published.
	publishOnce(t, ctx, e.js, "o.a", "tail")
	expectSeqs(t, ctx, got, done, before+after+1, before+after+1)
	if oc.Resets() == 0 {
		t.Fatalf("the consumer lost in the restart was never recreated (resets: %v)", resets.String())
	}
	t.Logf("%d resets: %v", oc.Resets(), resets.String())
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Messages ended with %v, want the context's error", err)
	}
}

// jsAPITotal returns the JetStream API requests the server received since
// it started.
func jsAPITotal(t *testing.T, s *testserver.Server) uint64 {
	t.Helper()
	srv := s.Srv()
	if srv == nil {
		t.Fatal("server not running")
	}
	info, err := srv.Jsz(&server.JSzOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return info.API.Total
}

// F03 (a): a MEMORY-storage stream does not survive a server restart. The
// ordered consumer reading it must end with a terminal
// jsapi.ErrStreamNotFound and must not spin recreating its consumer: the
// consumer-create requests the server sees (counted by a separate
// connection subscribed to $JS.API.CONSUMER.CREATE.>) and the JetStream
// API requests it served stay within a small bound over the seconds after
// the restart.
func TestF03OrderedMemoryStreamLostIsTerminal(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, "o.a", 5)
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	mon, err := conn.Connect(ctx, e.s.URL(), conn.ReconnectBackoff(10*time.Millisecond, 50*time.Millisecond), conn.ReconnectJitter(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	var creates atomic.Int64
	// Counted on the monitor's reader (SubscribeInline): after mon.Flush
	// every create the server sent before the PONG is counted.
	if _, err := connx.SubscribeInline(mon, "$JS.API.CONSUMER.CREATE.>", func(*conn.Msg) { creates.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if err := mon.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	var resets resetLog
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	got, done := startReader(t, ctx, oc, ordered.Heartbeat(100*time.Millisecond), ordered.OnReset(resets.add))
	expectSeqs(t, ctx, got, done, 1, 5)
	if err := mon.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := creates.Load(); n != 1 {
		t.Fatalf("%d consumer creates before the restart, want 1", n)
	}

	monReconnected := make(chan struct{}, 1)
	defer mon.OnReconnect(func() {
		select {
		case monReconnected <- struct{}{}:
		default:
		}
	})()
	e.s.Restart(t) // the memory stream is gone
	restartedAt := time.Now()
	select {
	case <-monReconnected:
	case <-ctx.Done():
		t.Fatal("monitor connection did not reconnect")
	}
	base := creates.Load()

	var endErr error
	select {
	case endErr = <-done:
	case seq := <-got:
		t.Fatalf("delivered stream seq %d from a stream that no longer exists", seq)
	case <-ctx.Done():
		t.Fatalf("no terminal error after the stream was lost (resets %d: %v)", oc.Resets(), resets.String())
	}
	if !errors.Is(endErr, jsapi.ErrStreamNotFound) {
		t.Fatalf("Messages ended with %v, want jsapi.ErrStreamNotFound", endErr)
	}
	ended := time.Since(restartedAt)

	// Observe the server for a while after the end: nothing more may come.
	// A tight recreate loop would issue hundreds of requests here.
	const window = 2 * time.Second
	time.Sleep(window) // holding the observation window, not synchronising
	createsAfter := creates.Load() - base
	api := jsAPITotal(t, e.s)
	t.Logf("terminal %v after the restart; %d consumer creates seen, %d JS API requests served since the restart; resets %d",
		ended, createsAfter, api, oc.Resets())
	if createsAfter > 3 {
		t.Fatalf("%d consumer-create requests for a lost stream: recreate loop", createsAfter)
	}
	if api > 10 {
		t.Fatalf("%d JetStream API requests since the restart for a lost stream: retry loop", api)
	}
	if _, err := e.js.Stream(ctx, "O"); !errors.Is(err, jsapi.ErrStreamNotFound) {
		t.Fatalf("stream info after the restart: %v, the memory stream should be gone", err)
	}
}

// F05: a 3-node cluster loses two servers, the JetStream meta leader among
// them, so the API answers 503/10008 or not at all. The ordered consumer
// reading an R3 stream keeps retrying for the whole outage (several
// heartbeats), never ends, and once the servers are back delivers what is
// published after the recovery, in order and without a gap. (Distinct from
// TestRegressionNatsGo1808RetriesWhileJetStreamUnavailable: a clustered
// meta-leader loss, not a single server being down.)
func TestF05OrderedSurvivesMetaLeaderLoss(t *testing.T) {
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
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "O", Subjects: []string{"o.>"}, Replicas: 3}); err != nil {
		t.Fatal(err)
	}
	cl.WaitStreamLeader(t, "", "O")
	for i := range 10 {
		publishOnce(t, ctx, js, "o.a", fmt.Sprint("pre-", i))
	}
	const hb = 200 * time.Millisecond
	var resets resetLog
	oc := newOrdered(t, js, "O", ordered.Config{})
	got, done := startReader(t, ctx, oc, ordered.MaxMessages(5), ordered.Heartbeat(hb), ordered.OnReset(resets.add))
	expectSeqs(t, ctx, got, done, 1, 10)

	// Take down the server hosting the ordered consumer and the meta
	// leader (or one more server if that is the same one): no quorum
	// anywhere, and the consumer must be recreated while the API is down.
	name := oc.ConsumerName()
	host, leader := -1, -1
	for i, s := range cl.Servers() {
		if srv := s.Srv(); srv != nil && srv.JetStreamIsConsumerLeader("$G", "O", name) {
			host = i
		}
		if s == cl.Leader() {
			leader = i
		}
	}
	if host < 0 || leader < 0 {
		t.Fatalf("consumer %s host %d, meta leader %d", name, host, leader)
	}
	down := []int{host}
	if leader != host {
		down = append(down, leader)
	} else {
		down = append(down, (host+1)%3)
	}
	for _, i := range down {
		cl.Shutdown(i)
	}
	// The scenario holds: JetStream cannot answer. The survivor may answer
	// for a while: when the meta leader went down first, the survivor can
	// have been elected in between, and a leader that lost its quorum steps
	// down only after the lost-quorum interval, checked every 10 s (10–20 s). Poll,
	// bounded, until it no longer answers.
	for deadline := time.Now().Add(30 * time.Second); ; {
		actx, acancel := context.WithTimeout(ctx, time.Second)
		_, err = js.AccountInfo(actx)
		acancel()
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("JetStream still answers 30 s after two of three servers went down")
		}
		time.Sleep(50 * time.Millisecond) // polling the API, bounded by the deadline
	}
	t.Logf("JetStream with 2/3 down: %v", err)
	// The outage itself: many heartbeats without JetStream, during which
	// recreating the consumer fails.
	select {
	case err := <-done:
		t.Fatalf("Messages ended during the outage: %v", err)
	case seq := <-got:
		t.Fatalf("stream seq %d delivered without a quorum", seq)
	case <-time.After(8 * hb):
	}
	for _, i := range down {
		cl.Servers()[i].Restart(t)
	}
	cl.WaitReady(t)
	cl.WaitStreamLeader(t, "", "O")
	recovered := time.Now()
	for i := range 10 {
		publishOnce(t, ctx, js, "o.a", fmt.Sprint("post-", i))
	}
	// Recovery is bounded well below the reader's own deadline (which an
	// unanswered API request must not be allowed to use up).
	rctx, rcancel := context.WithTimeout(ctx, 15*time.Second)
	defer rcancel()
	expectSeqs(t, rctx, got, done, 11, 20)
	t.Logf("delivering again %v after the cluster recovered; %d resets: %v", time.Since(recovered), oc.Resets(), resets.String())
	if oc.Resets() == 0 {
		t.Fatal("the consumer lost with its server was never recreated")
	}
	publishOnce(t, ctx, js, "o.a", "tail")
	expectSeqs(t, ctx, got, done, 21, 21)
	cancel()
	<-done
}
