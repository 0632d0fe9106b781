package jsapi_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
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
	if err := nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT.P.C", sub.Subject, []byte(`{"batch":6}`)); err != nil {
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
	if err := msgs[4].TermWithReason("a\r\nb"); !errors.Is(err, jsapi.ErrInvalidOption) {
		t.Fatalf("reason with CRLF: %v", err)
	}
	msgs[4].Ack()
	// A Nak asks for redelivery now: the next pull gets message 6 then the
	// redelivered one.
	if err := msgs[5].Nak(); err != nil {
		t.Fatal(err)
	}
	nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT.P.C", sub.Subject, []byte(`{"batch":1,"expires":5000000000}`))
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
	plain := &jsapi.Msg{Subject: "x", Reply: "_INBOX.y"}
	if err := plain.Ack(); !errors.Is(err, jsapi.ErrNotJSMessage) {
		t.Fatalf("plain ack: %v", err)
	}
	// The consumer's ack floor moved past the acked and terminated ones.
	info, err := nc.Request(ctx, "$JS.API.CONSUMER.INFO.P.C", nil)
	if err != nil || !strings.Contains(string(info.Data), `"ack_floor":{"consumer_seq":5,"stream_seq":5`) {
		t.Fatalf("consumer info: %v %s", err, info.Data)
	}
}
