package conn_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
)

// benchServer runs the server in a child process so that allocation and
// CPU figures count the client alone.
func benchServer(b *testing.B) *natstest.Process {
	return natstest.NewProcess(b, false)
}

func benchPublish(b *testing.B, size int) {
	s := benchServer(b)
	nc := connect(b, s.URL())
	data := make([]byte, size)
	b.ReportAllocs()
	b.SetBytes(int64(size))
	for b.Loop() {
		if err := nc.Publish("bench.pub", data); err != nil {
			b.Fatal(err)
		}
	}
	if err := nc.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkPublish16(b *testing.B)   { benchPublish(b, 16) }
func BenchmarkPublish1024(b *testing.B) { benchPublish(b, 1024) }

// BenchmarkPubSub measures publish to delivery across two connections; the
// allocation figure is per delivered message, amortised.
func benchPubSub(b *testing.B, size int, iterator bool) {
	s := benchServer(b)
	pub := connect(b, s.URL())
	sc := connect(b, s.URL(), conn.PendingLimits(1<<22, 1<<30))
	data := make([]byte, size)
	done := make(chan struct{})
	var want, got int
	var sub *conn.Subscription
	var err error
	if iterator {
		sub, err = sc.Subscribe("bench.ps")
	} else {
		sub, err = sc.SubscribeFunc("bench.ps", func(*conn.Msg) {
			got++
			if got == want {
				close(done)
			}
		})
	}
	if err != nil {
		b.Fatal(err)
	}
	if err := sc.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	want = b.N
	if iterator {
		go func() {
			defer close(done)
			for _, err := range sub.Messages(context.Background()) {
				if err != nil {
					return
				}
				got++
				if got == want {
					return
				}
			}
		}()
	}
	b.ReportAllocs()
	b.SetBytes(int64(size))
	b.ResetTimer()
	for range b.N {
		if err := pub.Publish("bench.ps", data); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		b.Fatalf("received %d of %d", got, want)
	}
	if d := sub.Dropped(); d > 0 {
		b.Fatalf("%d dropped", d)
	}
}

func BenchmarkPubSubCallback16(b *testing.B)   { benchPubSub(b, 16, false) }
func BenchmarkPubSubCallback1024(b *testing.B) { benchPubSub(b, 1024, false) }
func BenchmarkPubSubIterator16(b *testing.B)   { benchPubSub(b, 16, true) }

func BenchmarkRequest16(b *testing.B) {
	s := benchServer(b)
	rc := connect(b, s.URL())
	nc := connect(b, s.URL())
	if _, err := rc.SubscribeFunc("bench.req", func(m *conn.Msg) { m.Respond(m.Data) }); err != nil {
		b.Fatal(err)
	}
	rc.Flush(context.Background())
	data := make([]byte, 16)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := nc.Request(ctx, "bench.req", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClose100k measures Close of a connection holding 100,000
// SubscribeFunc subscriptions (bench/cmd/lifecycle's close.100k).
func BenchmarkClose100k(b *testing.B) {
	s := benchServer(b)
	for b.Loop() {
		b.StopTimer()
		nc := connect(b, s.URL())
		for i := range 100_000 {
			if _, err := nc.SubscribeFunc("bench.close."+strconv.Itoa(i), func(*conn.Msg) {}); err != nil {
				b.Fatal(err)
			}
		}
		if err := nc.Flush(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		nc.Close()
	}
}
