package pull_test

import (
	"context"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pull"
)

// benchEnv runs the server in a child process and stores n 128-byte
// messages in a memory stream.
func benchEnv(b *testing.B, n int) *env {
	p := natstest.NewProcess(b, true)
	e := envOn(b, nil, p.URL(), jsapi.StorageMemory)
	data := make([]byte, 128)
	for i := range n {
		if err := e.nc.Publish("s.x", data); err != nil {
			b.Fatal(err)
		}
		if i%10000 == 0 {
			e.nc.Flush(e.ctx)
		}
	}
	if err := e.nc.Flush(e.ctx); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := e.js.Stream(e.ctx, "S")
		if err == nil && st.CachedInfo().State.Msgs == uint64(n) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("stream never held %d messages", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return e
}

func BenchmarkFetch500Ack(b *testing.B) {
	e := benchEnv(b, b.N)
	c := e.consumer(b, jsapi.ConsumerConfig{MaxAckPending: -1})
	b.ReportAllocs()
	b.SetBytes(128)
	b.ResetTimer()
	for got := 0; got < b.N; {
		ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
		msgs, err := c.Fetch(ctx, min(500, b.N-got))
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range msgs {
			m.Ack()
		}
		got += len(msgs)
	}
	e.nc.Flush(e.ctx)
}

func BenchmarkMessagesAck(b *testing.B) {
	e := benchEnv(b, b.N)
	c := e.consumer(b, jsapi.ConsumerConfig{MaxAckPending: -1})
	b.ReportAllocs()
	b.SetBytes(128)
	b.ResetTimer()
	got := 0
	for m, err := range c.Messages(e.ctx) {
		if err != nil {
			b.Fatal(err)
		}
		m.Ack()
		if got++; got == b.N {
			break
		}
	}
	e.nc.Flush(e.ctx)
}

var _ = conn.ErrClosed
var _ = pull.ErrNoMessages

// BenchmarkFetch1 is a loop of one-message Fetches (the shape of a worker
// calling Next): the per-call cost of a pull, its subscription and its
// reply subject, not the per-message cost of a large batch.
func BenchmarkFetch1(b *testing.B) {
	e := benchEnv(b, b.N)
	c := e.consumer(b, jsapi.ConsumerConfig{AckPolicy: jsapi.AckNone})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
		msgs, err := c.Fetch(ctx, 1)
		cancel()
		if err != nil || len(msgs) != 1 {
			b.Fatalf("fetch: %d %v", len(msgs), err)
		}
	}
}
