package pull_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testserver"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// Unacknowledged messages come back after the ack wait with NumDelivered
// counting; InProgress holds one back past its ack wait.
func TestRedeliveryAndInProgress(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, 2)
	c := e.consumer(t, jsapi.ConsumerConfig{AckWait: time.Second})
	msgs, err := c.Fetch(e.ctx, 2)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("fetch: %d %v", len(msgs), err)
	}
	held := msgs[1]
	// Keep message 2 in progress while message 1 times out and returns.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(300 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-tk.C:
				held.InProgress()
			case <-stop:
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(e.ctx, 3*time.Second)
	defer cancel()
	re, err := c.Fetch(ctx, 1)
	if err != nil || len(re) != 1 {
		t.Fatalf("redelivery: %d %v", len(re), err)
	}
	md, _ := re[0].Metadata()
	if md.StreamSeq != 1 || md.NumDelivered != 2 {
		t.Fatalf("redelivered %+v, want stream seq 1 delivered twice", md)
	}
	re[0].Ack()
	// Past two more ack waits, the in-progress message has not come back.
	ctx2, cancel2 := context.WithTimeout(e.ctx, 2500*time.Millisecond)
	defer cancel2()
	again, err := c.Fetch(ctx2, 1)
	close(stop)
	<-done
	if !errors.Is(err, pull.ErrFetchTimeout) || len(again) != 0 {
		t.Fatalf("in-progress message redelivered: %d %v", len(again), err)
	}
	if err := held.AckSync(e.ctx); err != nil {
		t.Fatal(err)
	}
}

func TestF17FetchConsumerDeletedInFlight(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(e.ctx, 20*time.Second)
		defer cancel()
		_, err := c.Fetch(ctx, 10)
		errc <- err
	}()
	waitWaiting(t, e, c, 1)
	if err := e.js.DeleteConsumer(e.ctx, "S", "C"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, pull.ErrConsumerDeleted) {
			t.Fatalf("fetch ended with %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("fetch did not end when its consumer was deleted")
	}
}

// Heartbeats arrive on an idle consumer: Messages reports no missed
// heartbeat while nothing is published.
func TestF20IdleHeartbeats(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	var missed atomic.Int32
	ctx, cancel := context.WithTimeout(e.ctx, 1500*time.Millisecond)
	defer cancel()
	for _, err := range c.Messages(ctx, pull.Expires(time.Second), pull.Heartbeat(200*time.Millisecond),
		pull.OnError(func(err error) {
			if errors.Is(err, pull.ErrNoHeartbeat) {
				missed.Add(1)
			}
		})) {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("ended with %v", err)
		}
	}
	if missed.Load() != 0 {
		t.Fatalf("%d missed-heartbeat reports on a healthy idle consumer", missed.Load())
	}
}

// F04: the stream leader of an R3 stream is shut down under Messages:
// nothing acknowledged is lost and the loop goes on.
func TestF04MessagesLeaderChange(t *testing.T) {
	cl := testserver.StartCluster(t, 3, testserver.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
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
	c, err := pull.CreateOrUpdate(ctx, js, "R", jsapi.ConsumerConfig{Durable: "C", AckPolicy: jsapi.AckExplicit, AckWait: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Each message has an ID: a publish whose outcome was lost in the
	// election (stored, but no acknowledgement) is retried without storing
	// it twice, so the stream ends with exactly 200 messages.
	publish := func(batch string, n int) error {
		for i := 0; i < n; {
			id := jsapi.MsgID(fmt.Sprintf("%s-%d", batch, i))
			if _, err := js.Publish(ctx, "r.x", nil, id, jsapi.RetryOnNoResponders(20, 100*time.Millisecond)); err != nil {
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
			leader := cl.StreamLeader("", "R")
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
