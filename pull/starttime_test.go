package pull_test

import (
	"context"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// F57: a consumer with DeliverByStartTime and OptStartTime set to the
// stored time stamp of message 3 (read back with GetMsg, not the wall
// clock) starts exactly at message 3: it reports 8 pending and delivers
// messages 3..10, in order, and nothing else.
func TestDeliverByStartTime(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, 5)
	st, err := e.js.Stream(e.ctx, "S")
	if err != nil {
		t.Fatal(err)
	}
	third, err := st.GetMsg(e.ctx, 3)
	if err != nil || third.Sequence != 3 || third.Time.IsZero() {
		t.Fatalf("GetMsg(3): %+v %v", third, err)
	}
	e.publish(t, 5)

	c := e.consumer(t, jsapi.ConsumerConfig{DeliverPolicy: jsapi.DeliverByStartTime, OptStartTime: third.Time})
	info, err := c.Info(e.ctx)
	if err != nil || info.NumPending != 8 || !info.Config.OptStartTime.Equal(third.Time) {
		t.Fatalf("consumer info: pending %d, start %v (want 8, %v) %v", info.NumPending, info.Config.OptStartTime, third.Time, err)
	}
	ctx, cancel := context.WithTimeout(e.ctx, time.Second)
	defer cancel()
	msgs, err := c.Fetch(ctx, 20)
	if err != nil || len(msgs) != 8 {
		t.Fatalf("fetch: %d %v; want messages 3..10", len(msgs), err)
	}
	for i, m := range msgs {
		md, err := m.Metadata()
		if err != nil || md.StreamSeq != uint64(3+i) {
			t.Fatalf("message %d: stream seq %d (%v), want %d", i, md.StreamSeq, err, 3+i)
		}
		m.Ack()
	}
	if rest, err := c.Fetch(e.ctx, 1, pull.NoWait()); err != nil || len(rest) != 0 {
		t.Fatalf("after message 10: %d more, %v", len(rest), err)
	}
}
