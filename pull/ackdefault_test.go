package pull_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// A consumer created with a zero AckPolicy acknowledges explicitly: a
// message left unacknowledged is redelivered after AckWait, an
// acknowledged one is not, and the server reports the explicit policy
// with nothing pending and the ack floor at the last message. (Under the
// server's own default, none, the unacknowledged message would never come
// back.)
func TestZeroAckPolicyIsExplicit(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	const ackWait = 500 * time.Millisecond
	info, err := e.js.CreateConsumer(e.ctx, "S", jsapi.ConsumerConfig{Durable: "Z", AckWait: ackWait})
	if err != nil {
		t.Fatal(err)
	}
	c, err := pull.FromInfo(e.js, info)
	if err != nil {
		t.Fatal(err)
	}
	if p := c.CachedInfo().Config.AckPolicy; p != jsapi.AckExplicit {
		t.Fatalf("created with ack policy %q", p)
	}
	e.publish(t, 2)
	ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
	defer cancel()
	msgs, err := c.Fetch(ctx, 2)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("fetch: %d %v", len(msgs), err)
	}
	if err := msgs[0].AckSync(ctx); err != nil {
		t.Fatal(err)
	}
	// The second, unacknowledged, comes back once AckWait has passed.
	m, err := c.Next(ctx)
	if err != nil {
		t.Fatalf("the unacknowledged message was not redelivered: %v", err)
	}
	md, err := m.Metadata()
	if err != nil || md.StreamSeq != 2 || md.NumDelivered != 2 {
		t.Fatalf("redelivered: %+v %v", md, err)
	}
	if err := m.AckSync(ctx); err != nil {
		t.Fatal(err)
	}
	// Both acknowledged: nothing comes back within twice AckWait (the
	// window of observation, not a synchronisation).
	wctx, wcancel := context.WithTimeout(e.ctx, 2*ackWait)
	defer wcancel()
	if m, err := c.Next(wctx); !errors.Is(err, pull.ErrNoMessages) {
		t.Fatalf("after both acks: %v %v", m, err)
	}
	info, err = c.Info(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.AckPolicy != jsapi.AckExplicit || info.NumAckPending != 0 || info.AckFloor.Stream != 2 {
		t.Fatalf("ack policy %q, %d awaiting acks, ack floor %d", info.Config.AckPolicy, info.NumAckPending, info.AckFloor.Stream)
	}
}

// AckNone asked for by name is still sent, through every create call.
func TestAckNoneByName(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	for i, create := range []func(context.Context, string, jsapi.ConsumerConfig) (*jsapi.ConsumerInfo, error){e.js.CreateConsumer, e.js.CreateOrUpdateConsumer} {
		created, err := create(e.ctx, "S", jsapi.ConsumerConfig{Durable: "N" + string(rune('0'+i)), AckPolicy: jsapi.AckNone})
		if err != nil {
			t.Fatal(err)
		}
		c, err := pull.FromInfo(e.js, created)
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.Info(e.ctx)
		if err != nil || info.Config.AckPolicy != jsapi.AckNone {
			t.Fatalf("create %d: %v %v", i, info, err)
		}
	}
	info, err := e.js.CreateConsumer(e.ctx, "S", jsapi.ConsumerConfig{Name: "N2", AckPolicy: jsapi.AckNone})
	if err != nil || info.Config.AckPolicy != jsapi.AckNone {
		t.Fatalf("CreateConsumer: %v %v", info, err)
	}
	// An update that leaves the field zero asks for explicit: the server
	// refuses to change the policy of an existing consumer.
	if _, err := e.js.UpdateConsumer(e.ctx, "S", jsapi.ConsumerConfig{Name: "N2"}); err == nil {
		t.Fatal("updating an ack-none consumer with a zero AckPolicy was accepted")
	}
	info, err = e.js.CreateConsumer(e.ctx, "S", jsapi.ConsumerConfig{Name: "E"})
	if err != nil || info.Config.AckPolicy != jsapi.AckExplicit {
		t.Fatalf("CreateConsumer, zero policy: %v %v", info, err)
	}
}
