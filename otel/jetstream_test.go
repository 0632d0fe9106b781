package natsotel_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/ordered"
	"github.com/natsio/natsio/pubwin"
	"github.com/natsio/natsio/pull"
)

// JetStream publish → pull Consume → Ack: a publish span ended by the
// PubAck, a receive span linked to it, a process span that is its child,
// and an ack span (settle) that is the process span's child, each with
// the JetStream attributes. The API requests and the acknowledgement
// itself make no spans of their own.
func TestJetStreamPublishConsumeAck(t *testing.T) {
	k := newKit(t, true)
	nc := k.srv.Connect(t, conn.Observe(k.inst))
	js, err := jsapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx(t), jsapi.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatal(err)
	}
	pctx, parent := k.tp.Tracer("test").Start(ctx(t), "checkout")
	ack, err := js.Publish(pctx, "orders.new", []byte("order-1"), jsapi.MsgID("order-1"))
	if err != nil {
		t.Fatal(err)
	}
	parent.End()

	consInfo, err := js.CreateConsumer(ctx(t), "ORDERS", jsapi.ConsumerConfig{Durable: "worker"})
	if err != nil {
		t.Fatal(err)
	}
	cons, err := pull.FromInfo(js, consInfo)
	if err != nil {
		t.Fatal(err)
	}
	handled := make(chan error, 1)
	cc, err := cons.Consume(ctx(t), func(m *jsapi.Msg) { handled <- m.Ack() })
	if err != nil {
		t.Fatal(err)
	}
	if err := <-handled; err != nil {
		t.Fatal(err)
	}
	cc.Stop()
	<-cc.Closed()

	pub := k.one(t, "publish orders.new")
	rcv := k.one(t, "receive ORDERS")
	proc := k.one(t, "process ORDERS")
	settle := k.one(t, "ack ORDERS")
	childOf(t, pub, k.one(t, "checkout"))
	linkedTo(t, rcv, pub)
	childOf(t, proc, pub)
	linkedTo(t, proc, pub)
	childOf(t, settle, proc)
	kindIs(t, pub, trace.SpanKindProducer)
	kindIs(t, rcv, trace.SpanKindClient)
	kindIs(t, proc, trace.SpanKindConsumer)
	kindIs(t, settle, trace.SpanKindClient)
	wantAttrs(t, pub, map[string]any{"messaging.system": "nats", "messaging.operation.type": "send",
		"messaging.destination.name": "orders.new", "messaging.message.id": "order-1",
		"messaging.message.body.size": int64(7), "messaging.nats.stream.name": "ORDERS",
		"messaging.nats.stream.sequence": int64(ack.Sequence)})
	js1 := map[string]any{"messaging.destination.name": "orders.new", "messaging.message.id": "order-1",
		"messaging.nats.stream.name": "ORDERS", "messaging.nats.consumer.name": "worker",
		"messaging.consumer.group.name": "worker", "messaging.nats.stream.sequence": int64(1),
		"messaging.nats.consumer.sequence": int64(1), "messaging.nats.message.delivery_count": int64(1)}
	for _, s := range []struct {
		span  string
		typ   string
		attrs map[string]any
	}{{"receive ORDERS", "receive", js1}, {"process ORDERS", "process", js1}, {"ack ORDERS", "settle", js1}} {
		sp := k.one(t, s.span)
		wantAttrs(t, sp, s.attrs)
		wantAttrs(t, sp, map[string]any{"messaging.operation.type": s.typ})
	}
	for _, n := range k.names() {
		if strings.Contains(n, "$JS") || strings.HasPrefix(n, "request") {
			t.Errorf("span %q: protocol traffic must not make spans", n)
		}
	}

	rm := k.collect(t)
	if got, ok := intValue(rm, "nats.client.settled.messages", map[string]string{"messaging.operation.name": "ack"}); !ok || got != 1 {
		t.Errorf("settled acks: %d (found %v), want 1", got, ok)
	}
	if got, ok := intValue(rm, "nats.consumer.pending", map[string]string{"messaging.consumer.group.name": "worker"}); !ok || got != 0 {
		t.Errorf("pending of worker: %d (found %v), want 0", got, ok)
	}
	if got := histCount(rm, "messaging.client.operation.duration", map[string]string{"messaging.operation.name": "publish"}); got != 1 {
		t.Errorf("%d JetStream publish durations, want 1", got)
	}
	if got := histCount(rm, "messaging.process.duration", nil); got != 1 {
		t.Errorf("%d handler durations, want 1", got)
	}
}

