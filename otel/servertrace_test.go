package natsotel_test

import (
	"encoding/json"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/natsio/natsio/conn"
	natsotel "github.com/natsio/natsio/otel"
)

// With WithServerTracing, a message whose span is sampled carries
// Nats-Trace-Dest and the server reports on it to that subject, with the
// message's traceparent in the report; it is still delivered. An
// unsampled span adds no Nats-Trace-Dest.
func TestServerTracingForSampledSpans(t *testing.T) {
	k := newKit(t, false, natsotel.WithServerTracing("traces.app"))
	nc := k.srv.Connect(t, conn.Observe(k.inst))
	watcher := k.srv.Connect(t)
	reports, err := watcher.Subscribe("traces.app")
	if err != nil {
		t.Fatal(err)
	}
	dest, err := watcher.Subscribe("orders.placed")
	if err != nil {
		t.Fatal(err)
	}
	if err := watcher.Flush(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("orders.placed", []byte("1")); err != nil {
		t.Fatal(err)
	}
	m, err := dest.NextMsg(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	tp := m.Header.Get("traceparent")
	if m.Header.Get(conn.HeaderTraceDest) != "traces.app" || tp == "" {
		t.Fatalf("delivered header: %q", m.Header.Block())
	}
	r, err := reports.NextMsg(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var ev conn.TraceEvent
	if err := json.Unmarshal(r.Data, &ev); err != nil {
		t.Fatal(err)
	}
	if got := ev.Request.Header["traceparent"]; len(got) != 1 || got[0] != tp {
		t.Errorf("the report's traceparent %v, want %q", got, tp)
	}
	if in := ev.Ingress(); in == nil || in.Subject != "orders.placed" {
		t.Errorf("the report's ingress: %+v", in)
	}

	// Not sampled: no server tracing asked for.
	unsampled := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	inst, err := natsotel.New(natsotel.WithTracerProvider(unsampled), natsotel.WithServerTracing("traces.app"))
	if err != nil {
		t.Fatal(err)
	}
	quiet := k.srv.Connect(t, conn.Observe(inst))
	if err := quiet.Publish("orders.placed", []byte("2")); err != nil {
		t.Fatal(err)
	}
	m, err = dest.NextMsg(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Header.Lookup(conn.HeaderTraceDest); ok {
		t.Errorf("an unsampled span asked for server tracing: %q", m.Header.Block())
	}
}
