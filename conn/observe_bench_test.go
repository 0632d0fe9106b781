package conn_test

import (
	"context"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
)

// nopObserver does nothing: what the hooks cost by themselves.
type nopObserver struct{}

func (nopObserver) Publish(context.Context, *conn.Pub) func(*conn.Msg, error) { return nil }
func (nopObserver) Receive(*conn.Msg)                                         {}
func (nopObserver) Process(*conn.Msg) func()                                  { return nil }

// observerCases are the connection options of the observer benchmarks:
// none (the hooks' cost when unused) and a no-op Observer.
var observerCases = []struct {
	name string
	opts []conn.Option
}{{"none", nil}, {"nop", []conn.Option{conn.Observe(nopObserver{})}}}

// BenchmarkObserverPublish: Publish of 16 bytes without an Observer and
// with one that does nothing.
func BenchmarkObserverPublish(b *testing.B) {
	for _, c := range observerCases {
		b.Run(c.name, func(b *testing.B) {
			s := benchServer(b)
			nc := connect(b, s.URL(), c.opts...)
			data := make([]byte, 16)
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if err := nc.Publish("bench.obs", data); err != nil {
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

// BenchmarkObserverDeliver: publish to a SubscribeFunc handler on another
// connection, both with or without a no-op Observer; per delivered
// message.
func BenchmarkObserverDeliver(b *testing.B) {
	for _, c := range observerCases {
		b.Run(c.name, func(b *testing.B) {
			s := benchServer(b)
			pub := connect(b, s.URL(), c.opts...)
			sc := connect(b, s.URL(), append([]conn.Option{conn.PendingLimits(1<<22, 1<<30)}, c.opts...)...)
			data := make([]byte, 16)
			done := make(chan struct{})
			var got, want int
			sub, err := sc.SubscribeFunc("bench.obs", func(*conn.Msg) {
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
				if err := pub.Publish("bench.obs", data); err != nil {
					b.Fatal(err)
				}
			}
			select {
			case <-done:
			case <-time.After(time.Minute):
				b.Fatalf("received %d of %d", got, want)
			}
			reportCPU(b, cpu)
			if d := sub.Dropped(); d > 0 {
				b.Fatalf("%d dropped", d)
			}
		})
	}
}
