package pull_test

import (
	"context"
	"testing"
	"time"

	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// Fetch counts its pulls, the messages it returns and the statuses that
// end its pulls.
func TestStatsFetch(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, 10)
	c := e.consumer(t, jsapi.ConsumerConfig{AckPolicy: jsapi.AckNone})
	for _, n := range []int{4, 6} {
		if ms, err := c.Fetch(e.ctx, n); err != nil || len(ms) != n {
			t.Fatalf("Fetch(%d): %d, %v", n, len(ms), err)
		}
	}
	if st := c.Stats(); st.Pulls != 2 || st.Messages != 10 || st.NoMessages+st.Expired+st.Conflicts+st.OtherStatuses != 0 {
		t.Fatalf("after two whole batches: %+v", st)
	}
	if ms, err := c.Fetch(e.ctx, 1, pull.NoWait()); err != nil || len(ms) != 0 {
		t.Fatalf("NoWait on nothing: %d, %v", len(ms), err)
	}
	if st := c.Stats(); st.Pulls != 3 || st.NoMessages != 1 {
		t.Fatalf("after an empty NoWait pull: %+v", st)
	}
}

// Messages counts its pulls, the messages it receives, heartbeats and its
// resets.
func TestStatsMessages(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, 20)
	c := e.consumer(t, jsapi.ConsumerConfig{AckPolicy: jsapi.AckNone})
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	got := make(chan int, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, err := range c.Messages(ctx, pull.MaxMessages(100), pull.Expires(2*time.Second), pull.Heartbeat(100*time.Millisecond)) {
			if err != nil {
				return
			}
			got <- 1
		}
	}()
	for range 20 {
		select {
		case <-got:
		case <-e.ctx.Done():
			t.Fatal("messages did not arrive")
		}
	}
	testutil.Eventually(t, "an idle heartbeat", func() bool { return c.Stats().Heartbeats >= 1 })
	st := c.Stats()
	// (A loaded machine may delay heartbeats past two intervals: that
	// would be a reset of its own, so resets are compared, not zero.)
	if st.Messages != 20 || st.Pulls < 1 {
		t.Fatalf("after 20 messages and a heartbeat: %+v", st)
	}
	e.reconnect(t)
	testutil.Eventually(t, "the reset after the reconnect, and its pull", func() bool {
		s := c.Stats()
		return s.Resets > st.Resets && s.Pulls > st.Pulls
	})
	cancel()
	<-done
}
