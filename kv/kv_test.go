package kv_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
)

func TestValidation(t *testing.T) {
	for _, n := range []string{"a", "A-b_9", "config"} {
		if err := kv.ValidateBucketName(n); err != nil {
			t.Errorf("bucket %q: %v", n, err)
		}
	}
	for _, n := range []string{"", "a.b", "a b", "a*", "a>", "ä", "a/b"} {
		if err := kv.ValidateBucketName(n); !errors.Is(err, kv.ErrInvalidBucketName) {
			t.Errorf("bucket %q: got %v", n, err)
		}
	}
	for _, k := range []string{"a", "a.b", "a/b=c_d-e", "A.9", "_x", "=", "a.b.c"} {
		if err := kv.ValidateKey(k); err != nil {
			t.Errorf("key %q: %v", k, err)
		}
	}
	for _, k := range []string{"", ".a", "a.", "a..b", "a b", "a*", "*", ">", "a.>", "ä", "a\tb", "a:b"} {
		if err := kv.ValidateKey(k); !errors.Is(err, kv.ErrInvalidKey) {
			t.Errorf("key %q: got %v", k, err)
		}
	}
}

// TestNoIOOnInvalidInput uses a closed connection: an error other than the
// validation error would mean something was sent.
func TestNoIOOnInvalidInput(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "v"})
	e.Conn.Close()
	ctx := context.Background()
	if _, err := kv.CreateBucket(ctx, e.JS, kv.Config{Bucket: "bad.name"}); !errors.Is(err, kv.ErrInvalidBucketName) {
		t.Fatalf("CreateBucket: %v", err)
	}
	if _, err := kv.CreateBucket(ctx, e.JS, kv.Config{Bucket: "h", History: 65}); !errors.Is(err, kv.ErrHistoryTooLarge) {
		t.Fatalf("history: %v", err)
	}
	if _, err := kv.Bind(ctx, e.JS, "a b"); !errors.Is(err, kv.ErrInvalidBucketName) {
		t.Fatalf("Bind: %v", err)
	}
	if err := kv.DeleteBucket(ctx, e.JS, ""); !errors.Is(err, kv.ErrInvalidBucketName) {
		t.Fatalf("DeleteBucket: %v", err)
	}
	if _, err := b.Put(ctx, "a..b", nil); !errors.Is(err, kv.ErrInvalidKey) {
		t.Fatalf("Put: %v", err)
	}
	if _, err := b.Get(ctx, "*"); !errors.Is(err, kv.ErrInvalidKey) {
		t.Fatalf("Get: %v", err)
	}
	if _, err := b.Create(ctx, ".x", nil); !errors.Is(err, kv.ErrInvalidKey) {
		t.Fatalf("Create: %v", err)
	}
	if _, err := b.Update(ctx, "x.", nil, 1); !errors.Is(err, kv.ErrInvalidKey) {
		t.Fatalf("Update: %v", err)
	}
	if err := b.Delete(ctx, "a b"); !errors.Is(err, kv.ErrInvalidKey) {
		t.Fatalf("Delete: %v", err)
	}
	if err := b.Purge(ctx, "a>"); !errors.Is(err, kv.ErrInvalidKey) {
		t.Fatalf("Purge: %v", err)
	}
	if _, err := b.Create(ctx, "x", nil, kv.KeyTTL(time.Millisecond)); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("Create with short TTL: %v", err)
	}
	for _, f := range []string{"a.>.b", "a*", "", "a..b", ".a"} {
		for _, err := range b.Watch(ctx, f) {
			if !errors.Is(err, kv.ErrInvalidKey) {
				t.Fatalf("Watch(%q): %v", f, err)
			}
		}
	}
	for _, err := range b.WatchAll(ctx, kv.IncludeHistory(), kv.UpdatesOnly()) {
		if !errors.Is(err, conn.ErrInvalidOption) {
			t.Fatalf("Watch options: %v", err)
		}
	}
	if _, err := b.History(ctx, "a b"); !errors.Is(err, kv.ErrInvalidKey) {
		t.Fatalf("History: %v", err)
	}
}

func TestBucketLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := e.Ctx
	cfg := kv.Config{Bucket: "life", Description: "d", History: 5, TTL: time.Hour, MaxValueSize: 1024,
		MaxBytes: 1 << 20, Storage: jsapi.StorageMemory, Compression: false, Metadata: map[string]string{"team": "x"}}
	b := e.bucket(t, cfg)
	if b.Name() != "life" || b.StreamName() != "KV_life" {
		t.Fatalf("names %q %q", b.Name(), b.StreamName())
	}
	// Creating again with the same configuration is fine; with another
	// one it is ErrBucketExists.
	if _, err := kv.CreateBucket(ctx, e.JS, cfg); err != nil {
		t.Fatalf("idempotent create: %v", err)
	}
	other := cfg
	other.History = 2
	if _, err := kv.CreateBucket(ctx, e.JS, other); !errors.Is(err, kv.ErrBucketExists) || !errors.Is(err, jsapi.ErrStreamNameInUse) {
		t.Fatalf("create with other config: %v", err)
	}
	// The stream has the layout nats.go uses.
	st, err := e.JS.Stream(ctx, "KV_life")
	if err != nil {
		t.Fatal(err)
	}
	c := st.CachedInfo().Config
	if !slices.Equal(c.Subjects, []string{"$KV.life.>"}) || c.MaxMsgsPerSubject != 5 || c.MaxAge != time.Hour ||
		c.MaxMsgSize != 1024 || c.MaxBytes != 1<<20 || c.MaxMsgs != -1 || !c.AllowRollup || !c.DenyDelete ||
		!c.AllowDirect || c.Discard != jsapi.DiscardNew || c.DuplicateWindow != 2*time.Minute || c.Description != "d" ||
		c.Storage != jsapi.StorageMemory || c.Metadata["team"] != "x" {
		t.Fatalf("stream config %+v", c)
	}
	st2, err := b.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st2.Bucket != "life" || st2.History != 5 || st2.TTL != time.Hour || st2.Values != 0 || st2.Compressed ||
		st2.Config.MaxValueSize != 1024 || st2.Config.History != 5 || st2.StreamInfo == nil {
		t.Fatalf("status %+v", st2)
	}
	mustPut(t, b, "k", "v")
	if st2, _ = b.Status(ctx); st2.Values != 1 || st2.Bytes == 0 {
		t.Fatalf("status after put %+v", st2)
	}

	// Update and CreateOrUpdate.
	other.Compression = true
	other.Storage = jsapi.StorageMemory
	if _, err := kv.UpdateBucket(ctx, e.JS, other); err != nil {
		t.Fatalf("UpdateBucket: %v", err)
	}
	if st2, _ = b.Status(ctx); st2.History != 2 || !st2.Compressed {
		t.Fatalf("status after update %+v", st2)
	}
	if _, err := kv.UpdateBucket(ctx, e.JS, kv.Config{Bucket: "nope"}); !errors.Is(err, kv.ErrBucketNotFound) {
		t.Fatalf("UpdateBucket missing: %v", err)
	}
	if _, err := kv.CreateOrUpdateBucket(ctx, e.JS, kv.Config{Bucket: "second", TTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	st, _ = e.JS.Stream(ctx, "KV_second")
	if st.CachedInfo().Config.DuplicateWindow != time.Second {
		t.Fatalf("duplicate window follows a short TTL: %v", st.CachedInfo().Config.DuplicateWindow)
	}
	if _, err := kv.CreateOrUpdateBucket(ctx, e.JS, kv.Config{Bucket: "second", History: 3}); err != nil {
		t.Fatal(err)
	}

	// Bind, listing, delete.
	if _, err := e.JS.CreateStream(ctx, jsapi.StreamConfig{Name: "KV_plain", Subjects: []string{"plain.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Bind(ctx, e.JS, "plain"); !errors.Is(err, kv.ErrBadBucket) {
		t.Fatalf("Bind non-KV stream: %v", err)
	}
	testutil.CheckStores(t, e.JSEnv, testutil.Stores[*kv.Bucket, *kv.Status]{
		Bind: kv.Bind, Names: kv.BucketNames, Statuses: kv.Buckets,
		Name: func(s *kv.Status) string { return s.Bucket }, NotFound: kv.ErrBucketNotFound,
	}, "life", "second")
	if err := kv.DeleteBucket(ctx, e.JS, "life"); err != nil {
		t.Fatal(err)
	}
	if err := kv.DeleteBucket(ctx, e.JS, "life"); !errors.Is(err, kv.ErrBucketNotFound) {
		t.Fatalf("DeleteBucket again: %v", err)
	}
	if _, err := b.Get(ctx, "k"); !errors.Is(err, kv.ErrBucketNotFound) {
		t.Fatalf("Get on deleted bucket: %v", err)
	}
	if _, err := b.Put(ctx, "k", nil); !errors.Is(err, kv.ErrBucketNotFound) {
		t.Fatalf("Put on deleted bucket: %v", err)
	}
	if _, err := b.Status(ctx); !errors.Is(err, kv.ErrBucketNotFound) {
		t.Fatalf("Status on deleted bucket: %v", err)
	}
}

func TestPutGet(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "pg", History: 10})
	ctx := e.Ctx
	before := time.Now().Add(-time.Second)
	r1 := mustPut(t, b, "a.b", "one")
	r2, err := b.PutString(ctx, "a.b", "two")
	if err != nil || r2 <= r1 {
		t.Fatalf("PutString: %d %v", r2, err)
	}
	mustPut(t, b, "other", "x")
	got, err := b.Get(ctx, "a.b")
	if err != nil {
		t.Fatal(err)
	}
	if got.Bucket != "pg" || got.Key != "a.b" || string(got.Value) != "two" || got.Revision != r2 ||
		got.Operation != kv.OpPut || got.Created.Before(before) || got.Created.After(time.Now().Add(time.Second)) {
		t.Fatalf("Get: %+v", got)
	}
	old, err := b.GetRevision(ctx, "a.b", r1)
	if err != nil || string(old.Value) != "one" || old.Revision != r1 {
		t.Fatalf("GetRevision: %+v %v", old, err)
	}
	// A revision of another key is not this key's.
	if _, err := b.GetRevision(ctx, "other", r1); !errors.Is(err, kv.ErrKeyNotFound) {
		t.Fatalf("GetRevision other key: %v", err)
	}
	if _, err := b.GetRevision(ctx, "a.b", 1000); !errors.Is(err, kv.ErrKeyNotFound) {
		t.Fatalf("GetRevision missing: %v", err)
	}
	if _, err := b.Get(ctx, "missing"); !errors.Is(err, kv.ErrKeyNotFound) || errors.Is(err, kv.ErrKeyDeleted) {
		t.Fatalf("Get missing: %v", err)
	}
	// Empty and binary values round-trip.
	mustPut(t, b, "empty", "")
	if got, err := b.Get(ctx, "empty"); err != nil || len(got.Value) != 0 || got.Operation != kv.OpPut {
		t.Fatalf("empty value: %+v %v", got, err)
	}
	bin := []byte{0, 1, 2, '\r', '\n', 255}
	if _, err := b.Put(ctx, "bin", bin); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Get(ctx, "bin"); string(got.Value) != string(bin) {
		t.Fatalf("binary value %v", got.Value)
	}
}

func TestMaxValueSizeAndMaxBytes(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "lim", MaxValueSize: 16, MaxBytes: 4096, Storage: jsapi.StorageMemory})
	if _, err := b.Put(e.Ctx, "k", make([]byte, 17)); !errors.Is(err, jsapi.ErrMessageTooLarge) {
		t.Fatalf("value over MaxValueSize: %v", err)
	}
	var err error
	for i := 0; i < 1000 && err == nil; i++ {
		_, err = b.Put(e.Ctx, fmt.Sprint("k", i), make([]byte, 16))
	}
	var ae *jsapi.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("bucket over MaxBytes: %v", err)
	}
}

