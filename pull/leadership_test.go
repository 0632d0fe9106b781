package pull_test

// A consume loop while leadership moves in a cluster: the stream leader
// shut down, the consumer leader stepping down (409 Leadership Change):
// nothing acknowledged is lost and the loop pulls again at once.

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pull"
)

// consumerLeader returns the index of the server leading the consumer, or
// -1.
func consumerLeader(cl *natstest.Cluster, stream, consumer string) int {
	for i, s := range cl.Nodes() {
		if srv := s.Server(); srv != nil && srv.JetStreamIsConsumerLeader("$G", stream, consumer) {
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
	cl, ctx, nc, js := r3Stream(t, 60*time.Second)
	if _, err := cl.WaitStreamLeader("R"); err != nil {
		t.Fatal(err)
	}
	const total = 300
	for i := range total {
		if _, err := testutil.Retrying(t, js, 20, 50*time.Millisecond).Publish(ctx, "r.x", []byte(fmt.Sprint(i)), jsapi.MsgID(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	const held = 20
	info, err := js.CreateOrUpdateConsumer(ctx, "R", jsapi.ConsumerConfig{
		Durable: "C", AckPolicy: jsapi.AckExplicit, AckWait: 2 * time.Second, MaxAckPending: held,
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := pull.FromInfo(js, info)
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

// F04: the stream leader of an R3 stream is shut down under Messages:
// nothing acknowledged is lost and the loop goes on.
func TestMessagesSurvivesLeaderChange(t *testing.T) {
	cl, ctx, _, js := r3Stream(t, 90*time.Second)
	info, err := js.CreateOrUpdateConsumer(ctx, "R", jsapi.ConsumerConfig{Durable: "C", AckPolicy: jsapi.AckExplicit, AckWait: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c, err := pull.FromInfo(js, info)
	if err != nil {
		t.Fatal(err)
	}
	// Each message has an ID: a publish whose outcome was lost in the
	// election (stored, but no acknowledgement) is retried without storing
	// it twice, so the stream ends with exactly 200 messages.
	publish := func(batch string, n int) error {
		for i := 0; i < n; {
			id := jsapi.MsgID(fmt.Sprintf("%s-%d", batch, i))
			if _, err := testutil.Retrying(t, js, 20, 100*time.Millisecond).Publish(ctx, "r.x", nil, id); err != nil {
				if ctx.Err() != nil {
					return err
				}
				continue // an election in progress: retry
			}
			i++
		}
		return nil
	}
	if err := publish("a", 100); err != nil {
		t.Fatal(err)
	}
	got := map[uint64]bool{}
	killed := false
	published := make(chan error, 1) // the second batch, published during the election
	for m, err := range c.Messages(ctx, pull.MaxMessages(20), pull.Expires(2*time.Second)) {
		if err != nil {
			t.Fatal(err)
		}
		md, _ := m.Metadata()
		got[md.StreamSeq] = true
		m.Ack()
		if len(got) == 30 && !killed {
			killed = true
			leader := cl.StreamLeader("R")
			if leader == nil {
				t.Fatal("no stream leader")
			}
			leader.Shutdown()
			go func() { published <- publish("b", 100) }()
		}
		if len(got) == 200 {
			break
		}
	}
	// The publisher may still be waiting for its last acknowledgement:
	// the connection stays open until it has it.
	if err := <-published; err != nil {
		t.Fatal(err)
	}
	for i := uint64(1); i <= 200; i++ {
		if !got[i] {
			t.Fatalf("stream seq %d never delivered", i)
		}
	}
}

// r3Stream starts a 3-server cluster and connects to it (reconnecting
// quickly), with the R3 stream R on r.>, all within a ctx that ends after
// timeout or with the test.
func r3Stream(t *testing.T, timeout time.Duration) (*natstest.Cluster, context.Context, *conn.Conn, *jsapi.JS) {
	t.Helper()
	cl := natstest.NewCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	nc, err := conn.Connect(ctx, cl.URL(), conn.ReconnectBackoff(20*time.Millisecond, 200*time.Millisecond), conn.ReconnectJitter(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	js, _ := jsapi.New(nc)
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "R", Subjects: []string{"r.>"}, Replicas: 3}); err != nil {
		t.Fatal(err)
	}
	return cl, ctx, nc, js
}