// A KV put carries its trace context to a watcher: the watch's receive
// span links to the put's publish span.
func TestKVPutWatchCarriesContext(t *testing.T) {
	k := newKit(t, true)
	nc := k.srv.Connect(t, conn.Observe(k.inst))
	js, err := jsapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := kv.CreateBucket(ctx(t), js, kv.Config{Bucket: "profiles"})
	if err != nil {
		t.Fatal(err)
	}
	pctx, parent := k.tp.Tracer("test").Start(ctx(t), "update-profile")
	if _, err := b.Put(pctx, "alice", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	parent.End()
	wctx, cancel := context.WithCancel(ctx(t))
	defer cancel()
	for e, err := range b.Watch(wctx, "alice") {
		if err != nil {
			t.Fatal(err)
		}
		if e != nil {
			break
		}
	}
	put := k.one(t, "publish $KV.profiles.alice")
	childOf(t, put, k.one(t, "update-profile"))
	rcv := k.one(t, "receive KV_profiles")
	linkedTo(t, rcv, put)
	wantAttrs(t, rcv, map[string]any{"messaging.destination.name": "$KV.profiles.alice", "messaging.nats.stream.name": "KV_profiles"})
}

// A pubwin future's span ends when the future is resolved, with the
// PubAck's stream and sequence; a Fetch gives a receive span per message.
func TestWindowFutureAndFetch(t *testing.T) {
	k := newKit(t, true)
	nc := k.srv.Connect(t, conn.Observe(k.inst))
	js, err := jsapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx(t), jsapi.StreamConfig{Name: "EV", Subjects: []string{"ev.>"}}); err != nil {
		t.Fatal(err)
	}
	w, err := pubwin.New(js)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	stop, err := k.inst.ObserveWindow(w, "events")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop() }()
	f, err := w.Publish(ctx(t), "ev.a", []byte("1"))
	if err != nil {
		t.Fatal(err)
	}
	ack, err := f.Wait(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	pub := k.one(t, "publish ev.a")
	wantAttrs(t, pub, map[string]any{"messaging.nats.stream.name": "EV", "messaging.nats.stream.sequence": int64(ack.Sequence)})
	rm := k.collect(t)
	if got, ok := intValue(rm, "nats.pubwin.futures", map[string]string{"nats.pubwin.outcome": "acked"}); !ok || got != 1 {
		t.Errorf("acked futures: %d (found %v), want 1", got, ok)
	}
	if got, ok := intValue(rm, "nats.pubwin.pending", map[string]string{"nats.pubwin.name": "events"}); !ok || got != 0 {
		t.Errorf("pending futures: %d (found %v), want 0", got, ok)
	}

	consInfo, err := js.CreateConsumer(ctx(t), "EV", jsapi.ConsumerConfig{Durable: "f"})
	if err != nil {
		t.Fatal(err)
	}
	cons, err := pull.FromInfo(js, consInfo)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := cons.Fetch(ctx(t), 1)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("fetch: %d, %v", len(msgs), err)
	}
	if err := msgs[0].Term(); err != nil {
		t.Fatal(err)
	}
	rcv := k.one(t, "receive EV")
	linkedTo(t, rcv, pub)
	term := k.one(t, "term EV")
	linkedTo(t, term, pub)
	wantAttrs(t, term, map[string]any{"messaging.operation.type": "settle", "messaging.operation.name": "term"})
}

// An ordered consumer's Consume handler runs in a process span, a child
// of the publish span; a pull Messages loop's InProgress and Nak make
// settle spans linked to the producer's.
func TestOrderedConsumeAndSettleKinds(t *testing.T) {
	k := newKit(t, true)
	nc := k.srv.Connect(t, conn.Observe(k.inst))
	js, err := jsapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx(t), jsapi.StreamConfig{Name: "O", Subjects: []string{"o.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx(t), "o.1", []byte("a")); err != nil {
		t.Fatal(err)
	}
	pub := k.one(t, "publish o.1")

	oc, err := ordered.New(ctx(t), js, "O", ordered.Config{})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{}, 1)
	cc, err := oc.Consume(ctx(t), func(*jsapi.Msg) { got <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	<-got
	cc.Stop()
	<-cc.Closed()
	proc := k.one(t, "process O")
	childOf(t, proc, pub)

	consInfo, err := js.CreateConsumer(ctx(t), "O", jsapi.ConsumerConfig{Durable: "slow"})
	if err != nil {
		t.Fatal(err)
	}
	cons, err := pull.FromInfo(js, consInfo)
	if err != nil {
		t.Fatal(err)
	}
	for m, err := range cons.Messages(ctx(t)) {
		if err != nil {
			t.Fatal(err)
		}
		if err := m.InProgress(); err != nil {
			t.Fatal(err)
		}
		if err := m.Nak(); err != nil {
			t.Fatal(err)
		}
		break
	}
	for _, name := range []string{"in_progress O", "nak O"} {
		s := k.one(t, name)
		linkedTo(t, s, pub)
		wantAttrs(t, s, map[string]any{"messaging.operation.type": "settle", "messaging.nats.consumer.name": "slow"})
	}
}
