package ordered_test

import (
	"context"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/ordered"
)

// BenchmarkOrderedReadThrough reads b.N stored 128-byte messages in order;
// the server runs in a child process.
func BenchmarkOrderedReadThrough(b *testing.B) { benchReadThrough(b) }

// BenchmarkOrderedReadThroughBorrowed is the same with lent messages
// (ordered.Borrowed).
func BenchmarkOrderedReadThroughBorrowed(b *testing.B) {
	benchReadThrough(b, ordered.Borrowed())
}

func benchReadThrough(b *testing.B, opts ...ordered.Opt) {
	p := natstest.NewProcess(b, true)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	nc, err := conn.Connect(ctx, p.URL())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	js, _ := jsapi.New(nc)
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "O", Subjects: []string{"o.>"}, Storage: jsapi.StorageMemory}); err != nil {
		b.Fatal(err)
	}
	// Fill in chunks, each stored before the next is sent: the server
	// drops core publishes its stream's ingest queue cannot take.
	data := make([]byte, 128)
	for sent := 0; sent < b.N; {
		k := min(10000, b.N-sent)
		for range k {
			if err := nc.Publish("o.x", data); err != nil {
				b.Fatal(err)
			}
		}
		sent += k
		if err := nc.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			st, err := js.Stream(ctx, "O")
			if err == nil && st.CachedInfo().State.Msgs == uint64(sent) {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("stream never held the %d messages sent", sent)
			}
			time.Sleep(time.Millisecond)
		}
	}
	oc, err := ordered.New(ctx, js, "O", ordered.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(128)
	b.ResetTimer()
	n := 0
	for m, err := range oc.Messages(ctx, append(opts, ordered.UntilDrained())...) {
		if err != nil {
			b.Fatal(err)
		}
		if len(m.Data) != len(data) {
			b.Fatalf("message of %d bytes", len(m.Data))
		}
		n++
	}
	if n != b.N {
		b.Fatalf("read %d of %d", n, b.N)
	}
}
