package kv_test

import (
	"context"
	"errors"
	"iter"
	"slices"
	"testing"

	"github.com/natsio/natsio/kv"
)

// TestCodecBucket stores keys NATS subjects cannot carry through a chained
// path and base64 key codec with base64 values, and reads them back through
// Get, Keys, ListKeys, History and a wildcard watch, while the bucket
// underneath holds only the encoded forms.
func TestCodecBucket(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "CODEC", History: 5})
	keys, err := kv.ChainKeyCodecs(kv.PathCodec(), kv.Base64Codec())
	if err != nil {
		t.Fatal(err)
	}
	cb := kv.WithCodecs(b, keys, kv.Base64Codec())
	ctx := e.Ctx

	w := startWatch(t, func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return cb.Watch(ctx, "/home/>") })
	w.Marker()

	if _, err := cb.PutString(ctx, "/home/my docs/a b_txt", "first"); err != nil {
		t.Fatal(err)
	}
	if _, err := cb.Put(ctx, "/home/ünïcode", []byte("second")); err != nil {
		t.Fatal(err)
	}
	if _, err := cb.Put(ctx, "/etc/hosts", []byte("third")); err != nil {
		t.Fatal(err)
	}
	if _, err := cb.PutString(ctx, "/home/my docs/a b_txt", "changed"); err != nil {
		t.Fatal(err)
	}

	// The watch sees the /home keys decoded, not /etc.
	for _, want := range [][2]string{{"/home/my docs/a b_txt", "first"}, {"/home/ünïcode", "second"}, {"/home/my docs/a b_txt", "changed"}} {
		got := w.Entry()
		if got.Key != want[0] || string(got.Value) != want[1] {
			t.Fatalf("watch: %q=%q, want %q=%q", got.Key, got.Value, want[0], want[1])
		}
	}

	g, err := cb.Get(ctx, "/home/my docs/a b_txt")
	if err != nil || g.Key != "/home/my docs/a b_txt" || string(g.Value) != "changed" {
		t.Fatalf("Get: %+v %v", g, err)
	}
	all, err := cb.Keys(ctx)
	want := []string{"/etc/hosts", "/home/my docs/a b_txt", "/home/ünïcode"}
	if err != nil || !slices.Equal(all, want) {
		t.Fatalf("Keys: %v %v, want %v", all, err, want)
	}
	home, err := cb.Keys(ctx, "/home/*")
	if err != nil || len(home) != 1 || home[0] != "/home/ünïcode" {
		t.Fatalf("Keys(/home/*): %v %v", home, err)
	}
	h, err := cb.History(ctx, "/home/my docs/a b_txt")
	if err != nil || len(h) != 2 || string(h[0].Value) != "first" || h[1].Key != "/home/my docs/a b_txt" {
		t.Fatalf("History: %v %v", h, err)
	}

	// Underneath: only encoded keys and values.
	stored, err := b.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range stored {
		d, err := keys.DecodeKey(k)
		if err != nil || !slices.Contains(want, d) {
			t.Errorf("stored key %q decodes to %q, %v", k, d, err)
		}
	}
	raw, err := b.Get(ctx, "X3Jvb3Rf.ZXRj.aG9zdHM")
	if err != nil || string(raw.Value) != "dGhpcmQ" {
		t.Fatalf("stored /etc/hosts: %+v %v", raw, err)
	}

	// Create, Update, Delete and Purge encode the key too.
	rev, err := cb.Create(ctx, "/tmp/x y", []byte("1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cb.Create(ctx, "/tmp/x y", []byte("1")); !errors.Is(err, kv.ErrKeyExists) {
		t.Fatalf("Create twice: %v", err)
	}
	if _, err := cb.Update(ctx, "/tmp/x y", []byte("2"), rev); err != nil {
		t.Fatal(err)
	}
	if err := cb.Delete(ctx, "/tmp/x y"); err != nil {
		t.Fatal(err)
	}
	if _, err := cb.Get(ctx, "/tmp/x y"); !errors.Is(err, kv.ErrKeyDeleted) {
		t.Fatalf("Get after Delete: %v", err)
	}
	if err := cb.Purge(ctx, "/home/ünïcode"); err != nil {
		t.Fatal(err)
	}
	d := w.Entry()
	if d.Key != "/home/ünïcode" || d.Operation != kv.OpPurge || len(d.Value) != 0 {
		t.Fatalf("watch of the purge: %+v", d)
	}
}

// TestCodecBucketForeignEntries: entries written without the codecs are
// given as stored and counted, Get refuses them, and a wildcard filter
// through a codec that cannot encode filters fails before any I/O.
func TestCodecBucketForeignEntries(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "FOREIGN"})
	cb := kv.WithCodecs(b, kv.Base64Codec(), kv.Base64Codec())
	ctx := e.Ctx
	mustPut(t, b, "plain=key", "raw value") // '=' is no unpadded base64
	if _, err := cb.Put(ctx, "ok key", []byte("v")); err != nil {
		t.Fatal(err)
	}
	keys, err := cb.Keys(ctx)
	if err != nil || !slices.Equal(keys, []string{"ok key", "plain=key"}) {
		t.Fatalf("Keys: %v %v", keys, err)
	}
	if n := cb.UndecodedEntries(); n != 1 {
		t.Errorf("UndecodedEntries after Keys: %d", n)
	}
	w := startWatch(t, func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return cb.WatchAll(ctx) })
	first, second := w.Entry(), w.Entry()
	w.Marker()
	if first.Key != "plain=key" || string(first.Value) != "raw value" || second.Key != "ok key" || string(second.Value) != "v" {
		t.Fatalf("watch: %+v %+v", first, second)
	}
	if n := cb.UndecodedEntries(); n != 2 {
		t.Errorf("UndecodedEntries after the watch: %d", n)
	}
	// Get of a key whose stored value is not base64.
	if _, err := b.Put(ctx, "YmFk", []byte("not base64!")); err != nil {
		t.Fatal(err)
	}
	if _, err := cb.Get(ctx, "bad"); !errors.Is(err, kv.ErrValueDecodeFailed) {
		t.Errorf("Get of an undecodable value: %v", err)
	}

	plain := kv.WithCodecs(b, keyOnly{}, nil)
	for _, err := range plain.Watch(ctx, "a.*") {
		if !errors.Is(err, kv.ErrWildcardNotSupported) {
			t.Errorf("wildcard watch without a filter codec: %v", err)
		}
		break
	}
	if _, err := plain.Keys(ctx, "a.>"); !errors.Is(err, kv.ErrWildcardNotSupported) {
		t.Errorf("wildcard keys without a filter codec: %v", err)
	}
	// Without wildcards the key codec encodes the filter as a key.
	if _, err := plain.Put(ctx, "abc.def", []byte("x")); err != nil {
		t.Fatal(err)
	}
	got, err := plain.Keys(ctx, "abc.def")
	if err != nil || !slices.Equal(got, []string{"abc.def"}) {
		t.Errorf("plain filter: %v %v", got, err)
	}
	if _, err := b.Get(ctx, "fed.cba"); err != nil {
		t.Errorf("keyOnly did not store the reversed key: %v", err)
	}
}
