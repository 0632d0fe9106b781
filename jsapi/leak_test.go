package jsapi_test

import (
	"testing"
	"time"

	"github.com/natsio/natsio/internal/leakcheck"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

// Stream and consumer management, publishes, paged listings and a message
// get leave no goroutine of natsio running once the connection is closed.
func TestNoGoroutineLeak(t *testing.T) {
	s := natstest.NewServer(t)
	before := leakcheck.Snapshot()
	ctx := ctxT(t)
	nc := connect(t, s.URL())
	js := newJS(t, nc)
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "LK", Subjects: []string{"lk.>"}, Storage: jsapi.StorageMemory}); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := js.Publish(ctx, "lk.a", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := js.CreateConsumer(ctx, "LK", jsapi.ConsumerConfig{Durable: "C", AckPolicy: jsapi.AckExplicit}); err != nil {
		t.Fatal(err)
	}
	for _, err := range js.ConsumerNames(ctx, "LK") {
		if err != nil {
			t.Fatal(err)
		}
	}
	for range js.StreamNames(ctx, "") {
		break // abandoned listing
	}
	st, err := js.Stream(ctx, "LK")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Info(ctx); err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteStream(ctx, "LK"); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	leakcheck.Wait(t, before, 10*time.Second)
}