func TestCreate(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "cr", History: 5})
	ctx := e.Ctx
	r1, err := b.Create(ctx, "lock", []byte("me"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Create(ctx, "lock", []byte("you"))
	if !errors.Is(err, kv.ErrKeyExists) || !errors.Is(err, jsapi.ErrWrongLastSequence) {
		t.Fatalf("Create existing: %v", err)
	}
	// A deleted or purged key can be created again.
	if err := b.Delete(ctx, "lock"); err != nil {
		t.Fatal(err)
	}
	r2, err := b.Create(ctx, "lock", []byte("you"))
	if err != nil || r2 <= r1 {
		t.Fatalf("Create after delete: %d %v", r2, err)
	}
	if err := b.Purge(ctx, "lock"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Create(ctx, "lock", []byte("them")); err != nil {
		t.Fatalf("Create after purge: %v", err)
	}
	if got, _ := b.Get(ctx, "lock"); string(got.Value) != "them" {
		t.Fatalf("value %q", got.Value)
	}
}

func TestUpdate(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "up"})
	ctx := e.Ctx
	// Revision 0 means "no entry yet".
	r1, err := b.Update(ctx, "k", []byte("1"), 0)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := b.Update(ctx, "k", []byte("2"), r1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Update(ctx, "k", []byte("3"), r1)
	if !errors.Is(err, kv.ErrRevisionMismatch) || !errors.Is(err, jsapi.ErrWrongLastSequence) || errors.Is(err, kv.ErrKeyExists) {
		t.Fatalf("stale Update: %v", err)
	}
	if got, _ := b.Get(ctx, "k"); got.Revision != r2 || string(got.Value) != "2" {
		t.Fatalf("after conflict: %+v", got)
	}
	// Conditional delete and purge.
	if err := b.Delete(ctx, "k", kv.LastRevision(r1)); !errors.Is(err, kv.ErrRevisionMismatch) {
		t.Fatalf("stale conditional delete: %v", err)
	}
	if err := b.Delete(ctx, "k", kv.LastRevision(r2)); err != nil {
		t.Fatalf("conditional delete: %v", err)
	}
	if err := b.Purge(ctx, "k", kv.PurgeLastRevision(r2)); !errors.Is(err, kv.ErrRevisionMismatch) {
		t.Fatalf("stale conditional purge: %v", err)
	}
}

func TestDeletePurgeHistory(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "dp", History: 3})
	ctx := e.Ctx
	for i := range 5 {
		mustPut(t, b, "k", fmt.Sprint(i))
	}
	h, err := b.History(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 3 || string(h[0].Value) != "2" || string(h[2].Value) != "4" || h[0].Revision >= h[2].Revision {
		t.Fatalf("history kept %d: %+v", len(h), h)
	}
	if err := b.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	_, err = b.Get(ctx, "k")
	if !errors.Is(err, kv.ErrKeyDeleted) || !errors.Is(err, kv.ErrKeyNotFound) {
		t.Fatalf("Get deleted: %v", err)
	}
	h, _ = b.History(ctx, "k")
	if len(h) != 3 || h[2].Operation != kv.OpDelete || len(h[2].Value) != 0 {
		t.Fatalf("history after delete: %+v", h)
	}
	if _, err := b.GetRevision(ctx, "k", h[2].Revision); !errors.Is(err, kv.ErrKeyDeleted) {
		t.Fatalf("GetRevision of the marker: %v", err)
	}
	if h, _ := b.History(ctx, "k", kv.IgnoreDeletes()); len(h) != 2 {
		t.Fatalf("history without deletes: %d", len(h))
	}
	if err := b.Purge(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	h, _ = b.History(ctx, "k")
	if len(h) != 1 || h[0].Operation != kv.OpPurge {
		t.Fatalf("history after purge: %+v", h)
	}
	if _, err := b.Get(ctx, "k"); !errors.Is(err, kv.ErrKeyDeleted) {
		t.Fatalf("Get purged: %v", err)
	}
	if _, err := b.History(ctx, "never"); !errors.Is(err, kv.ErrKeyNotFound) {
		t.Fatalf("History of unknown key: %v", err)
	}
	// History with a wildcard and MetaOnly.
	mustPut(t, b, "x.1", "a")
	mustPut(t, b, "x.2", "b")
	h, err = b.History(ctx, "x.*", kv.MetaOnly())
	if err != nil || len(h) != 2 || h[0].Key != "x.1" || len(h[0].Value) != 0 {
		t.Fatalf("wildcard meta history: %+v %v", h, err)
	}
}

func TestKeys(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "keys", History: 4})
	ctx := e.Ctx
	if keys, err := b.Keys(ctx); err != nil || len(keys) != 0 {
		t.Fatalf("Keys of empty bucket: %v %v", keys, err)
	}
	for _, k := range []string{"svc.a", "svc.b", "cfg.x", "svc.a", "gone", "purged", "svc.c.deep"} {
		mustPut(t, b, k, "v")
	}
	if err := b.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if err := b.Purge(ctx, "purged"); err != nil {
		t.Fatal(err)
	}
	keys, err := b.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(keys, []string{"cfg.x", "svc.a", "svc.b", "svc.c.deep"}) {
		t.Fatalf("Keys %v", keys)
	}
	keys, _ = b.Keys(ctx, "svc.*")
	if !slices.Equal(keys, []string{"svc.a", "svc.b"}) {
		t.Fatalf("Keys svc.* %v", keys)
	}
	keys, _ = b.Keys(ctx, "svc.>", "cfg.x")
	if !slices.Equal(keys, []string{"cfg.x", "svc.a", "svc.b", "svc.c.deep"}) {
		t.Fatalf("Keys svc.> cfg.x %v", keys)
	}
	// ListKeys streams and can stop early.
	n := 0
	for k, err := range b.ListKeys(ctx) {
		if err != nil || k == "" {
			t.Fatal(err)
		}
		if n++; n == 2 {
			break
		}
	}
	if n != 2 {
		t.Fatalf("ListKeys yielded %d", n)
	}
	for _, err := range b.ListKeys(ctx, "bad..filter") {
		if !errors.Is(err, kv.ErrInvalidKey) {
			t.Fatalf("ListKeys bad filter: %v", err)
		}
	}
}

