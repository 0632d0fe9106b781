package ordered_test

import (
	"context"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testserver"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
)

// BenchmarkOrderedReadThrough reads b.N stored 128-byte messages in order;
// the server runs in a child process.
func BenchmarkOrderedReadThrough(b *testing.B) {
	p := testserver.StartProcess(b, true)
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
	data := make([]byte, 128)
	for i := range b.N {
		nc.Publish("o.x", data)
		if i%10000 == 0 {
			nc.Flush(ctx)
		}
	}
	nc.Flush(ctx)
	for {
		st, err := js.Stream(ctx, "O")
		if err == nil && st.CachedInfo().State.Msgs == uint64(b.N) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	oc := ordered.New(js, "O", ordered.Options{})
	b.ReportAllocs()
	b.SetBytes(128)
	b.ResetTimer()
	n := 0
	for _, err := range oc.Messages(ctx, ordered.UntilDrained()) {
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	if n != b.N {
		b.Fatalf("read %d of %d", n, b.N)
	}
}
