package natsotel_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/trace"

	"github.com/natsio/natsio/conn"
)

// A request from one connection, answered by a handler on another, is one
// trace: the request's span is a child of the caller's, the handler's
// process span a child of the request's (and linked to it), the response's
// span a child of the process span; baggage reaches the handler.
func TestRequestAcrossConnectionsIsOneTrace(t *testing.T) {
	k := newKit(t, false)
	client := k.srv.Connect(t, conn.Observe(k.inst))
	server := k.srv.Connect(t, conn.Observe(k.inst))

	var gotBaggage, handlerTrace string
	sub, err := server.SubscribeFunc("svc.echo", func(m *conn.Msg) {
		hctx := k.inst.Context(context.Background(), m)
		gotBaggage = baggage.FromContext(hctx).Member("tenant").Value()
		handlerTrace = trace.SpanContextFromContext(hctx).TraceID().String()
		if err := m.Respond(m.Data); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Flush(ctx(t)); err != nil {
		t.Fatal(err)
	}

	member, _ := baggage.NewMember("tenant", "acme")
	bag, _ := baggage.New(member)
	rctx, root := k.tp.Tracer("test").Start(baggage.ContextWithBaggage(ctx(t), bag), "caller")
	if _, err := client.Request(rctx, "svc.echo", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	root.End()
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	<-sub.HandlerDone()

	caller := k.one(t, "caller")
	req := k.one(t, "request svc.echo")
	proc := k.one(t, "process svc.echo")
	resp := k.one(t, "respond")
	childOf(t, req, caller)
	childOf(t, proc, req)
	linkedTo(t, proc, req)
	childOf(t, resp, proc)
	kindIs(t, req, trace.SpanKindProducer)
	kindIs(t, proc, trace.SpanKindConsumer)
	wantAttrs(t, req, map[string]any{"messaging.system": "nats", "messaging.operation.type": "send",
		"messaging.operation.name": "request", "messaging.destination.name": "svc.echo", "messaging.message.body.size": int64(2)})
	wantAttrs(t, proc, map[string]any{"messaging.operation.type": "process", "messaging.destination.name": "svc.echo"})
	if gotBaggage != "acme" {
		t.Errorf("baggage in the handler: %q", gotBaggage)
	}
	if handlerTrace != caller.SpanContext().TraceID().String() {
		t.Errorf("the handler's context is in trace %s, want %s", handlerTrace, caller.SpanContext().TraceID())
	}
}

// A failed request records its natsio error type.
func TestFailedRequestRecordsErrorType(t *testing.T) {
	k := newKit(t, false)
	nc := k.srv.Connect(t, conn.Observe(k.inst))
	if _, err := nc.Request(ctx(t), "nobody.here", nil); err == nil {
		t.Fatal("a request nobody answers succeeded")
	}
	s := k.one(t, "request nobody.here")
	wantAttrs(t, s, map[string]any{"error.type": "conn.ErrNoResponders"})
	if s.Status().Code.String() != "Error" {
		t.Errorf("status %v", s.Status())
	}
}

// A core publish, which takes no context, is a child of the trace context
// Inject put in its header; the subscriber's iterator gets a receive span
// linked to it.
func TestPublishWithInjectedContextAndIterator(t *testing.T) {
	k := newKit(t, false)
	nc := k.srv.Connect(t, conn.Observe(k.inst))
	sub, err := nc.Subscribe("ev.*")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx(t)); err != nil {
		t.Fatal(err)
	}
	pctx, parent := k.tp.Tracer("test").Start(ctx(t), "parent")
	if err := nc.PublishMsg("ev.created", "", k.inst.Inject(pctx, nil), []byte("x")); err != nil {
		t.Fatal(err)
	}
	parent.End()
	m, err := sub.NextMsg(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	pub := k.one(t, "publish ev.created")
	childOf(t, pub, k.one(t, "parent"))
	rcv := k.one(t, "receive ev.*")
	linkedTo(t, rcv, pub)
	wantAttrs(t, rcv, map[string]any{"messaging.destination.name": "ev.created", "messaging.destination.template": "ev.*",
		"messaging.operation.type": "receive"})
	if got := trace.SpanContextFromContext(k.inst.Extract(context.Background(), m)).SpanID(); got != pub.SpanContext().SpanID() {
		t.Errorf("Extract gives span %s, want the publish's %s", got, pub.SpanContext().SpanID())
	}
}
