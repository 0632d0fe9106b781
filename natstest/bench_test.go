package natstest_test

import (
	"context"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
)

// benchRequest measures one request/reply round trip between two
// connections made by connect: a responder and a requester.
func benchRequest(b *testing.B, s *natstest.Server, connect func(testing.TB, ...conn.Option) *conn.Conn) {
	responder := connect(b)
	if _, err := responder.SubscribeFunc("bench.echo", func(m *conn.Msg) { _ = m.Respond(m.Data) }); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := responder.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	requester := connect(b)
	payload := make([]byte, 128)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := requester.Request(ctx, "bench.echo", payload); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRequestInProcess: both connections use the in-process pipe of a
// server that has no listener.
func BenchmarkRequestInProcess(b *testing.B) {
	s := natstest.NewServer(b, natstest.JetStream(false), natstest.NoListener())
	benchRequest(b, s, s.ConnectInProcess)
}

// BenchmarkRequestLoopback: both connections use loopback TCP sockets.
func BenchmarkRequestLoopback(b *testing.B) {
	s := natstest.NewServer(b, natstest.JetStream(false))
	benchRequest(b, s, s.Connect)
}
