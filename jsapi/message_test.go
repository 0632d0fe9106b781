package jsapi_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

// TestMsgAcks pulls messages from a durable consumer with a raw pull request
// and checks every acknowledgement form and its effect on the server.
func TestMsgAcks(t *testing.T) {
	js, nc, ctx := pubEnv(t, "")
	for i := range 6 {
		if _, err := js.Publish(ctx, "p.a", []byte{byte('0' + i)}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := nc.Request(ctx, "$JS.API.CONSUMER.CREATE.P.C", []byte(
		`{"stream_name":"P","config":{"durable_name":"C","ack_policy":"explicit","ack_wait":2000000000}}`))
	if err != nil || strings.Contains(string(m.Data), `"error"`) {
		t.Fatalf("create consumer: %v %s", err, m.Data)
	}
	sub, _ := nc.Subscribe(nc.NewInbox())
	if err := nc.PublishMsg("$JS.API.CONSUMER.MSG.NEXT.P.C", sub.Subject, nil, []byte(`{"batch":6}`)); err != nil {
		t.Fatal(err)
	}
	var msgs []*jsapi.Msg
	for range 6 {
		cm, err := sub.NextMsg(ctx)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, jsapi.NewMsg(nc, cm))
	}
	md, err := msgs[0].Metadata()
	if err != nil || md.Stream != "P" || md.Consumer != "C" || md.StreamSeq != 1 || md.NumDelivered != 1 || md.NumPending != 5 {
		t.Fatalf("metadata %+v %v", md, err)
	}
	if time.Since(md.Timestamp) > time.Minute {
		t.Fatalf("timestamp %v", md.Timestamp)
	}
	if err := msgs[0].Ack(); err != nil {
		t.Fatal(err)
	}
	if err := msgs[0].Ack(); !errors.Is(err, jsapi.ErrAlreadyAcked) {
		t.Fatalf("second ack: %v", err)
	}
	if err := msgs[0].Nak(); !errors.Is(err, jsapi.ErrAlreadyAcked) {
		t.Fatalf("nak after ack: %v", err)
	}
	if err := msgs[1].AckSync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := msgs[2].InProgress(); err != nil {
		t.Fatal(err)
	}
	if err := msgs[2].InProgress(); err != nil {
		t.Fatal(err)
	}
	if err := msgs[2].Term(); err != nil {
		t.Fatal(err)
	}
	if err := msgs[3].TermWithReason("bad input"); err != nil {
		t.Fatal(err)
	}
	if err := msgs[4].TermWithReason("a\r\nb"); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("reason with CRLF: %v", err)
	}
	msgs[4].Ack()
	// A Nak asks for redelivery now: the next pull gets message 6 then the
	// redelivered one.
	if err := msgs[5].Nak(); err != nil {
		t.Fatal(err)
	}
	nc.PublishMsg("$JS.API.CONSUMER.MSG.NEXT.P.C", sub.Subject, nil, []byte(`{"batch":1,"expires":5000000000}`))
	cm, err := sub.NextMsg(ctx)
	if err != nil {
		t.Fatal(err)
	}
	re := jsapi.NewMsg(nc, cm)
	md, _ = re.Metadata()
	if md.StreamSeq != 6 || md.NumDelivered != 2 {
		t.Fatalf("redelivery %+v", md)
	}
	if err := re.NakWithDelay(time.Hour); err != nil {
		t.Fatal(err)
	}
	// Not a consumer message.
	plain := &jsapi.Msg{Msg: conn.Msg{Subject: "x", Reply: "_INBOX.y"}}
	if err := plain.Ack(); !errors.Is(err, jsapi.ErrNotJSMessage) {
		t.Fatalf("plain ack: %v", err)
	}
	// The consumer's ack floor moved past the acked and terminated ones.
	info, err := nc.Request(ctx, "$JS.API.CONSUMER.INFO.P.C", nil)
	if err != nil || !strings.Contains(string(info.Data), `"ack_floor":{"consumer_seq":5,"stream_seq":5`) {
		t.Fatalf("consumer info: %v %s", err, info.Data)
	}
}

// Messages delivered by SubscribeBatches come back whole: the fields the
// connection filled, the connection for acknowledgements, and each one
// distinct memory (nothing is reused without lent). The pull tests cover
// acknowledging such messages from real consumers.
func TestSlabSubscribeBatches(t *testing.T) {
	s := natstest.NewServer(t)
	nc, err := conn.Connect(context.Background(), s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	b, err := jsapi.SubscribeBatches(nc, "slab.>", 3, false, false)
	if err != nil {
		t.Fatal(err)
	}
	sub := b.Subscription()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	pub, err := conn.Connect(ctx, s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	const n = 300 // more than one array
	for i := range n {
		if err := pub.PublishMsg(fmt.Sprintf("slab.%d", i), fmt.Sprintf("_INBOX.r.%d", i), nil, fmt.Appendf(nil, "m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[*jsapi.Msg]bool{}
	var batch []*jsapi.Msg
	for i := range n {
		if len(batch) == 0 {
			if batch, err = b.Next(ctx); err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
		}
		jm := batch[0]
		batch = batch[1:]
		if jm.Subject != fmt.Sprintf("slab.%d", i) || jm.Reply != fmt.Sprintf("_INBOX.r.%d", i) ||
			string(jm.Data) != fmt.Sprintf("m%d", i) || jm.Sub() != sub {
			t.Fatalf("message %d: %q %q %q", i, jm.Subject, jm.Reply, jm.Data)
		}
		// Not from a consumer (the server does not relay $JS.ACK replies
		// published by clients): acknowledging says so.
		if err := jm.Ack(); !errors.Is(err, jsapi.ErrNotJSMessage) {
			t.Fatalf("ack: %v", err)
		}
		if seen[jm] {
			t.Fatalf("message %d reuses the memory of an earlier one", i)
		}
		seen[jm] = true
	}
}
