package jsapi_test

import (
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

// pullFirst sends one pull request with body to consumer C of stream NAK and
// returns the first thing that answers it (a message or a status).
func pullFirst(t *testing.T, nc *conn.Conn, body string) *conn.Msg {
	t.Helper()
	sub, err := nc.Subscribe(nc.NewInbox())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.PublishMsg("$JS.API.CONSUMER.MSG.NEXT.NAK.C", sub.Subject, nil, []byte(body)); err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// F23: NakWithDelay(1.5s) really delays the redelivery. With a 30 s ack
// wait, a pull that expires 300 ms after the Nak gets nothing (a plain Nak,
// or a delay sent in the wrong unit, would redeliver at once); a later pull
// gets the same message, delivered twice, no earlier than the delay after
// the Nak (measured, not slept).
func TestNakWithDelayDelaysRedelivery(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxT(t)
	mustCreateStream(t, js, jsapi.StreamConfig{Name: "NAK", Subjects: []string{"nak.>"}})
	seq := mustStore(t, nc, "nak.a", "payload")
	if _, err := js.CreateConsumer(ctx, "NAK", jsapi.ConsumerConfig{Durable: "C", AckPolicy: jsapi.AckExplicit, AckWait: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}

	m := pullFirst(t, nc, `{"batch":1,"expires":5000000000}`)
	if m.Status() != 0 {
		t.Fatalf("first pull: status %d %q", m.Status(), m.Header)
	}
	jm := jsapi.NewMsg(nc, m)
	md, err := jm.Metadata()
	if err != nil || md.StreamSeq != seq || md.NumDelivered != 1 {
		t.Fatalf("first delivery %+v %v", md, err)
	}
	const delay = 1500 * time.Millisecond
	naked := time.Now()
	if err := jm.NakWithDelay(delay); err != nil {
		t.Fatal(err)
	}

	// Right after the Nak: the pull expires with nothing (408).
	m = pullFirst(t, nc, `{"batch":1,"expires":300000000}`)
	if code, desc := m.Header.Status(); code != 408 || len(m.Data) != 0 {
		t.Fatalf("pull right after the Nak got status %d %q, data %q; want 408 and nothing", code, desc, m.Data)
	}

	// Later: the same message, second delivery, after the delay.
	m = pullFirst(t, nc, `{"batch":1,"expires":5000000000}`)
	elapsed := time.Since(naked)
	if m.Status() != 0 {
		t.Fatalf("pull after the delay: status %d %q after %v", m.Status(), m.Header, elapsed)
	}
	re := jsapi.NewMsg(nc, m)
	md, err = re.Metadata()
	if err != nil || md.StreamSeq != seq || md.NumDelivered != 2 || string(re.Data) != "payload" {
		t.Fatalf("redelivery %+v %q %v", md, re.Data, err)
	}
	if elapsed < delay-100*time.Millisecond {
		t.Fatalf("redelivered %v after the Nak, before its delay of %v", elapsed, delay)
	}
	if err := re.AckSync(ctx); err != nil {
		t.Fatal(err)
	}
}
