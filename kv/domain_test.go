package kv_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/natstest"
)

// exerciseBucket runs the bucket operations of F51 on a bucket reached
// through js (a domain or an imported API): create, Put, Get, Update
// (CAS, with a conflict), Create on an existing key, Delete, a watch that
// sees every update, and Keys. It returns the bucket.
func exerciseBucket(t *testing.T, ctx context.Context, js *jsapi.JS) *kv.Bucket {
	t.Helper()
	b, err := kv.CreateBucket(ctx, js, kv.Config{Bucket: "dom", History: 5, Storage: jsapi.StorageMemory})
	if err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	w := startWatch(t, func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return b.WatchAll(ctx) })
	w.Marker() // empty bucket: no initial values

	r1, err := b.Put(ctx, "a", []byte("a1"))
	if err != nil || r1 != 1 {
		t.Fatalf("Put: %d %v", r1, err)
	}
	e, err := b.Get(ctx, "a")
	if err != nil || string(e.Value) != "a1" || e.Revision != r1 || e.Operation != kv.OpPut {
		t.Fatalf("Get: %+v %v", e, err)
	}
	r2, err := b.Update(ctx, "a", []byte("a2"), r1)
	if err != nil || r2 != 2 {
		t.Fatalf("Update: %d %v", r2, err)
	}
	if _, err := b.Update(ctx, "a", []byte("stale"), r1); !errors.Is(err, kv.ErrRevisionMismatch) {
		t.Fatalf("Update with a stale revision: %v", err)
	}
	if _, err := b.Create(ctx, "a", []byte("again")); !errors.Is(err, kv.ErrKeyExists) {
		t.Fatalf("Create on an existing key: %v", err)
	}
	r3, err := b.Create(ctx, "b", []byte("b1"))
	if err != nil || r3 != 3 {
		t.Fatalf("Create: %d %v", r3, err)
	}
	if err := b.Delete(ctx, "b"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := b.Get(ctx, "b"); !errors.Is(err, kv.ErrKeyDeleted) {
		t.Fatalf("Get of a deleted key: %v", err)
	}
	e, err = b.Get(ctx, "a")
	if err != nil || string(e.Value) != "a2" || e.Revision != r2 {
		t.Fatalf("Get after Update: %+v %v", e, err)
	}

	want := []struct {
		key, val string
		rev      uint64
		op       kv.Op
	}{{"a", "a1", 1, kv.OpPut}, {"a", "a2", 2, kv.OpPut}, {"b", "b1", 3, kv.OpPut}, {"b", "", 4, kv.OpDelete}}
	for _, x := range want {
		got := w.Entry()
		if got.Key != x.key || string(got.Value) != x.val || got.Revision != x.rev || got.Operation != x.op || got.Bucket != "dom" {
			t.Fatalf("watch: %s=%q rev %d %v, want %s=%q rev %d %v", got.Key, got.Value, got.Revision, got.Operation,
				x.key, x.val, x.rev, x.op)
		}
	}
	mustPut(t, b, "c.d", "c1")
	keys, err := b.Keys(ctx)
	if err != nil || !slices.Equal(keys, []string{"a", "c.d"}) {
		t.Fatalf("Keys: %v %v", keys, err)
	}
	w.Stop()
	return b
}

