package kv_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"testing"

	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/proto"
)

// storeRaw publishes value with a KV-Operation header straight to the
// bucket's subject with the core connection (as a foreign or broken
// writer would) and returns the stored revision.
func storeRaw(t *testing.T, e *env, subject, op, value string) uint64 {
	t.Helper()
	h := &proto.Header{}
	h.Add("KV-Operation", op)
	m, err := e.nc.RequestMsg(e.ctx, subject, h, []byte(value))
	if err != nil {
		t.Fatal(err)
	}
	var ack struct {
		Seq   uint64          `json:"seq"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &ack); err != nil || ack.Seq == 0 || ack.Error != nil {
		t.Fatalf("raw publish: %s %v", m.Data, err)
	}
	return ack.Seq
}

// RELIABILITY.md c.1 ("KV entries: an unknown KV-Operation header is an
// error"): an entry whose KV-Operation is neither DEL nor PURGE (nor PUT)
// is not taken for a value. Get and GetRevision fail with
// kv.ErrUnknownOperation and return no entry, a running watch ends with
// it, and a new watch (and Keys, History) fails with it while the entry
// is the key's latest. "KV-Operation: PUT" is a value.
func TestUnknownKVOperationIsAnError(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "op", History: 5})
	mustPut(t, b, "k", "v1")
	w := startWatch(t, func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return b.WatchAll(ctx) })
	if got := w.entry(); got.Key != "k" || string(got.Value) != "v1" {
		t.Fatalf("initial value %+v", got)
	}
	w.marker()

	rev := storeRaw(t, e, "$KV.op.k", "BOGUS", "not a value")

	// The running watch ends with the typed error.
	got, err, ok := w.next()
	if !ok || got != nil || !errors.Is(err, kv.ErrUnknownOperation) {
		t.Fatalf("watch: %+v %v (open %v); want ErrUnknownOperation", got, err, ok)
	}
	if got, err, ok := w.next(); ok {
		t.Fatalf("watch went on after the error: %+v %v", got, err)
	}

	if got, err := b.Get(e.ctx, "k"); got != nil || !errors.Is(err, kv.ErrUnknownOperation) {
		t.Fatalf("Get: %+v %v; want ErrUnknownOperation", got, err)
	}
	if got, err := b.GetRevision(e.ctx, "k", rev); got != nil || !errors.Is(err, kv.ErrUnknownOperation) {
		t.Fatalf("GetRevision: %+v %v; want ErrUnknownOperation", got, err)
	}
	// Earlier revisions are still fine.
	if got, err := b.GetRevision(e.ctx, "k", 1); err != nil || string(got.Value) != "v1" {
		t.Fatalf("GetRevision(1): %+v %v", got, err)
	}
	w2 := startWatch(t, func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return b.Watch(ctx, "k") })
	if got, err, _ := w2.next(); got != nil || !errors.Is(err, kv.ErrUnknownOperation) {
		t.Fatalf("new watch: %+v %v; want ErrUnknownOperation", got, err)
	}
	if keys, err := b.Keys(e.ctx); !errors.Is(err, kv.ErrUnknownOperation) {
		t.Fatalf("Keys: %v %v; want ErrUnknownOperation", keys, err)
	}
	if h, err := b.History(e.ctx, "k"); !errors.Is(err, kv.ErrUnknownOperation) {
		t.Fatalf("History: %d entries, %v; want ErrUnknownOperation", len(h), err)
	}

	// An explicit PUT is a value.
	storeRaw(t, e, "$KV.op.p", "PUT", "explicit")
	if got, err := b.Get(e.ctx, "p"); err != nil || string(got.Value) != "explicit" || got.Operation != kv.OpPut {
		t.Fatalf("Get of an explicit PUT: %+v %v", got, err)
	}
	// A new value for the key replaces the bad entry as the latest.
	mustPut(t, b, "k", "v3")
	if got, err := b.Get(e.ctx, "k"); err != nil || string(got.Value) != "v3" {
		t.Fatalf("Get after a new Put: %+v %v", got, err)
	}
}
