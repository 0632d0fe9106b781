package interop_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/objstore"
)

// TestObjNatsGoMetaPassesChecks: every kind of meta nats.go writes — an
// object, one renamed by UpdateMeta, a deleted marker, a link, a link
// replaced by a link — passes the checks natsio makes before acting on
// meta (name, store, NUID), and natsio's Delete of a nats.go object purges
// exactly that object's chunks.
func TestObjNatsGoMetaPassesChecks(t *testing.T) {
	c := start(t)
	ctx := c.ctx
	ns, err := c.js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "chk"})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := ns.PutString(ctx, "a", "object a")
	b, _ := ns.PutString(ctx, "b", "object b")
	ns.PutString(ctx, "old", "renamed")
	if err := ns.UpdateMeta(ctx, "old", jetstream.ObjectMeta{Name: "new"}); err != nil {
		t.Fatal(err)
	}
	ns.PutString(ctx, "gone", "x")
	ns.Delete(ctx, "gone")
	if _, err := ns.AddLink(ctx, "lnk", a); err != nil {
		t.Fatal(err)
	}
	if _, err := ns.AddLink(ctx, "lnk", b); err != nil {
		t.Fatal(err)
	}

	is, err := objstore.Bind(ctx, c.jsi, "chk")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "new", "lnk"} {
		if _, err := is.GetInfo(ctx, name); err != nil {
			t.Fatalf("GetInfo(%s): %v", name, err)
		}
	}
	if d, err := is.GetInfo(ctx, "gone", objstore.ShowDeleted()); err != nil || !d.Deleted {
		t.Fatalf("nats.go's deleted marker: %+v %v", d, err)
	}
	if got, err := is.GetString(ctx, "lnk"); err != nil || got != "object b" {
		t.Fatalf("nats.go's replaced link: %q %v", got, err)
	}
	var names []string
	for o, err := range is.List(ctx, objstore.ShowDeleted()) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, o.Name)
	}
	if slices.Sort(names); !slices.Equal(names, []string{"a", "b", "gone", "lnk", "new"}) {
		t.Fatalf("List: %q", names)
	}
	if err := is.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	st, _ := c.jsi.Stream(ctx, "OBJ_chk")
	si, _ := st.Info(ctx, jsapi.SubjectsFilter("$O.chk.C.>"))
	if si.State.Subjects["$O.chk.C."+a.NUID] != 0 || si.State.Subjects["$O.chk.C."+b.NUID] != 1 {
		t.Fatalf("chunks after natsio deleted nats.go's object a: %v", si.State.Subjects)
	}
	if _, err := ns.GetInfo(ctx, "a"); !errors.Is(err, jetstream.ErrObjectNotFound) {
		t.Fatalf("nats.go sees natsio's delete: %v", err)
	}
}

// TestKVNatsGoOperationsKnown: the operations nats.go writes (put, delete,
// purge) are all known to natsio: nothing is skipped.
func TestKVNatsGoOperationsKnown(t *testing.T) {
	c := start(t)
	ctx := c.ctx
	nb, err := c.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "ops", History: 5})
	if err != nil {
		t.Fatal(err)
	}
	nb.PutString(ctx, "a", "1")
	nb.PutString(ctx, "b", "1")
	nb.Delete(ctx, "b")
	nb.PutString(ctx, "c", "1")
	nb.Purge(ctx, "c")
	ib, err := kv.Bind(ctx, c.jsi, "ops")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := ib.Keys(ctx)
	if err != nil || !slices.Equal(keys, []string{"a"}) {
		t.Fatalf("Keys %q %v", keys, err)
	}
	h, err := ib.History(ctx, ">")
	if err != nil || len(h) != 4 {
		t.Fatalf("History: %d entries, %v", len(h), err)
	}
	if n := ib.SkippedEntries(); n != 0 {
		t.Fatalf("SkippedEntries %d of nats.go's entries", n)
	}
}