// F51 with a JetStream domain (FEATURES §4.12, §7.14): a client connected
// to a leaf node, which runs its own JetStream (domain "leaf"), uses a
// bucket of the hub's JetStream (domain "hub") through jsapi.Domain("hub"):
// every operation works, and the bucket's stream exists in the hub only
// (the leaf's own JetStream does not know it, and a plain $KV publish on
// the leaf reaches no stream), so requests, Direct Gets, writes and the
// watch's pulls all went through the $JS.hub.API prefix.
func TestKVThroughDomainFromLeafNode(t *testing.T) {
	hub := natstest.NewServer(t, natstest.Name("hub"), natstest.Configure(func(o *server.Options) {
		o.JetStreamDomain = "hub"
		o.LeafNode.Host = "127.0.0.1"
		o.LeafNode.Port = -1
	}))
	vz, err := hub.Server().Varz(nil)
	if err != nil || vz.LeafNode.Port <= 0 {
		t.Fatalf("hub leafnode port: %+v %v", vz.LeafNode, err)
	}
	remote := fmt.Sprintf("nats-leaf://127.0.0.1:%d", vz.LeafNode.Port)
	leaf := natstest.NewServer(t, natstest.Name("leaf"), natstest.ConfigText(fmt.Sprintf("jetstream { domain: leaf }\nleafnodes { remotes: [ { url: %q } ] }\n", remote)))
	e := envOn(t, leaf, leaf.URL())
	waitUntil(t, 20*time.Second, "the leaf node to connect", func() bool {
		return hub.Server().NumLeafNodes() == 1 && leaf.Server().NumLeafNodes() == 1
	})

	js, err := jsapi.New(e.Conn, jsapi.Domain("hub"))
	if err != nil {
		t.Fatal(err)
	}
	// The hub's API may be reachable a moment after the leaf connects
	// (interest propagation).
	waitUntil(t, 20*time.Second, "the hub's JetStream to answer through the leaf", func() bool {
		ctx, cancel := context.WithTimeout(e.Ctx, 500*time.Millisecond)
		defer cancel()
		_, err := js.Stream(ctx, "NONE")
		return errors.Is(err, jsapi.ErrStreamNotFound)
	})

	b := exerciseBucket(t, e.Ctx, js)
	if b.StreamName() != "KV_dom" {
		t.Fatalf("stream %q", b.StreamName())
	}

	// The bucket lives in the hub only.
	local, _ := jsapi.New(e.Conn)
	if _, err := local.Stream(e.Ctx, "KV_dom"); !errors.Is(err, jsapi.ErrStreamNotFound) {
		t.Fatalf("the leaf's own JetStream: %v; want stream not found", err)
	}
	ncHub, err := conn.Connect(e.Ctx, hub.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer ncHub.Close()
	jsHub, _ := jsapi.New(ncHub)
	st, err := jsHub.Stream(e.Ctx, "KV_dom")
	if err != nil || st.CachedInfo().State.Msgs != 5 {
		t.Fatalf("the hub's stream: %+v %v", st, err)
	}
	// On the leaf, an unprefixed $KV write reaches no stream: the Put
	// above must have gone through the domain prefix.
	if _, err := e.Conn.Request(e.Ctx, "$KV.dom.x", []byte("v")); !errors.Is(err, conn.ErrNoResponders) {
		t.Fatalf("plain $KV publish on the leaf: %v; want no responders", err)
	}
}

// apiImportConfig: account JS has JetStream and exports its API (with
// streamed responses, for pulls) and its $KV subjects; account APP has no
// JetStream of its own and imports them under "imp.API." — the layout
// jsapi.APIPrefix("imp.API") addresses, KV writes included
// ("imp.API.$KV.<bucket>.<key>", as for a domain).
const apiImportConfig = `
accounts {
  JS: {
    jetstream: enabled
    users: [ { user: js, password: js } ]
    exports: [
      { service: "$JS.API.>", response_type: stream }
      { service: "$KV.>" }
    ]
  }
  APP: {
    users: [ { user: app, password: app } ]
    imports: [
      { service: { account: JS, subject: "$JS.API.INFO" }, to: "imp.API.INFO" }
      { service: { account: JS, subject: "$JS.API.STREAM.>" }, to: "imp.API.STREAM.>" }
      { service: { account: JS, subject: "$JS.API.CONSUMER.>" }, to: "imp.API.CONSUMER.>" }
      { service: { account: JS, subject: "$JS.API.DIRECT.>" }, to: "imp.API.DIRECT.>" }
      { service: { account: JS, subject: "$KV.>" }, to: "imp.API.$KV.>" }
    ]
  }
}
`

// F51 through jsapi.APIPrefix: a client of account APP, which has no
// JetStream, uses a bucket of account JS through the imported API
// ("imp.API."): every bucket operation works, including the watch's pulls
// (streamed responses across accounts) and writes to the imported $KV
// subjects; the stream exists in account JS, and APP's own $JS.API and
// $KV subjects reach nothing, so everything went through the prefix.
func TestKVThroughImportedAPIPrefix(t *testing.T) {
	s := natstest.NewServer(t, natstest.ConfigText(apiImportConfig))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, s.URL(), conn.UserInfo("app", "app"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jsapi.New(nc, jsapi.APIPrefix("imp.API"))
	if err != nil || js.Prefix() != "imp.API." {
		t.Fatalf("APIPrefix: %q %v", js.Prefix(), err)
	}

	exerciseBucket(t, ctx, js)

	ncJS, err := conn.Connect(ctx, s.URL(), conn.UserInfo("js", "js"))
	if err != nil {
		t.Fatal(err)
	}
	defer ncJS.Close()
	owner, _ := jsapi.New(ncJS)
	st, err := owner.Stream(ctx, "KV_dom")
	if err != nil || st.CachedInfo().State.Msgs != 5 {
		t.Fatalf("the stream in account JS: %+v %v", st, err)
	}
	// APP's unprefixed subjects reach no JetStream and no stream.
	local, _ := jsapi.New(nc)
	if _, err := local.Stream(ctx, "KV_dom"); !errors.Is(err, jsapi.ErrNotEnabledForAccount) {
		t.Fatalf("APP's own $JS.API: %v; want JetStream not enabled for the account", err)
	}
	if _, err := nc.Request(ctx, "$KV.dom.x", []byte("v")); !errors.Is(err, conn.ErrNoResponders) {
		t.Fatalf("plain $KV publish in APP: %v; want no responders", err)
	}
}
