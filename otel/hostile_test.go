package natsotel_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	natsotel "github.com/natsio/natsio/otel"
	"github.com/natsio/natsio/proto"
	"github.com/natsio/natsio/pull"
)

// checkBounded fails for every span whose name or string attribute is
// longer than MaxAttributeLength (the name has its operation before the
// destination).
func checkBounded(t *testing.T, spans []sdktrace.ReadOnlySpan) {
	t.Helper()
	for _, s := range spans {
		if len(s.Name()) > len("process ")+natsotel.MaxAttributeLength {
			t.Errorf("span name of %d bytes", len(s.Name()))
		}
		for _, kv := range s.Attributes() {
			if v := kv.Value.Emit(); len(v) > natsotel.MaxAttributeLength {
				t.Errorf("%s: %s of %d bytes", s.Name()[:min(len(s.Name()), 40)], kv.Key, len(v))
			}
		}
	}
}

// Another tenant's 1 MB Nats-Msg-Id, and a 3,000-byte subject, reach no
// span whole: every attribute and span name taken from a message is cut
// to MaxAttributeLength, for core handlers and iterators, JetStream
// publishes that pass the header on, and a JetStream consumer's receive,
// process and ack spans. Before, the id was cloned into every span (3.4 GB
// held with a slow exporter).
func TestHostileHeaderAttributesCapped(t *testing.T) {
	k := newKit(t, true)
	victim := k.srv.Connect(t, conn.Observe(k.inst))
	tenant := k.srv.Connect(t)
	hugeID := strings.Repeat("i", 1_000_000)
	longSubject := "big." + strings.Repeat("s", 3000)
	h := new(proto.Header)
	h.Set(jsapi.HeaderMsgID, hugeID)

	handled := make(chan struct{}, 1)
	sub, err := victim.SubscribeFunc("big.>", func(m *conn.Msg) {
		// A relay passes the message on with its header: a JetStream
		// publish span of the victim's own (the server refuses a header
		// over 64 KiB into a stream, after the span started).
		if js, err := jsapi.New(victim); err == nil {
			_, _ = js.PublishMsg(k.inst.Context(ctx(t), m), "orders.relay", &m.Header, m.Data)
		}
		handled <- struct{}{}
	})
	if err != nil {
		t.Fatal(err)
	}
	iter, err := victim.Subscribe("big.>")
	if err != nil {
		t.Fatal(err)
	}
	js, err := jsapi.New(victim)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx(t), jsapi.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatal(err)
	}
	if err := victim.Flush(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := tenant.PublishMsg(longSubject, "", h, []byte("x")); err != nil {
		t.Fatal(err)
	}
	<-handled
	// Into the stream, as large an id as it takes (headers up to 64 KiB).
	h.Set(jsapi.HeaderMsgID, hugeID[:60_000])
	if err := tenant.PublishMsg("orders.tenant", "", h, []byte("y")); err != nil {
		t.Fatal(err)
	}
	if _, err := iter.NextMsg(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	<-sub.HandlerDone()

	consInfo, err := js.CreateConsumer(ctx(t), "ORDERS", jsapi.ConsumerConfig{Durable: "w"})
	if err != nil {
		t.Fatal(err)
	}
	cons, err := pull.FromInfo(js, consInfo)
	if err != nil {
		t.Fatal(err)
	}
	acked := make(chan error, 1)
	cc, err := cons.Consume(ctx(t), func(m *jsapi.Msg) { acked <- m.Ack() })
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-acked:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx(t).Done():
		t.Fatal("the stream's message was not consumed")
	}
	cc.Stop()
	<-cc.Closed()

	spans := k.spans.Ended()
	withID := 0
	for _, s := range spans {
		if v, ok := attr(s, "messaging.message.id"); ok {
			withID++
			if got := v.AsString(); got != hugeID[:natsotel.MaxAttributeLength] {
				t.Errorf("%.40s: message id of %d bytes, want the first %d", s.Name(), len(got), natsotel.MaxAttributeLength)
			}
		}
	}
	// process and receive (core), publish (relay), receive, process and
	// ack (consumer).
	if withID < 6 {
		t.Fatalf("%d spans carry the message id, want at least 6: %v", withID, k.names())
	}
	checkBounded(t, spans)
}

