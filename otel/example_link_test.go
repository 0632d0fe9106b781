package natsotel_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
	natsotel "github.com/natsio/natsio/otel"
)

// At a trust boundary, a handler's span starts a trace of its own and
// links to the publisher's span, so the publisher's sampled flag and
// baggage do not reach it.
func ExampleWithIncomingAsLink() {
	srv, err := natstest.Start(natstest.JetStream(false))
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	inst, err := natsotel.New(natsotel.WithTracerProvider(tp), natsotel.WithIncomingAsLink())
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	nc, err := conn.Connect(ctx, srv.URL(), append(srv.ConnectOptions(), conn.Observe(inst))...)
	if err != nil {
		panic(err)
	}
	defer nc.Close()
	done := make(chan struct{})
	sub, err := nc.SubscribeFunc("work", func(*conn.Msg) { close(done) })
	if err != nil {
		panic(err)
	}
	pctx, span := tp.Tracer("publisher").Start(ctx, "publisher")
	if err := nc.PublishMsg("work", "", inst.Inject(pctx, nil), []byte("job")); err != nil {
		panic(err)
	}
	span.End()
	<-done
	_ = sub.Unsubscribe()
	<-sub.HandlerDone()

	for _, s := range exp.GetSpans() {
		if s.Name == "process work" {
			fmt.Println("root:", !s.Parent.IsValid(), "links to the publisher:",
				len(s.Links) == 1 && s.Links[0].SpanContext.TraceID() == span.SpanContext().TraceID())
		}
	}
	// Output: root: true links to the publisher: true
}
