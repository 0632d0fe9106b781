package pull_test

import (
	"context"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
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
	if err != nil || len(again) != 0 {
		t.Fatalf("in-progress message redelivered: %d %v", len(again), err)
	}
	if err := held.AckSync(e.ctx); err != nil {
		t.Fatal(err)
	}
}
