package ordered_test

// The ordered consumer while JetStream is unavailable — a server down for
// several heartbeats, a cluster without a meta leader — or its link flaps:
// it keeps retrying without piling up consumers, and goes on in order once
// the servers are back. Against real embedded servers; the tests of bugs
// reported against other clients carry the issue in their name
// (docs/reliability.md).

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/ordered"
)

// nats.go PR#1808 (and nats.rs#1596): while JetStream is unavailable —
// the server down for longer than two heartbeats, so recreating the
// consumer fails — the ordered consumer keeps retrying and continues, in
// order and without a terminal error, once the server is back.
func TestRegressionNatsGo1808RetriesWhileJetStreamUnavailable(t *testing.T) {
	e := newEnv(t, jsapi.StorageFile)
	e.publish(t, "o.a", 10)
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	got, done := startReader(t, ctx, oc, ordered.MaxMessages(5), ordered.Heartbeat(100*time.Millisecond))
	expectSeqs(t, ctx, got, done, 1, 10)
	e.s.Shutdown()
	// The outage is the scenario: several heartbeat periods without a
	// server, so the consumer's recreation attempts fail.
	select {
	case err := <-done:
		t.Fatalf("Messages ended during the outage: %v", err)
	case <-time.After(600 * time.Millisecond):
	}
	if err := e.s.Restart(); err != nil {
		t.Fatal(err)
	}
	e.publish(t, "o.a", 10)
	expectSeqs(t, ctx, got, done, 11, 20)
	cancel()
	<-done
}

// nats.rs#1331 / openobserve#13676: recreating the ordered consumer under a
// flapping link must not pile up consumers on the server: after several
// forced reconnects the stream holds at most the one live consumer.
func TestRegressionNatsRs1331NoConsumerPileUpOnFlappingLink(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	got, done := startReader(t, ctx, oc, ordered.MaxMessages(5), ordered.Heartbeat(100*time.Millisecond))
	seq := uint64(0)
	for range 6 {
		e.publish(t, "o.a", 1)
		seq++
		expectSeqs(t, ctx, got, done, seq, seq)
		before := e.nc.Stats().Reconnects
		e.nc.ForceReconnect()
		for !(e.nc.IsConnected() && e.nc.Stats().Reconnects > before) {
			if ctx.Err() != nil {
				t.Fatal("no reconnect")
			}
			time.Sleep(2 * time.Millisecond) // polling
		}
	}
	e.publish(t, "o.a", 1)
	seq++
	expectSeqs(t, ctx, got, done, seq, seq)
	count := func() int {
		n := 0
		for _, err := range e.js.ConsumerNames(ctx, "O") {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		return n
	}
	// Deletions of replaced consumers may still be in flight: poll.
	deadline := time.Now().Add(5 * time.Second)
	for n := count(); n > 1; n = count() {
		if time.Now().After(deadline) {
			t.Fatalf("%d consumers on the stream after %d forced reconnects (resets %d), want at most 1", n, 6, oc.Resets())
		}
		time.Sleep(20 * time.Millisecond) // polling
	}
	cancel()
	<-done
}

// F05: a 3-node cluster loses two servers, the JetStream meta leader among
// them, so the API answers 503/10008 or not at all. The ordered consumer
// reading an R3 stream keeps retrying for the whole outage (several
// heartbeats), never ends, and once the servers are back delivers what is
// published after the recovery, in order and without a gap. (Distinct from
// TestRegressionNatsGo1808RetriesWhileJetStreamUnavailable: a clustered
// meta-leader loss, not a single server being down.)
func TestSurvivesMetaLeaderLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	cl := natstest.NewCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, cl.URL(), conn.ReconnectBackoff(20*time.Millisecond, 200*time.Millisecond), conn.ReconnectJitter(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jsapi.New(nc)
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "O", Subjects: []string{"o.>"}, Replicas: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.WaitStreamLeader("O"); err != nil {
		t.Fatal(err)
	}
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
	name := oc.Name()
	host, leader := -1, -1
	for i, s := range cl.Nodes() {
		if srv := s.Server(); srv != nil && srv.JetStreamIsConsumerLeader("$G", "O", name) {
			host = i
		}
		if s == cl.MetaLeader() {
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
		cl.Kill(i)
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
		if err := cl.Nodes()[i].Restart(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.WaitReady(); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.WaitStreamLeader("O"); err != nil {
		t.Fatal(err)
	}
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
