package jsapi_test

import (
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

// The migration guide's recipe for a push consumer made by another
// program: a core queue subscription on its deliver subject, +ACK replies
// as acknowledgements, empty replies to flow-control requests. Every
// message is delivered once and acknowledged: nothing stays pending.
func TestPushConsumerReadWithCoreQueueSubscription(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxT(t)
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatal(err)
	}
	ci, err := js.CreateOrUpdateConsumer(ctx, "ORDERS", jsapi.ConsumerConfig{
		Durable: "billing", DeliverSubject: "deliver.billing", DeliverGroup: "billing",
		FlowControl: true, IdleHeartbeat: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	got := make(chan uint64, n)
	sub, err := nc.QueueSubscribeFunc(ci.Config.DeliverSubject, ci.Config.DeliverGroup, func(m *conn.Msg) {
		if m.Status() == 100 {
			if m.Reply != "" {
				m.Respond(nil)
			}
			return
		}
		md, err := jsapi.ParseAckSubject(m.Reply)
		if err != nil {
			return
		}
		if err := m.Respond([]byte("+ACK")); err != nil {
			t.Error(err)
		}
		got <- md.StreamSeq
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	for range n {
		if _, err := js.Publish(ctx, "orders.new", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	for want := uint64(1); want <= n; want++ {
		select {
		case seq := <-got:
			if seq != want {
				t.Fatalf("stream sequence %d; want %d", seq, want)
			}
		case <-ctx.Done():
			t.Fatalf("message %d not delivered", want)
		}
	}
	eventually(t, "every message acknowledged", func() bool {
		info, err := js.Consumer(ctx, "ORDERS", "billing")
		return err == nil && info.NumAckPending == 0 && info.AckFloor.Stream == n
	})
}
