//go:build !race

package jsapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

// A synchronous publish into a reused PubAck allocates nothing on the
// client, with or without a deadline on its context. The server runs in a
// child process.
func TestPublishAllocs(t *testing.T) {
	ctx, js := processJS(t)
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "A", Subjects: []string{"a.>"}, Storage: jsapi.StorageMemory}); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 128)
	for range 100 {
		if _, err := js.Publish(ctx, "a.x", data); err != nil {
			t.Fatal(err)
		}
	}
	n := testing.AllocsPerRun(1000, func() {
		if _, err := js.Publish(ctx, "a.x", data); err != nil {
			t.Fatal(err)
		}
	})
	if n > 1 {
		t.Fatalf("Publish: %v allocs, want ≤ 1", n)
	}
	t.Logf("Publish: %v allocs", n)
}

// A Direct Get by sequence allocates the StoredMsg and nothing else: its
// subject and data are views of the reply, which belongs to the call.
func TestDirectGetAllocs(t *testing.T) {
	ctx, js := processJS(t)
	st, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "D", Subjects: []string{"d.>"}, Storage: jsapi.StorageMemory, AllowDirect: true})
	if err != nil {
		t.Fatal(err)
	}
	ack, err := js.Publish(ctx, "d.x", make([]byte, 128))
	if err != nil {
		t.Fatal(err)
	}
	get := func() {
		sm, err := st.GetMsg(ctx, ack.Sequence)
		if err != nil {
			t.Fatal(err)
		}
		if sm.Subject != "d.x" || len(sm.Data) != 128 || !sm.Header.IsZero() {
			t.Fatalf("got %q, %d bytes, header %q", sm.Subject, len(sm.Data), sm.Header)
		}
	}
	for range 100 {
		get()
	}
	if n := testing.AllocsPerRun(1000, get); n > 1 {
		t.Fatalf("GetMsg (direct): %v allocs, want ≤ 1", n)
	} else {
		t.Logf("GetMsg (direct): %v allocs", n)
	}
}

// processJS connects to a JetStream server in a child process, so that
// the allocations counted are the client's alone.
func processJS(t *testing.T) (context.Context, *jsapi.JS) {
	t.Helper()
	p := natstest.NewProcess(t, true)
	return context.Background(), newJS(t, connect(t, p.URL()))
}

// The server-version check of a version-gated publish option (a TTL)
// costs no allocation: a TTL publish allocates what a publish with a
// message ID does.
func TestPublishGatedOptionAllocs(t *testing.T) {
	ctx, js := processJS(t)
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "G", Subjects: []string{"g.>"}, Storage: jsapi.StorageMemory, AllowMsgTTL: true}); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 128)
	measure := func(opt jsapi.PubOpt) float64 {
		for range 100 {
			if _, err := js.Publish(ctx, "g.x", data, opt); err != nil {
				t.Fatal(err)
			}
		}
		return testing.AllocsPerRun(1000, func() {
			if _, err := js.Publish(ctx, "g.x", data, opt); err != nil {
				t.Fatal(err)
			}
		})
	}
	plain := measure(jsapi.MsgID(""))
	ttl := measure(jsapi.TTL(90 * time.Second)) // "90": strconv has it without allocating
	if ttl > plain {
		t.Fatalf("Publish with TTL: %v allocs, with an empty MsgID: %v", ttl, plain)
	}
	t.Logf("Publish with TTL: %v allocs; with an empty MsgID: %v", ttl, plain)
}
