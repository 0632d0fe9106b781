package natsotel_test

import (
	"context"
	"fmt"
	"slices"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
	natsotel "github.com/natsio/natsio/otel"
)

// A service and its client on two connections, both instrumented: the
// request, the handler's process span and the response form one trace
// under the caller's span.
func Example() {
	srv, err := natstest.Start(natstest.JetStream(false))
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	// In a program: an OTLP exporter and a batching span processor.
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	inst, err := natsotel.New(natsotel.WithTracerProvider(tp))
	if err != nil {
		panic(err)
	}

	ctx := context.Background()
	connect := func() *conn.Conn {
		nc, err := conn.Connect(ctx, srv.URL(), append(srv.ConnectOptions(), conn.Observe(inst))...)
		if err != nil {
			panic(err)
		}
		return nc
	}
	service, client := connect(), connect()
	defer service.Close()
	defer client.Close()

	sub, err := service.SubscribeFunc("greet", func(m *conn.Msg) {
		// inst.Context(ctx, m) is the context for the handler's own spans.
		_ = m.Respond([]byte("hello " + string(m.Data)))
	})
	if err != nil {
		panic(err)
	}
	if err := service.Flush(ctx); err != nil {
		panic(err)
	}

	tctx, span := tp.Tracer("example").Start(ctx, "signup")
	reply, err := client.Request(tctx, "greet", []byte("ada"))
	if err != nil {
		panic(err)
	}
	span.End()
	_ = sub.Unsubscribe()
	<-sub.HandlerDone() // the process span has ended

	fmt.Println(string(reply.Data))
	spans := exp.GetSpans()
	names := map[string]string{} // span ID → name
	for _, s := range spans {
		names[s.SpanContext.SpanID().String()] = s.Name
	}
	var lines []string
	for _, s := range spans {
		line := s.Name
		if p, ok := names[s.Parent.SpanID().String()]; ok {
			line += " ← " + p
		}
		lines = append(lines, line)
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// hello ada
	// process greet ← request greet
	// request greet ← signup
	// respond ← process greet
	// signup
}
