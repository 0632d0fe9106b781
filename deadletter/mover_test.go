package deadletter_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/natsio/natsio/deadletter"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
	"github.com/natsio/natsio/pull"
)

type dlEnv struct {
	js  *jsapi.JS
	ctx context.Context
	dlq *pull.Consumer
}

func newDLEnv(t *testing.T, retention jsapi.RetentionPolicy) *dlEnv {
	t.Helper()
	s := natstest.NewServer(t)
	nc := s.Connect(t)
	js, err := jsapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Retention: retention}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "DLQ", Subjects: []string{"deadletter.>"}}); err != nil {
		t.Fatal(err)
	}
	dlqInfo, err := js.CreateConsumer(ctx, "DLQ", jsapi.ConsumerConfig{Durable: "read"})
	if err != nil {
		t.Fatal(err)
	}
	dlq, err := pull.FromInfo(js, dlqInfo)
	if err != nil {
		t.Fatal(err)
	}
	return &dlEnv{js: js, ctx: ctx, dlq: dlq}
}

// giveUp publishes a message and makes consumer c give up on it: naked
// until it runs out of deliveries, or terminated.
func (e *dlEnv) giveUp(t *testing.T, c *pull.Consumer, subject, id string, term bool) {
	t.Helper()
	h := proto.NewHeader("Order-Id", id, "Nats-Expected-Stream", "ORDERS")
	if _, err := e.js.PublishMsg(e.ctx, subject, h, []byte("order "+id)); err != nil {
		t.Fatal(err)
	}
	for {
		m, err := c.Next(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.Header.Get("Order-Id") != id {
			t.Fatalf("got order %q, want %q", m.Header.Get("Order-Id"), id)
		}
		if term {
			if err := m.TermWithReason("invalid amount"); err != nil {
				t.Fatal(err)
			}
			return
		}
		if err := m.Nak(); err != nil {
			t.Fatal(err)
		}
		if md, _ := m.Metadata(); md.NumDelivered == 2 {
			// A pull waiting after the last delivery makes the server
			// give up on the message once it has read the Nak.
			ctx, cancel := context.WithTimeout(e.ctx, 500*time.Millisecond)
			defer cancel()
			if msgs, err := c.Fetch(ctx, 1); len(msgs) != 0 || (err != nil && !errors.Is(err, pull.ErrNoMessages)) {
				t.Fatalf("fetch after the last delivery: %d messages, %v", len(msgs), err)
			}
			return
		}
	}
}

func (e *dlEnv) letter(t *testing.T) *jsapi.Msg {
	t.Helper()
	m, err := e.dlq.Next(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	m.Ack()
	return m
}

func wantHeaders(t *testing.T, m *jsapi.Msg, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := m.Header.Get(k); got != v {
			t.Errorf("letter on %s: %s = %q, want %q", m.Subject, k, got, v)
		}
	}
}

// A message that ran out of deliveries and a terminated one both arrive on
// the dead-letter subject, body and headers intact, with headers naming
// their origin; advisories captured while no Mover runs are moved when one
// starts again, and nothing is moved twice.
func TestMoverMovesMaxDeliveriesAndTerminated(t *testing.T) {
	e := newDLEnv(t, jsapi.RetentionLimits)
	ci, err := e.js.CreateConsumer(e.ctx, "ORDERS", jsapi.ConsumerConfig{Durable: "billing", MaxDeliver: 2, AckWait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c, err := pull.FromInfo(e.js, ci)
	if err != nil {
		t.Fatal(err)
	}
	mv, err := deadletter.Start(e.ctx, e.js, deadletter.Config{Stream: "ORDERS", Consumer: "billing", AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}

	e.giveUp(t, c, "orders.new", "1", false)
	m := e.letter(t)
	wantHeaders(t, m, map[string]string{
		deadletter.HeaderStream: "ORDERS", deadletter.HeaderConsumer: "billing", deadletter.HeaderSequence: "1",
		deadletter.HeaderDeliveries: "2", deadletter.HeaderReason: "max_deliveries", deadletter.HeaderSubject: "orders.new",
		"Order-Id": "1", "Nats-Expected-Stream": "", jsapi.HeaderMsgID: deadletter.LetterID("ORDERS", "billing", 1),
	})
	if m.Subject != "deadletter.ORDERS.billing" || string(m.Data) != "order 1" {
		t.Fatalf("letter %s %q", m.Subject, m.Data)
	}

	e.giveUp(t, c, "orders.new", "2", true)
	m = e.letter(t)
	wantHeaders(t, m, map[string]string{
		deadletter.HeaderSequence: "2", deadletter.HeaderDeliveries: "1", deadletter.HeaderReason: "terminated",
		deadletter.HeaderDescription: "invalid amount", "Order-Id": "2",
	})

	// While no Mover runs, the advisory waits in its stream.
	mv.Stop()
	<-mv.Closed()
	if mv.Err() != nil {
		t.Fatal(mv.Err())
	}
	e.giveUp(t, c, "orders.new", "3", true)
	mv, err = deadletter.Start(e.ctx, e.js, deadletter.Config{Stream: "ORDERS", Consumer: "billing", AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer mv.Stop()
	m = e.letter(t)
	wantHeaders(t, m, map[string]string{deadletter.HeaderSequence: "3", "Order-Id": "3"})

	// Publishing a letter again (a crash between publish and ack) is
	// dropped by the duplicate window.
	ack, err := e.js.PublishMsg(e.ctx, "deadletter.ORDERS.billing", nil, []byte("again"), jsapi.MsgID(deadletter.LetterID("ORDERS", "billing", 3)))
	if err != nil || !ack.Duplicate {
		t.Fatalf("republished letter: %+v %v", ack, err)
	}
	info, err := e.js.Stream(e.ctx, "DLQ")
	if err != nil || info.CachedInfo().State.Msgs != 3 {
		t.Fatalf("DLQ holds %d letters (%v), want 3", info.CachedInfo().State.Msgs, err)
	}
	mv.Stop()
	<-mv.Closed()
	if st := mv.Stats(); st.Moved != 1 {
		t.Fatalf("restarted mover stats %+v", st)
	}
}

// All consumers of a stream, with a filter: letters of the consumers it
// refuses are dropped.
func TestMoverAllConsumersWithFilter(t *testing.T) {
	e := newDLEnv(t, jsapi.RetentionLimits)
	var cs []*pull.Consumer
	for _, name := range []string{"g-a", "other"} {
		info, err := e.js.CreateConsumer(e.ctx, "ORDERS", jsapi.ConsumerConfig{Durable: name, FilterSubject: "orders." + name})
		if err != nil {
			t.Fatal(err)
		}
		c, err := pull.FromInfo(e.js, info)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	mv, err := deadletter.Start(e.ctx, e.js, deadletter.Config{Stream: "ORDERS",
		Filter: func(a *deadletter.Advisory) bool { return a.Consumer[:2] == "g-" }})
	if err != nil {
		t.Fatal(err)
	}
	defer mv.Stop()
	e.giveUp(t, cs[1], "orders.other", "1", true)
	e.giveUp(t, cs[0], "orders.g-a", "2", true)
	m := e.letter(t)
	wantHeaders(t, m, map[string]string{deadletter.HeaderConsumer: "g-a", "Order-Id": "2"})
	// Each consumer's server-side term is its own: "other"'s advisory may
	// come after g-a's, so wait for the mover to have skipped it.
	testutil.Eventually(t, "the other consumer's advisory skipped", func() bool { return mv.Stats().Skipped == 1 })
	mv.Stop()
	<-mv.Closed()
	if st := mv.Stats(); st.Skipped != 1 || st.Moved != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// On a work-queue stream the server removes a terminated message, so its
// letter carries the origin headers and Dead-Letter-Missing.
func TestMoverWorkQueueTerminated(t *testing.T) {
	e := newDLEnv(t, jsapi.RetentionWorkQueue)
	info, err := e.js.CreateConsumer(e.ctx, "ORDERS", jsapi.ConsumerConfig{Durable: "w", MaxDeliver: 2})
	if err != nil {
		t.Fatal(err)
	}
	c, err := pull.FromInfo(e.js, info)
	if err != nil {
		t.Fatal(err)
	}
	mv, err := deadletter.Start(e.ctx, e.js, deadletter.Config{Stream: "ORDERS"})
	if err != nil {
		t.Fatal(err)
	}
	defer mv.Stop()
	e.giveUp(t, c, "orders.new", "1", false)
	e.giveUp(t, c, "orders.new", "2", true)
	for i := range 2 {
		m := e.letter(t)
		t.Logf("work queue letter %d: missing=%q body=%q reason=%s", i, m.Header.Get(deadletter.HeaderMissing), m.Data, m.Header.Get(deadletter.HeaderReason))
		if m.Header.Get(deadletter.HeaderSequence) != strconv.Itoa(i+1) {
			t.Fatalf("letter %d names seq %s", i, m.Header.Get(deadletter.HeaderSequence))
		}
	}
}

func TestParseAdvisoryRefusesOthers(t *testing.T) {
	for _, c := range []struct{ subj, data string }{
		{"x", `{`},
		{deadletter.SubjectMaxDeliveries + ".S.C", `{"type":"io.nats.jetstream.advisory.v1.terminated","stream":"S","consumer":"C","stream_seq":1}`},
		{deadletter.SubjectTerminated + ".S.C", `{"type":"io.nats.jetstream.advisory.v1.terminated","stream":"S","consumer":"C"}`},
	} {
		if _, err := deadletter.ParseAdvisory(c.subj, []byte(c.data)); !errors.Is(err, deadletter.ErrNotAdvisory) {
			t.Errorf("%s %s: %v", c.subj, c.data, err)
		}
	}
	a, err := deadletter.ParseAdvisory(deadletter.SubjectTerminated+".S.C",
		[]byte(`{"type":"io.nats.jetstream.advisory.v1.terminated","stream":"S","consumer":"C","stream_seq":7,"deliveries":3,"reason":"r"}`))
	if err != nil || a.Reason != deadletter.Terminated || a.StreamSeq != 7 || a.Deliveries != 3 || a.Description != "r" {
		t.Fatalf("%+v %v", a, err)
	}
}
