package conn_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/natsio/natsio/conn"
)

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
