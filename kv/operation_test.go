package kv_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"slices"
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
	m, err := e.Conn.RequestMsg(e.Ctx, subject, h, []byte(value))
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
// error"), for readers of one key: Get and GetRevision of an entry whose
// KV-Operation is neither DEL nor PURGE (nor PUT) fail with
// kv.ErrUnknownOperation and return no entry. Readers of many keys must
// not be broken by it, since any client that may publish to the bucket can
// store one: a running watch goes on past it, and new watches, ListKeys,
// Keys, History and PurgeDeletes skip it; SkippedEntries counts it each
// time. "KV-Operation: PUT" is a value.
func TestUnknownKVOperationIsSkipped(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "op", History: 5})
	mustPut(t, b, "k", "v1")
	mustPut(t, b, "other", "o1")
	w := startWatch(t, func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return b.WatchAll(ctx) })
	if got := w.Entry(); got.Key != "k" || string(got.Value) != "v1" {
		t.Fatalf("initial value %+v", got)
	}
	if got := w.Entry(); got.Key != "other" {
		t.Fatalf("initial value %+v", got)
	}
	w.Marker()

	rev := storeRaw(t, e, "$KV.op.k", "NOPE", "not a value")
	storeRaw(t, e, "$KV.op.bad", "NOPE", "not a value either")
	st, _ := b.Status(e.Ctx)
	t.Logf("stream after the poisoned entries: %d messages, %d skipped so far", st.Values, b.SkippedEntries())

	// The running watch skips both and yields what follows.
	after := mustPut(t, b, "k2", "after")
	if got, err, ok := w.Next(); !ok || err != nil || got == nil || got.Key != "k2" || got.Revision != after {
		t.Fatalf("watch after the poisoned entries: %+v %v (open %v); want k2", got, err, ok)
	}
	if n := b.SkippedEntries(); n != 2 {
		t.Fatalf("SkippedEntries %d, want 2", n)
	}

	// Readers of the key itself get the typed error.
	if got, err := b.Get(e.Ctx, "k"); got != nil || !errors.Is(err, kv.ErrUnknownOperation) {
		t.Fatalf("Get: %+v %v; want ErrUnknownOperation", got, err)
	}
	if got, err := b.GetRevision(e.Ctx, "k", rev); got != nil || !errors.Is(err, kv.ErrUnknownOperation) {
		t.Fatalf("GetRevision: %+v %v; want ErrUnknownOperation", got, err)
	}
	// Earlier revisions are still fine.
	if got, err := b.GetRevision(e.Ctx, "k", 1); err != nil || string(got.Value) != "v1" {
		t.Fatalf("GetRevision(1): %+v %v", got, err)
	}

	// A new watch of the key: the poisoned latest entry is skipped, the
	// watch reaches its marker and goes on.
	w2 := startWatch(t, func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return b.Watch(ctx, "k") })
	w2.Marker()
	// A new watch with history: the older value, the marker.
	w3 := startWatch(t, func(ctx context.Context) iter.Seq2[*kv.Entry, error] {
		return b.Watch(ctx, "k", kv.IncludeHistory())
	})
	if got := w3.Entry(); string(got.Value) != "v1" {
		t.Fatalf("history watch: %+v", got)
	}
	w3.Marker()
	v3 := mustPut(t, b, "k", "v3")
	for i, x := range []*watch{w, w2, w3} {
		if got, err, ok := x.Next(); !ok || err != nil || got == nil || got.Revision != v3 {
			t.Fatalf("watch %d after a new Put: %+v %v (open %v)", i, got, err, ok)
		}
	}
	storeRaw(t, e, "$KV.op.k", "NOPE", "and again")

	// Keys, ListKeys: the poisoned key "bad" and "k" (latest poisoned)
	// are not values.
	keys, err := b.Keys(e.Ctx)
	if err != nil || !slices.Equal(keys, []string{"k2", "other"}) {
		t.Fatalf("Keys: %q %v; want [k2 other]", keys, err)
	}
	var listed []string
	for k, err := range b.ListKeys(e.Ctx) {
		if err != nil {
			t.Fatalf("ListKeys: %v", err)
		}
		listed = append(listed, k)
	}
	if slices.Sort(listed); !slices.Equal(listed, []string{"k2", "other"}) {
		t.Fatalf("ListKeys: %q", listed)
	}
	// History: the values and nothing else.
	h, err := b.History(e.Ctx, "k")
	if err != nil || len(h) != 2 || string(h[0].Value) != "v1" || string(h[1].Value) != "v3" {
		t.Fatalf("History: %d entries, %v; want v1, v3", len(h), err)
	}
	if h, err := b.History(e.Ctx, "bad"); !errors.Is(err, kv.ErrKeyNotFound) {
		t.Fatalf("History of a key with only a poisoned entry: %d entries, %v; want ErrKeyNotFound", len(h), err)
	}
	if err := b.PurgeDeletes(e.Ctx); err != nil {
		t.Fatalf("PurgeDeletes: %v", err)
	}
	st, _ = b.Status(e.Ctx)
	t.Logf("stream at the end: %d messages, keys %q, %d skipped", st.Values, keys, b.SkippedEntries())

	// An explicit PUT is a value.
	storeRaw(t, e, "$KV.op.p", "PUT", "explicit")
	if got, err := b.Get(e.Ctx, "p"); err != nil || string(got.Value) != "explicit" || got.Operation != kv.OpPut {
		t.Fatalf("Get of an explicit PUT: %+v %v", got, err)
	}
	// A new value for the key replaces the bad entry as the latest.
	mustPut(t, b, "k", "v4")
	if got, err := b.Get(e.Ctx, "k"); err != nil || string(got.Value) != "v4" {
		t.Fatalf("Get after a new Put: %+v %v", got, err)
	}
}

// A client that may publish to the bucket stores an entry under its own key
// with fields named as those the server adds to a Direct Get reply
// (Nats-Subject naming another key, Nats-Sequence, Nats-Time-Stamp). Reads
// take the server's fields, which follow the stored ones: the entry has its
// real revision, and GetRevision of another key never returns it.
func TestDirectGetStoredServerFieldsKV(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "sp", History: 5})
	mustPut(t, b, "victim", "v")
	h := &proto.Header{}
	h.Add("Nats-Subject", "$KV.sp.victim")
	h.Add("Nats-Sequence", "999")
	h.Add("Nats-Time-Stamp", "2001-01-01T00:00:00Z")
	m, err := e.Conn.RequestMsg(e.Ctx, "$KV.sp.evil", h, []byte("evil"))
	if err != nil {
		t.Fatal(err)
	}
	var ack struct {
		Seq uint64 `json:"seq"`
	}
	if err := json.Unmarshal(m.Data, &ack); err != nil || ack.Seq == 0 {
		t.Fatalf("publish: %s %v", m.Data, err)
	}
	got, err := b.Get(e.Ctx, "evil")
	if err != nil || got.Revision != ack.Seq || got.Created.Year() == 2001 {
		t.Fatalf("Get(evil): %+v %v; want revision %d", got, err, ack.Seq)
	}
	if got, err := b.GetRevision(e.Ctx, "victim", ack.Seq); !errors.Is(err, kv.ErrKeyNotFound) {
		t.Fatalf("GetRevision(victim, %d): %+v %v; want ErrKeyNotFound", ack.Seq, got, err)
	}
	if got, err := b.Get(e.Ctx, "victim"); err != nil || string(got.Value) != "v" || got.Revision != 1 {
		t.Fatalf("Get(victim): %+v %v", got, err)
	}
}
