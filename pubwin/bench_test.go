package pubwin_test

import (
	"testing"

	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pubwin"
)

// The server runs in a child process: allocations and CPU are the client's.

func BenchmarkSyncPublish128(b *testing.B) {
	s := natstest.NewProcess(b, true)
	js, _, ctx := setup(b, s.URL(), "")
	data := make([]byte, 128)
	b.ReportAllocs()
	b.SetBytes(128)
	for b.Loop() {
		if _, err := js.Publish(ctx, "w.a", data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWindowPublish128(b *testing.B) {
	s := natstest.NewProcess(b, true)
	js, _, ctx := setup(b, s.URL(), "")
	w, err := pubwin.New(js)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	data := make([]byte, 128)
	b.ReportAllocs()
	b.SetBytes(128)
	for b.Loop() {
		if _, err := w.Publish(ctx, "w.a", data); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Complete(ctx); err != nil {
		b.Fatal(err)
	}
}
