package pull_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// F26 (overflow, min_ack_pending): a pull with MinAckPending(3) in an
// overflow group is not served while the consumer has 2 messages awaiting
// acks (another client holds them), even with 8 messages available; a
// waiting pull with MinAckPending(3) is served as soon as a third message
// is delivered to the other client and left unacked.
func TestOverflowMinAckPending(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	holder := e.consumer(t, jsapi.ConsumerConfig{AckWait: 30 * time.Second,
		PriorityPolicy: jsapi.PriorityOverflow, PriorityGroups: []string{"g"}})
	waiter := e.bindOther(t)
	e.publish(t, 10)
	state := func() (ackPending, pending int) {
		t.Helper()
		info, err := holder.Info(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.NumAckPending, int(info.NumPending)
	}

	// The consumer counts messages stored after its creation as they are
	// signalled to it: wait until it has seen all 10.
	waitUntil(t, 10*time.Second, "the consumer to count the 10 messages", func() bool {
		info, err := holder.Info(e.ctx)
		return err == nil && info.NumPending == 10
	})

	// The holder takes 2 and keeps them unacknowledged.
	held, err := holder.Fetch(e.ctx, 2, pull.FetchGroup("g"))
	if err != nil || len(held) != 2 {
		t.Fatalf("holder's fetch: %d %v", len(held), err)
	}
	if ap, p := state(); ap != 2 || p != 8 {
		t.Fatalf("ack pending %d, pending %d; want 2 and 8", ap, p)
	}

	// Below the threshold: not served although 8 are available.
	ctx, cancel := context.WithTimeout(e.ctx, 400*time.Millisecond)
	msgs, err := waiter.Fetch(ctx, 2, pull.FetchGroup("g"), pull.FetchMinAckPending(3))
	cancel()
	if err != nil || len(msgs) != 0 {
		t.Fatalf("pull with min_ack_pending 3 at ack pending 2: %d messages, %v", len(msgs), err)
	}
	if ap, p := state(); ap != 2 || p != 8 {
		t.Fatalf("after the unserved pull: ack pending %d, pending %d; want 2 and 8", ap, p)
	}
	waitUntil(t, 10*time.Second, "the expired pull to leave the waiting list", func() bool {
		info, err := holder.Info(e.ctx)
		return err == nil && info.NumWaiting == 0
	})

	// A waiting pull with MinAckPending(3) is served once the holder has
	// a third one unacknowledged.
	var wg sync.WaitGroup
	var got []*jsapi.Msg
	var gotErr error
	wctx, wcancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer wcancel()
	wg.Go(func() { got, gotErr = waiter.Fetch(wctx, 2, pull.FetchGroup("g"), pull.FetchMinAckPending(3)) })
	waitWaiting(t, e, holder, 1)
	third, err := holder.Fetch(e.ctx, 1, pull.FetchGroup("g"))
	if err != nil || len(third) != 1 {
		t.Fatalf("holder's third: %d %v", len(third), err)
	}
	held = append(held, third...)
	wg.Wait()
	if gotErr != nil || len(got) != 2 {
		t.Fatalf("pull with min_ack_pending 3 at ack pending 3: %d messages, %v", len(got), gotErr)
	}
	for i, m := range got {
		md, _ := m.Metadata()
		if md.StreamSeq != uint64(4+i) {
			t.Fatalf("waiter got stream seq %d, want %d", md.StreamSeq, 4+i)
		}
	}
	if md, _ := held[2].Metadata(); md.StreamSeq != 3 {
		t.Fatalf("holder's third is stream seq %d", md.StreamSeq)
	}
	if ap, p := state(); ap != 5 || p != 5 {
		t.Fatalf("at the end: ack pending %d, pending %d; want 5 and 5", ap, p)
	}
}