func TestPurgeDeletes(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "pd", History: 10})
	ctx := e.Ctx
	for _, k := range []string{"a", "a", "b", "c"} {
		mustPut(t, b, k, "v")
	}
	b.Delete(ctx, "a")
	b.Purge(ctx, "b")
	// Young markers stay; the revisions below them go.
	if err := b.PurgeDeletes(ctx); err != nil {
		t.Fatal(err)
	}
	h, _ := b.History(ctx, "a")
	if len(h) != 1 || h[0].Operation != kv.OpDelete {
		t.Fatalf("history of a after PurgeDeletes: %+v", h)
	}
	// A negative threshold removes the markers too.
	if err := b.PurgeDeletes(ctx, kv.DeleteMarkersOlderThan(-1)); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b"} {
		if _, err := b.History(ctx, k); !errors.Is(err, kv.ErrKeyNotFound) {
			t.Fatalf("history of %s: %v", k, err)
		}
	}
	if got, err := b.Get(ctx, "c"); err != nil || string(got.Value) != "v" {
		t.Fatalf("c survived: %v", err)
	}
	st, _ := b.Status(ctx)
	if st.Values != 1 {
		t.Fatalf("values left %d", st.Values)
	}
}

// TestConcurrentCAS runs 4 writers that each read the latest revision and
// Update from it: every revision is the base of exactly one successful
// Update, and the winners form one chain.
func TestConcurrentCAS(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "cas", Storage: jsapi.StorageMemory})
	codes := casRace(t, e.Ctx, b, 4, 200)
	t.Logf("conflict codes: %v", codes)
}

