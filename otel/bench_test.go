package natsotel_test

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/natstest"
	natsotel "github.com/natsio/natsio/otel"
)

// connect connects to a server of the benchmarks (a child process, so
// that the figures count the client alone).
var connect = testutil.Connect

// benchCases: no Observer, and the OpenTelemetry instrumentation with
// every span sampled (recorded by the SDK, exported nowhere) and metrics
// recorded.
func benchCases(b *testing.B) []struct {
	name string
	opts []conn.Option
} {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	inst, err := natsotel.New(natsotel.WithTracerProvider(tp), natsotel.WithMeterProvider(mp))
	if err != nil {
		b.Fatal(err)
	}
	return []struct {
		name string
		opts []conn.Option
	}{{"none", nil}, {"otel", []conn.Option{conn.Observe(inst)}}}
}

// BenchmarkPublish: Publish of 16 bytes, without an Observer and with the
// instrumentation (a send span and the trace context in a header).
func BenchmarkPublish(b *testing.B) {
	for _, c := range benchCases(b) {
		b.Run(c.name, func(b *testing.B) {
			s := natstest.NewProcess(b, false)
			nc := connect(b, s.URL(), c.opts...)
			data := make([]byte, 16)
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if err := nc.Publish("bench.otel", data); err != nil {
					b.Fatal(err)
				}
			}
			if err := nc.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkDeliver: a message published and handled by a SubscribeFunc
// handler on another connection, both observed or neither; per message.
func BenchmarkDeliver(b *testing.B) {
	for _, c := range benchCases(b) {
		b.Run(c.name, func(b *testing.B) {
			s := natstest.NewProcess(b, false)
			pub := connect(b, s.URL(), c.opts...)
			sc := connect(b, s.URL(), append([]conn.Option{conn.PendingLimits(1<<22, 1<<30)}, c.opts...)...)
			data := make([]byte, 16)
			done := make(chan struct{})
			var got, want int
			sub, err := sc.SubscribeFunc("bench.otel", func(*conn.Msg) {
				if got++; got == want {
					close(done)
				}
			})
			if err != nil {
				b.Fatal(err)
			}
			if err := sc.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			want = b.N
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuTime()
			for range b.N {
				if err := pub.Publish("bench.otel", data); err != nil {
					b.Fatal(err)
				}
			}
			<-done
			reportCPU(b, cpu)
			if d := sub.Dropped(); d > 0 {
				b.Fatalf("%d dropped", d)
			}
		})
	}
}
