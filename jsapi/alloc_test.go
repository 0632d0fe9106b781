//go:build !race

package jsapi_test

import (
	"context"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testserver"
	"github.com/natsio/natsio/jsapi"
)

// A synchronous publish into a reused PubAck allocates nothing on the
// client, with or without a deadline on its context. The server runs in a
// child process.
func TestPublishToAllocs(t *testing.T) {
	p := testserver.StartProcess(t, true)
	ctx := context.Background()
	nc, err := conn.Connect(ctx, p.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jsapi.New(nc)
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "A", Subjects: []string{"a.>"}, Storage: jsapi.StorageMemory}); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 128)
	var ack jsapi.PubAck
	for range 100 {
		if err := js.PublishTo(ctx, &ack, "a.x", data); err != nil {
			t.Fatal(err)
		}
	}
	n := testing.AllocsPerRun(1000, func() {
		if err := js.PublishTo(ctx, &ack, "a.x", data); err != nil {
			t.Fatal(err)
		}
	})
	if n > 1 {
		t.Fatalf("PublishTo: %v allocs, want ≤ 1", n)
	}
	t.Logf("PublishTo: %v allocs", n)
}