// casRace runs writers that Get and Update one key until wins Updates
// succeeded, checks that every revision had exactly one winner, and
// returns how often each server error code signalled a conflict.
func casRace(t *testing.T, ctx context.Context, b *kv.Bucket, writers, wins int) map[int]int {
	t.Helper()
	first := mustPut(t, b, "counter", "0")
	type win struct{ base, rev uint64 }
	results := make(chan win, wins)
	codes := make(chan int, 1<<16)
	errs := make(chan error, writers)
	tickets := make(chan struct{}, wins)
	for range wins {
		tickets <- struct{}{}
	}
	close(tickets)
	for w := range writers {
		go func() {
			for range tickets {
				for {
					cur, err := b.Get(ctx, "counter")
					if err != nil {
						errs <- err
						return
					}
					rev, err := b.Update(ctx, "counter", fmt.Appendf(nil, "w%d", w), cur.Revision)
					if errors.Is(err, kv.ErrRevisionMismatch) {
						var ae *jsapi.APIError
						if !errors.As(err, &ae) || !errors.Is(err, jsapi.ErrWrongLastSequence) {
							errs <- fmt.Errorf("conflict without the server's error: %v", err)
							return
						}
						codes <- ae.ErrorCode
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					results <- win{cur.Revision, rev}
					break
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	close(results)
	close(codes)
	byBase := map[uint64]uint64{}
	for r := range results {
		if prev, dup := byBase[r.base]; dup {
			t.Fatalf("revision %d has two winners: %d and %d", r.base, prev, r.rev)
		}
		byBase[r.base] = r.rev
	}
	if len(byBase) != wins {
		t.Fatalf("%d wins, want %d", len(byBase), wins)
	}
	// The winners form one chain from the first revision to the latest.
	rev, n := first, 0
	for {
		next, ok := byBase[rev]
		if !ok {
			break
		}
		rev, n = next, n+1
	}
	if n != wins {
		t.Fatalf("chain of %d wins, want %d", n, wins)
	}
	if last, _ := b.Get(ctx, "counter"); last.Revision != rev {
		t.Fatalf("latest revision %d, chain ends at %d", last.Revision, rev)
	}
	seen := map[int]int{}
	for c := range codes {
		seen[c]++
	}
	return seen
}

func TestMirrorAndSources(t *testing.T) {
	e := newEnv(t)
	ctx := e.Ctx
	origin := e.bucket(t, kv.Config{Bucket: "origin", History: 3})
	mustPut(t, origin, "a", "1")
	mirror := e.bucket(t, kv.Config{Bucket: "replica", History: 3, Mirror: &jsapi.StreamSource{Name: "origin"}})
	// Writes through the mirror land in the origin.
	rev, err := mirror.Put(ctx, "b", []byte("2"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := origin.Get(ctx, "b"); err != nil || got.Revision != rev {
		t.Fatalf("origin after a write through the mirror: %+v %v", got, err)
	}
	// The mirror catches up: watch it until it holds b.
	w := startWatch(t, func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return mirror.Watch(ctx, "b") })
	for {
		e, err, ok := w.Next()
		if !ok || err != nil {
			t.Fatalf("mirror watch: %v", err)
		}
		if e != nil && string(e.Value) == "2" {
			break
		}
	}
	if got, err := mirror.Get(ctx, "a"); err != nil || string(got.Value) != "1" {
		t.Fatalf("mirror Get: %+v %v", got, err)
	}
	// A bucket sourcing the origin maps its keys.
	agg := e.bucket(t, kv.Config{Bucket: "agg", Sources: []jsapi.StreamSource{{Name: "origin"}}})
	w2 := startWatch(t, func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return agg.Watch(ctx, "b") })
	for {
		e, err, ok := w2.Next()
		if !ok || err != nil {
			t.Fatalf("sourced watch: %v", err)
		}
		if e != nil {
			if e.Key != "b" || e.Bucket != "agg" {
				t.Fatalf("sourced entry %+v", e)
			}
			break
		}
	}
	st, _ := e.JS.Stream(ctx, "KV_agg")
	src := st.CachedInfo().Config.Sources
	if len(src) != 1 || src[0].Name != "KV_origin" || len(src[0].SubjectTransforms) != 1 ||
		src[0].SubjectTransforms[0].Source != "$KV.origin.>" || src[0].SubjectTransforms[0].Destination != "$KV.agg.>" {
		t.Fatalf("sources %+v", src)
	}
}

func TestRePublish(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "rp", RePublish: &jsapi.RePublish{Source: "$KV.rp.>", Destination: "events.>"}})
	sub, err := e.Conn.Subscribe("events.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Conn.Flush(e.Ctx); err != nil {
		t.Fatal(err)
	}
	mustPut(t, b, "x", "hello")
	ctx, cancel := context.WithTimeout(e.Ctx, 5*time.Second)
	defer cancel()
	m, err := sub.NextMsg(ctx)
	if err != nil || m.Subject != "events.$KV.rp.x" && !strings.HasPrefix(m.Subject, "events.") || string(m.Data) != "hello" {
		t.Fatalf("republished %v %v", m, err)
	}
}

// TestLeaderGet reads a bucket whose stream does not allow Direct Get.
func TestLeaderGet(t *testing.T) {
	e := newEnv(t)
	if _, err := e.JS.CreateStream(e.Ctx, jsapi.StreamConfig{Name: "KV_old", Subjects: []string{"$KV.old.>"},
		MaxMsgsPerSubject: 2, AllowRollup: true, DenyDelete: true}); err != nil {
		t.Fatal(err)
	}
	b, err := kv.Bind(e.Ctx, e.JS, "old")
	if err != nil {
		t.Fatal(err)
	}
	r1 := mustPut(t, b, "k", "1")
	mustPut(t, b, "k", "2")
	if got, err := b.Get(e.Ctx, "k"); err != nil || string(got.Value) != "2" {
		t.Fatalf("Get: %+v %v", got, err)
	}
	if got, err := b.GetRevision(e.Ctx, "k", r1); err != nil || string(got.Value) != "1" {
		t.Fatalf("GetRevision: %+v %v", got, err)
	}
	if _, err := b.Get(e.Ctx, "nope"); !errors.Is(err, kv.ErrKeyNotFound) {
		t.Fatalf("Get missing: %v", err)
	}
	b.Delete(e.Ctx, "k")
	if _, err := b.Get(e.Ctx, "k"); !errors.Is(err, kv.ErrKeyDeleted) {
		t.Fatalf("Get deleted: %v", err)
	}
}
