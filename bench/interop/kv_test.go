package interop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/proto"
)

// script is the same sequence of operations for either client.
type kvOps struct {
	put    func(k, v string) uint64
	create func(k, v string) (uint64, error)
	update func(k, v string, rev uint64) (uint64, error)
	del    func(k string) error
	purge  func(k string) error
}

// runScript writes: a=1 a=2 b=x (deleted) c (created, updated) d (purged).
func runScript(t *testing.T, o kvOps) map[string]uint64 {
	t.Helper()
	revs := map[string]uint64{}
	revs["a1"] = o.put("a", "1")
	revs["a2"] = o.put("a", "2")
	revs["b"] = o.put("b", "x")
	if err := o.del("b"); err != nil {
		t.Fatal(err)
	}
	c, err := o.create("c", "created")
	if err != nil {
		t.Fatal(err)
	}
	if revs["c"], err = o.update("c", "updated", c); err != nil {
		t.Fatal(err)
	}
	o.put("d", "soon purged")
	if err := o.purge("d"); err != nil {
		t.Fatal(err)
	}
	return revs
}

func natsgoOps(t *testing.T, ctx context.Context, b jetstream.KeyValue) kvOps {
	return kvOps{
		put: func(k, v string) uint64 {
			r, err := b.Put(ctx, k, []byte(v))
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
		create: func(k, v string) (uint64, error) { return b.Create(ctx, k, []byte(v)) },
		update: func(k, v string, rev uint64) (uint64, error) { return b.Update(ctx, k, []byte(v), rev) },
		del:    func(k string) error { return b.Delete(ctx, k) },
		purge:  func(k string) error { return b.Purge(ctx, k) },
	}
}

func natsioOps(t *testing.T, ctx context.Context, b *kv.Bucket) kvOps {
	return kvOps{
		put: func(k, v string) uint64 {
			r, err := b.Put(ctx, k, []byte(v))
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
		create: func(k, v string) (uint64, error) { return b.Create(ctx, k, []byte(v)) },
		update: func(k, v string, rev uint64) (uint64, error) { return b.Update(ctx, k, []byte(v), rev) },
		del:    func(k string) error { return b.Delete(ctx, k) },
		purge:  func(k string) error { return b.Purge(ctx, k) },
	}
}

// TestKVNatsGoWritesNatsioReads: nats.go writes values, deletes, purges
// and history; natsio reads all of it.
func TestKVNatsGoWritesNatsioReads(t *testing.T) {
	c := start(t)
	ctx := c.ctx
	nb, err := c.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "ng", History: 5, TTL: time.Hour, MaxValueSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	revs := runScript(t, natsgoOps(t, ctx, nb))

	// natsio creating the same bucket is a no-op: same stream config.
	ib, err := kv.CreateBucket(ctx, c.jsi, kv.Config{Bucket: "ng", History: 5, TTL: time.Hour, MaxValueSize: 1024})
	if err != nil {
		t.Fatalf("natsio CreateBucket over nats.go's bucket: %v", err)
	}
	got, err := ib.Get(ctx, "a")
	if err != nil || string(got.Value) != "2" || got.Revision != revs["a2"] {
		t.Fatalf("Get a: %+v %v", got, err)
	}
	old, err := ib.GetRevision(ctx, "a", revs["a1"])
	if err != nil || string(old.Value) != "1" {
		t.Fatalf("GetRevision a: %+v %v", old, err)
	}
	if _, err := ib.Get(ctx, "b"); !errors.Is(err, kv.ErrKeyDeleted) {
		t.Fatalf("Get b (deleted by nats.go): %v", err)
	}
	if _, err := ib.Get(ctx, "d"); !errors.Is(err, kv.ErrKeyDeleted) {
		t.Fatalf("Get d (purged by nats.go): %v", err)
	}
	if got, _ := ib.Get(ctx, "c"); string(got.Value) != "updated" || got.Revision != revs["c"] {
		t.Fatalf("Get c %+v", got)
	}
	h, err := ib.History(ctx, "b")
	if err != nil || len(h) != 2 || h[0].Operation != kv.OpPut || h[1].Operation != kv.OpDelete {
		t.Fatalf("History b: %+v %v", h, err)
	}
	if h, _ := ib.History(ctx, "d"); len(h) != 1 || h[0].Operation != kv.OpPurge {
		t.Fatalf("History d: %+v", h)
	}
	keys, err := ib.Keys(ctx)
	nkeys, _ := nb.Keys(ctx)
	if err != nil || !slices.Equal(keys, []string{"a", "c"}) || !slices.Equal(keys, nkeys) {
		t.Fatalf("Keys natsio %v (%v), nats.go %v", keys, err, nkeys)
	}
	// Both watches see the same initial values.
	if a, b := natsgoWatch(t, ctx, nb), natsioWatch(t, ctx, ib); !slices.Equal(a, b) {
		t.Fatalf("watch initial values\nnats.go %v\nnatsio  %v", a, b)
	}
	// A CAS conflict caused by nats.go is seen by natsio, and the reverse.
	cur, _ := ib.Get(ctx, "a")
	nb.Put(ctx, "a", []byte("3"))
	if _, err := ib.Update(ctx, "a", []byte("x"), cur.Revision); !errors.Is(err, kv.ErrRevisionMismatch) {
		t.Fatalf("natsio stale update: %v", err)
	}
	if _, err := ib.Create(ctx, "a", []byte("x")); !errors.Is(err, kv.ErrKeyExists) {
		t.Fatalf("natsio create over nats.go value: %v", err)
	}
	// natsio may re-create a key nats.go deleted.
	if _, err := ib.Create(ctx, "b", []byte("back")); err != nil {
		t.Fatalf("natsio create over nats.go delete: %v", err)
	}
}

// TestKVNatsioWritesNatsGoReads: natsio writes; nats.go reads.
func TestKVNatsioWritesNatsGoReads(t *testing.T) {
	c := start(t)
	ctx := c.ctx
	ib, err := kv.CreateBucket(ctx, c.jsi, kv.Config{Bucket: "io", History: 5, TTL: time.Hour, MaxValueSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	revs := runScript(t, natsioOps(t, ctx, ib))

	nb, err := c.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "io", History: 5, TTL: time.Hour, MaxValueSize: 1024})
	if err != nil {
		t.Fatalf("nats.go CreateKeyValue over natsio's bucket: %v", err)
	}
	got, err := nb.Get(ctx, "a")
	if err != nil || string(got.Value()) != "2" || got.Revision() != revs["a2"] {
		t.Fatalf("nats.go Get a: %v %v", got, err)
	}
	old, err := nb.GetRevision(ctx, "a", revs["a1"])
	if err != nil || string(old.Value()) != "1" {
		t.Fatalf("nats.go GetRevision: %v", err)
	}
	if _, err := nb.Get(ctx, "b"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("nats.go Get b (deleted by natsio): %v", err)
	}
	h, err := nb.History(ctx, "b")
	if err != nil || len(h) != 2 || h[1].Operation() != jetstream.KeyValueDelete {
		t.Fatalf("nats.go History b: %v %v", h, err)
	}
	if h, _ := nb.History(ctx, "d"); len(h) != 1 || h[0].Operation() != jetstream.KeyValuePurge {
		t.Fatalf("nats.go History d: %v", h)
	}
	if got, _ := nb.Get(ctx, "c"); string(got.Value()) != "updated" {
		t.Fatalf("nats.go Get c %s", got.Value())
	}
	keys, _ := nb.Keys(ctx)
	if !slices.Equal(keys, []string{"a", "c"}) {
		t.Fatalf("nats.go Keys %v", keys)
	}
	if a, b := natsgoWatch(t, ctx, nb), natsioWatch(t, ctx, ib); !slices.Equal(a, b) {
		t.Fatalf("watch initial values\nnats.go %v\nnatsio  %v", a, b)
	}
	cur, _ := nb.Get(ctx, "a")
	ib.Put(ctx, "a", []byte("3"))
	if _, err := nb.Update(ctx, "a", []byte("x"), cur.Revision()); !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		t.Fatalf("nats.go stale update: %v", err)
	}
	if _, err := nb.Create(ctx, "b", []byte("back")); err != nil {
		t.Fatalf("nats.go create over natsio delete: %v", err)
	}
	// A live natsio watch sees nats.go's writes.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	seen := make(chan *kv.Entry, 4)
	go func() {
		for e, err := range ib.Watch(wctx, "live", kv.UpdatesOnly()) {
			if err != nil {
				return
			}
			seen <- e
		}
	}()
	if e := <-seen; e != nil {
		t.Fatalf("marker %+v", e)
	}
	nb.Put(ctx, "live", []byte("from nats.go"))
	if e := <-seen; e == nil || string(e.Value) != "from nats.go" {
		t.Fatalf("live entry %+v", e)
	}
}

func natsgoWatch(t *testing.T, ctx context.Context, b jetstream.KeyValue) []string {
	w, err := b.WatchAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var out []string
	for e := range w.Updates() {
		if e == nil {
			break
		}
		op := map[jetstream.KeyValueOp]string{jetstream.KeyValuePut: "PUT", jetstream.KeyValueDelete: "DEL", jetstream.KeyValuePurge: "PURGE"}[e.Operation()]
		out = append(out, fmt.Sprintf("%s %s=%s @%d", op, e.Key(), e.Value(), e.Revision()))
	}
	return out
}

func natsioWatch(t *testing.T, ctx context.Context, b *kv.Bucket) []string {
	var out []string
	for e, err := range b.WatchAll(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		out = append(out, fmt.Sprintf("%s %s=%s @%d", e.Operation, e.Key, e.Value, e.Revision))
	}
	return out
}

// TestKVSameBytes runs the same operations through both clients on two
// buckets: the stream configurations and every stored message (subject
// suffix, headers, payload) are identical.
func TestKVSameBytes(t *testing.T) {
	c := start(t)
	ctx := c.ctx
	cfgs := []struct {
		ng jetstream.KeyValueConfig
		io kv.Config
	}{
		{jetstream.KeyValueConfig{History: 5}, kv.Config{History: 5}},
		{jetstream.KeyValueConfig{TTL: 30 * time.Second, MaxBytes: 1 << 20, Storage: jetstream.MemoryStorage, Compression: false, Description: "x"},
			kv.Config{TTL: 30 * time.Second, MaxBytes: 1 << 20, Storage: jsapi.StorageMemory, Description: "x"}},
		{jetstream.KeyValueConfig{LimitMarkerTTL: 5 * time.Second, History: 3, Metadata: map[string]string{"a": "b"}},
			kv.Config{LimitMarkerTTL: 5 * time.Second, History: 3, Metadata: map[string]string{"a": "b"}}},
	}
	for i, cf := range cfgs {
		cf.ng.Bucket, cf.io.Bucket = fmt.Sprint("ng", i), fmt.Sprint("io", i)
		nb, err := c.js.CreateKeyValue(ctx, cf.ng)
		if err != nil {
			t.Fatal(err)
		}
		ib, err := kv.CreateBucket(ctx, c.jsi, cf.io)
		if err != nil {
			t.Fatal(err)
		}
		runScript(t, natsgoOps(t, ctx, nb))
		runScript(t, natsioOps(t, ctx, ib))
		if i == 2 {
			if _, err := nb.Create(ctx, "ttl", []byte("v"), jetstream.KeyTTL(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if _, err := ib.Create(ctx, "ttl", []byte("v"), kv.KeyTTL(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if err := nb.Purge(ctx, "a", jetstream.PurgeTTL(time.Minute)); err != nil {
				t.Fatal(err)
			}
			if err := ib.Purge(ctx, "a", kv.PurgeTTL(time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		ns, _ := c.jsi.Stream(ctx, "KV_"+cf.ng.Bucket)
		is, _ := c.jsi.Stream(ctx, "KV_"+cf.io.Bucket)
		if a, b := configJSON(t, ns.CachedInfo().Config, cf.ng.Bucket), configJSON(t, is.CachedInfo().Config, cf.io.Bucket); a != b {
			t.Fatalf("stream configs differ\nnats.go %s\nnatsio  %s", a, b)
		}
		a, b := storedMsgs(t, ctx, ns, "$KV."+cf.ng.Bucket+"."), storedMsgs(t, ctx, is, "$KV."+cf.io.Bucket+".")
		if testing.Verbose() {
			t.Logf("bucket %d config %s", i, configJSON(t, is.CachedInfo().Config, cf.io.Bucket))
			for _, m := range b {
				t.Logf("  %s", m)
			}
		}
		if !slices.Equal(a, b) {
			t.Fatalf("stored messages differ\nnats.go %q\nnatsio  %q", a, b)
		}
	}
}

// configJSON is a stream configuration as JSON with the bucket name
// neutralised.
func configJSON(t *testing.T, c jsapi.StreamConfig, bucket string) string {
	c.Name = "KV_X"
	for i, s := range c.Subjects {
		if s == "$KV."+bucket+".>" {
			c.Subjects[i] = "$KV.X.>"
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// storedMsgs lists every message of a stream as "key headers payload",
// headers sorted.
func storedMsgs(t *testing.T, ctx context.Context, st *jsapi.Stream, pre string) []string {
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jsapi.ErrMsgNotFound) {
			out = append(out, fmt.Sprintf("#%d gone", seq))
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("#%d %s %v %q", seq, m.Subject[len(pre):], headers(&m.Header), m.Data))
	}
	return out
}

func headers(h *proto.Header) []string {
	set := map[string]bool{}
	for k, v := range h.All() {
		set[k+": "+v] = true
	}
	return slices.Sorted(maps.Keys(set))
}
