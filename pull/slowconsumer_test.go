package pull_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// F10, JetStream: messages a pull had delivered into the link the server
// then closed as a slow consumer never reach the client; after the
// reconnect they come again, redelivered after AckWait, and every message
// is received.
func TestServerSideSlowConsumerRedelivery(t *testing.T) {
	s := testutil.SlowConsumerServer(t, false)
	p := testutil.Proxy(t, s.URL())
	ev := &testutil.Events{}
	nc := testutil.Connect(t, p.URL(), testutil.FastReconnect(), ev.Opt())
	pub := testutil.Connect(t, s.URL())
	ctx := testutil.Ctx(t)
	js, _ := jsapi.New(nc)
	pjs, _ := jsapi.New(pub)
	if _, err := pjs.CreateStream(ctx, jsapi.StreamConfig{Name: "F10", Subjects: []string{"f10js.>"}, Storage: jsapi.StorageMemory}); err != nil {
		t.Fatal(err)
	}
	const total = 20
	for range total {
		if _, err := pjs.Publish(ctx, "f10js.x", make([]byte, 1024)); err != nil {
			t.Fatal(err)
		}
	}
	info, err := js.CreateOrUpdateConsumer(ctx, "F10", jsapi.ConsumerConfig{Durable: "C", AckPolicy: jsapi.AckExplicit, AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c, err := pull.FromInfo(js, info)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Subscribe("f10.>"); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	p.Throttle(faultproxy.Down, 10_000)
	first := make(chan []*jsapi.Msg, 1)
	go func() {
		fctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		msgs, _ := c.Fetch(fctx, total)
		first <- msgs
	}()
	// All of them are on their way into the throttled link.
	testutil.Eventually(t, "the pull to be served", func() bool {
		info, err := pjs.Consumer(ctx, "F10", "C")
		return err == nil && info.NumAckPending == total
	})
	stopLoad := testutil.SlowFlood(nc, pub, "f10.flood")
	defer stopLoad()
	testutil.WaitSlowConsumerClosed(t, s, ev)
	stopLoad()
	p.Throttle(faultproxy.Down, 0)
	testutil.CheckSlowConsumerReason(t, ev)
	testutil.Eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) > 0 && nc.IsConnected() })

	var arrived []*jsapi.Msg
	select {
	case arrived = <-first:
	case <-ctx.Done():
		t.Fatal("Fetch did not return")
	}
	seen := map[uint64]bool{}
	for _, m := range arrived {
		md, _ := m.Metadata()
		seen[md.StreamSeq] = true
		if err := m.AckSync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	lost := total - len(seen)
	if lost == 0 {
		t.Fatal("every message got through the throttled link: nothing was lost with it")
	}
	redelivered := 0
	for len(seen) < total {
		if ctx.Err() != nil {
			t.Fatalf("%d of %d messages received after the slow-consumer close", len(seen), total)
		}
		fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		msgs, err := c.Fetch(fctx, total)
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("fetch after the reconnect: %v", err)
		}
		for _, m := range msgs {
			md, _ := m.Metadata()
			if !seen[md.StreamSeq] && md.NumDelivered >= 2 {
				redelivered++
			}
			seen[md.StreamSeq] = true
			if err := m.AckSync(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d of %d got through before the close; %d redelivered after AckWait", len(arrived), total, redelivered)
	if redelivered != lost {
		t.Fatalf("%d messages lost with the link, %d came back as redeliveries", lost, redelivered)
	}
}