// tenantTraceparent is a sampled trace context another tenant puts in
// its messages, with its baggage.
const (
	tenantTraceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
	tenantTraceparent = "00-" + tenantTraceID + "-00f067aa0ba902b7-01"
)

// handlerContext publishes, as another tenant, a message carrying a
// sampled trace context and baggage, and returns the span context and
// baggage its handler sees through Context, with the spans recorded.
func handlerContext(t *testing.T, sampler sdktrace.Sampler, opts ...natsotel.Option) (trace.SpanContext, baggage.Baggage, []sdktrace.ReadOnlySpan) {
	t.Helper()
	srv := natstest.NewServer(t, natstest.JetStream(false))
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithSampler(sampler))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	inst, err := natsotel.New(append([]natsotel.Option{natsotel.WithTracerProvider(tp),
		natsotel.WithPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	victim := srv.Connect(t, conn.Observe(inst))
	tenant := srv.Connect(t)
	type seen struct {
		sc  trace.SpanContext
		bag baggage.Baggage
	}
	got := make(chan seen, 1)
	sub, err := victim.SubscribeFunc("svc.work", func(m *conn.Msg) {
		hctx := inst.Context(context.Background(), m)
		got <- seen{trace.SpanContextFromContext(hctx), baggage.FromContext(hctx)}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := victim.Flush(ctx(t)); err != nil {
		t.Fatal(err)
	}
	h := new(proto.Header)
	h.Set("traceparent", tenantTraceparent)
	h.Set("baggage", "tenant=evil")
	if err := tenant.PublishMsg("svc.work", "", h, []byte("x")); err != nil {
		t.Fatal(err)
	}
	s := <-got
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	<-sub.HandlerDone()
	return s.sc, s.bag, rec.Ended()
}

// With WithIncomingAsLink, a handler's process span is a new root linked
// to the message's trace context: the tenant's sampled flag does not make
// it sampled, and the tenant's baggage does not reach the handler. By
// default the message's context is the parent, and both do.
func TestHostileIncomingTraceContextAsLink(t *testing.T) {
	never := sdktrace.ParentBased(sdktrace.NeverSample())

	sc, bag, _ := handlerContext(t, never)
	if sc.TraceID().String() != tenantTraceID || !sc.IsSampled() || bag.Member("tenant").Value() != "evil" {
		t.Fatalf("default: handler in trace %s (sampled %v), baggage %q; want the tenant's, sampled, with its baggage",
			sc.TraceID(), sc.IsSampled(), bag.String())
	}

	sc, bag, _ = handlerContext(t, never, natsotel.WithIncomingAsLink())
	if !sc.IsValid() || sc.TraceID().String() == tenantTraceID || sc.IsSampled() || bag.Len() != 0 {
		t.Fatalf("as a link: handler in trace %s (sampled %v), baggage %q; want a trace of its own, not sampled, no baggage",
			sc.TraceID(), sc.IsSampled(), bag.String())
	}

	_, _, spans := handlerContext(t, sdktrace.AlwaysSample(), natsotel.WithIncomingAsLink())
	var proc sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == "process svc.work" {
			proc = s
		}
	}
	if proc == nil {
		t.Fatal("no process span")
	}
	if proc.Parent().IsValid() || proc.SpanContext().TraceID().String() == tenantTraceID {
		t.Fatalf("process span has parent %v in trace %s; want a new root", proc.Parent().SpanID(), proc.SpanContext().TraceID())
	}
	linked := false
	for _, l := range proc.Links() {
		linked = linked || l.SpanContext.TraceID().String() == tenantTraceID
	}
	if !linked {
		t.Fatalf("process span does not link to the message's trace context: %v", proc.Links())
	}
}
