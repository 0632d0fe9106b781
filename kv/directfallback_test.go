package kv_test

import (
	"errors"
	"testing"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
)

// A bucket handle made while the bucket's stream allowed Direct Get, used
// after the stream turned it off: Get falls back to the stream leader and
// returns the value. After the bucket is deleted, Get fails with
// ErrBucketNotFound.
func TestGetFallsBackWhenDirectGetIsGone(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "fb"})
	mustPut(t, b, "k", "v")
	st, err := e.JS.Stream(e.Ctx, "KV_fb")
	if err != nil {
		t.Fatal(err)
	}
	cfg := st.CachedInfo().Config
	cfg.AllowDirect = false
	if _, err := e.JS.UpdateStream(e.Ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if ent, err := b.Get(e.Ctx, "k"); err != nil || string(ent.Value) != "v" {
		t.Fatalf("Get after allow_direct was turned off: %+v, %v; want v", ent, err)
	}
	if ent, err := b.GetRevision(e.Ctx, "k", 1); err != nil || string(ent.Value) != "v" {
		t.Fatalf("GetRevision after allow_direct was turned off: %+v, %v; want v", ent, err)
	}
	if err := e.JS.DeleteStream(e.Ctx, "KV_fb"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(e.Ctx, "k"); !errors.Is(err, kv.ErrBucketNotFound) || errors.Is(err, jsapi.ErrNotEnabled) {
		t.Fatalf("Get of a deleted bucket: %v; want ErrBucketNotFound", err)
	}
}
