package natsotel_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/natsio/natsio/natstest"
	natsotel "github.com/natsio/natsio/otel"
)

// kit is an Instrumentation with an in-memory span recorder and a manual
// metric reader, over a real embedded server.
type kit struct {
	srv    *natstest.Server
	inst   *natsotel.Instrumentation
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
}

func newKit(t *testing.T, jetstream bool, opts ...natsotel.Option) *kit {
	t.Helper()
	k := &kit{srv: natstest.NewServer(t, natstest.JetStream(jetstream)), spans: tracetest.NewSpanRecorder(),
		reader: sdkmetric.NewManualReader()}
	k.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(k.spans), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(k.reader))
	t.Cleanup(func() {
		_ = k.tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	all := append([]natsotel.Option{natsotel.WithTracerProvider(k.tp), natsotel.WithMeterProvider(mp),
		natsotel.WithPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))}, opts...)
	inst, err := natsotel.New(all...)
	if err != nil {
		t.Fatal(err)
	}
	k.inst = inst
	return k
}

// ctx is a test context with a deadline.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// ended returns the ended spans named name.
func (k *kit) ended(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range k.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// one returns the only ended span named name.
func (k *kit) one(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	s := k.ended(name)
	if len(s) != 1 {
		t.Fatalf("%d spans named %q, want 1; all: %v", len(s), name, k.names())
	}
	return s[0]
}

func (k *kit) names() []string {
	var n []string
	for _, s := range k.spans.Ended() {
		n = append(n, s.Name())
	}
	slices.Sort(n)
	return n
}

// attr returns span's attribute key.
func attr(s sdktrace.ReadOnlySpan, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// wantAttrs checks span's attributes.
func wantAttrs(t *testing.T, s sdktrace.ReadOnlySpan, want map[string]any) {
	t.Helper()
	for k, w := range want {
		v, ok := attr(s, k)
		if !ok {
			t.Errorf("%s: no %s", s.Name(), k)
			continue
		}
		if got := v.AsInterface(); got != w {
			t.Errorf("%s: %s = %v (%T), want %v (%T)", s.Name(), k, got, got, w, w)
		}
	}
}

// childOf checks that child's parent is parent's span.
func childOf(t *testing.T, child, parent sdktrace.ReadOnlySpan) {
	t.Helper()
	if child.Parent().SpanID() != parent.SpanContext().SpanID() || child.SpanContext().TraceID() != parent.SpanContext().TraceID() {
		t.Errorf("%s (parent %s) is not a child of %s (%s)", child.Name(), child.Parent().SpanID(), parent.Name(), parent.SpanContext().SpanID())
	}
}

// linkedTo checks that s links to target's span.
func linkedTo(t *testing.T, s, target sdktrace.ReadOnlySpan) {
	t.Helper()
	for _, l := range s.Links() {
		if l.SpanContext.SpanID() == target.SpanContext().SpanID() && l.SpanContext.TraceID() == target.SpanContext().TraceID() {
			return
		}
	}
	t.Errorf("%s does not link to %s", s.Name(), target.Name())
}

func kindIs(t *testing.T, s sdktrace.ReadOnlySpan, k trace.SpanKind) {
	t.Helper()
	if s.SpanKind() != k {
		t.Errorf("%s: kind %v, want %v", s.Name(), s.SpanKind(), k)
	}
}
