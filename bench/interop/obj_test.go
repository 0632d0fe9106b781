package interop_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/objstore"
	"github.com/natsio/natsio/proto"
)

func payload(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// TestObjNatsGoWritesNatsioReads: objects with metadata and links written
// by nats.go, read by natsio.
func TestObjNatsGoWritesNatsioReads(t *testing.T) {
	c := start(t)
	ctx := c.ctx
	ns, err := c.js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "ng", Description: "d"})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := c.js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "ngother"})
	data := payload(10_500)
	ninfo, err := ns.Put(ctx, jetstream.ObjectMeta{Name: "dir/file?.bin", Description: "desc",
		Headers: nats.Header{"X-Kind": []string{"a", "b"}}, Metadata: map[string]string{"m": "1"},
		Opts: &jetstream.ObjectMetaOptions{ChunkSize: 1000}}, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	ns.PutString(ctx, "small", "tiny")
	ns.PutString(ctx, "gone", "x")
	ns.Delete(ctx, "gone")
	far, _ := other.PutString(ctx, "far", "far away")
	if _, err := ns.AddLink(ctx, "link", ninfo); err != nil {
		t.Fatal(err)
	}
	if _, err := ns.AddLink(ctx, "farlink", far); err != nil {
		t.Fatal(err)
	}
	if _, err := ns.AddBucketLink(ctx, "dirlink", other); err != nil {
		t.Fatal(err)
	}

	// natsio creating the same store is a no-op: same stream config.
	is, err := objstore.CreateStore(ctx, c.jsi, objstore.Config{Bucket: "ng", Description: "d"})
	if err != nil {
		t.Fatalf("natsio CreateStore over nats.go's store: %v", err)
	}
	info, err := is.GetInfo(ctx, "dir/file?.bin")
	if err != nil {
		t.Fatal(err)
	}
	if info.NUID != ninfo.NUID || info.Size != ninfo.Size || info.Chunks != ninfo.Chunks || info.Chunks != 11 ||
		info.Digest != ninfo.Digest || info.Description != "desc" || !slices.Equal(slices.Collect(info.Headers.Values("X-Kind")), []string{"a", "b"}) ||
		info.Metadata["m"] != "1" || info.Opts == nil || info.Opts.ChunkSize != 1000 {
		t.Fatalf("natsio GetInfo %+v\nnats.go %+v", info, ninfo)
	}
	if got, err := is.GetBytes(ctx, "dir/file?.bin"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("natsio GetBytes: %v", err)
	}
	if got, err := is.GetString(ctx, "small"); err != nil || got != "tiny" {
		t.Fatalf("small %q %v", got, err)
	}
	if got, err := is.GetBytes(ctx, "link"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("through nats.go link: %v", err)
	}
	if got, err := is.GetString(ctx, "farlink"); err != nil || got != "far away" {
		t.Fatalf("through nats.go cross-store link: %q %v", got, err)
	}
	if _, err := is.Get(ctx, "dirlink"); !errors.Is(err, objstore.ErrLinkToBucket) {
		t.Fatalf("nats.go bucket link: %v", err)
	}
	if _, err := is.GetInfo(ctx, "gone"); !errors.Is(err, objstore.ErrObjectNotFound) {
		t.Fatalf("deleted by nats.go: %v", err)
	}
	var names []string
	for o, err := range is.List(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, o.Name)
	}
	nlist, _ := ns.List(ctx)
	var nnames []string
	for _, o := range nlist {
		nnames = append(nnames, o.Name)
	}
	if !slices.Equal(names, nnames) || len(names) != 5 {
		t.Fatalf("List natsio %v, nats.go %v", names, nnames)
	}
	// natsio replaces a nats.go object: the old chunks are purged.
	if _, err := is.PutString(ctx, "dir/file?.bin", "replaced"); err != nil {
		t.Fatal(err)
	}
	st, _ := c.jsi.Stream(ctx, "OBJ_ng")
	si, _ := st.Info(ctx, jsapi.SubjectsFilter("$O.ng.C."+ninfo.NUID))
	if len(si.State.Subjects) != 0 {
		t.Fatalf("nats.go chunks left after natsio replaced the object: %v", si.State.Subjects)
	}
	if got, _ := ns.GetString(ctx, "dir/file?.bin"); got != "replaced" {
		t.Fatalf("nats.go reads natsio's replacement: %q", got)
	}
}

// TestObjNatsioWritesNatsGoReads: objects with metadata and links written
// by natsio, read by nats.go (which checks the digest itself).
func TestObjNatsioWritesNatsGoReads(t *testing.T) {
	c := start(t)
	ctx := c.ctx
	is, err := objstore.CreateStore(ctx, c.jsi, objstore.Config{Bucket: "io", Description: "d"})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := objstore.CreateStore(ctx, c.jsi, objstore.Config{Bucket: "ioother"})
	data := payload(300_000)
	info, err := is.Put(ctx, objstore.Meta{Name: "model.bin", Description: "desc",
		Headers: proto.HeaderOf(map[string][]string{"X-Kind": {"a"}}), Metadata: map[string]string{"m": "1"}}, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	is.PutString(ctx, "gone", "x")
	is.Delete(ctx, "gone")
	far, _ := other.PutString(ctx, "far", "far away")
	is.AddLink(ctx, "link", info)
	is.AddLink(ctx, "farlink", far)
	is.AddBucketLink(ctx, "dirlink", other)
	is.PutString(ctx, "old-name", "renamed")
	if err := is.UpdateMeta(ctx, "old-name", objstore.Meta{Name: "new-name", Description: "moved"}); err != nil {
		t.Fatal(err)
	}

	ns, err := c.js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "io", Description: "d"})
	if err != nil {
		t.Fatalf("nats.go CreateObjectStore over natsio's store: %v", err)
	}
	ninfo, err := ns.GetInfo(ctx, "model.bin")
	if err != nil {
		t.Fatal(err)
	}
	if ninfo.NUID != info.NUID || ninfo.Size != 300_000 || ninfo.Chunks != 3 || ninfo.Digest != info.Digest ||
		ninfo.Description != "desc" || ninfo.Headers.Get("X-Kind") != "a" || ninfo.Metadata["m"] != "1" ||
		ninfo.Opts == nil || ninfo.Opts.ChunkSize != objstore.DefaultChunkSize {
		t.Fatalf("nats.go GetInfo %+v", ninfo)
	}
	if got, err := ns.GetBytes(ctx, "model.bin"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("nats.go GetBytes: %v", err)
	}
	if got, err := ns.GetBytes(ctx, "link"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("nats.go through natsio link: %v", err)
	}
	if got, err := ns.GetString(ctx, "farlink"); err != nil || got != "far away" {
		t.Fatalf("nats.go through natsio cross-store link: %q %v", got, err)
	}
	if _, err := ns.Get(ctx, "dirlink"); !errors.Is(err, jetstream.ErrCantGetBucket) {
		t.Fatalf("nats.go on natsio bucket link: %v", err)
	}
	if _, err := ns.GetInfo(ctx, "gone"); !errors.Is(err, jetstream.ErrObjectNotFound) {
		t.Fatalf("nats.go on natsio-deleted: %v", err)
	}
	if got, err := ns.GetString(ctx, "new-name"); err != nil || got != "renamed" {
		t.Fatalf("nats.go on natsio-renamed: %q %v", got, err)
	}
	if _, err := ns.GetInfo(ctx, "old-name"); !errors.Is(err, jetstream.ErrObjectNotFound) {
		t.Fatalf("nats.go on the old name: %v", err)
	}
	list, err := ns.List(ctx)
	if err != nil || len(list) != 5 {
		t.Fatalf("nats.go List %d %v", len(list), err)
	}
	// nats.go replaces a natsio object: natsio's old chunks are purged.
	if _, err := ns.PutString(ctx, "model.bin", "replaced"); err != nil {
		t.Fatal(err)
	}
	st, _ := c.jsi.Stream(ctx, "OBJ_io")
	si, _ := st.Info(ctx, jsapi.SubjectsFilter("$O.io.C."+info.NUID))
	if len(si.State.Subjects) != 0 {
		t.Fatalf("natsio chunks left after nats.go replaced the object: %v", si.State.Subjects)
	}
	// A natsio watch sees nats.go's writes.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	seen := make(chan *objstore.Info, 4)
	go func() {
		for o, err := range is.Watch(wctx, objstore.UpdatesOnly()) {
			if err != nil {
				return
			}
			seen <- o
		}
	}()
	if o := <-seen; o != nil {
		t.Fatalf("marker %+v", o)
	}
	ns.PutString(ctx, "from-natsgo", "hello")
	if o := <-seen; o == nil || o.Name != "from-natsgo" || o.Size != 5 {
		t.Fatalf("watched %+v", o)
	}
}

// TestObjSameBytes puts the same objects through both clients: the store
// configs, the meta JSON (but for the NUID and bucket) and the chunks are
// identical.
func TestObjSameBytes(t *testing.T) {
	c := start(t)
	ctx := c.ctx
	ns, err := c.js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "A", TTL: 0, MaxBytes: 1 << 30, Metadata: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	is, err := objstore.CreateStore(ctx, c.jsi, objstore.Config{Bucket: "B", MaxBytes: 1 << 30, Metadata: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	sa, _ := c.jsi.Stream(ctx, "OBJ_A")
	sb, _ := c.jsi.Stream(ctx, "OBJ_B")
	ca, cb := sa.CachedInfo().Config, sb.CachedInfo().Config
	ca.Name, cb.Name = "X", "X"
	ca.Subjects, cb.Subjects = nil, nil
	if a, b := configJSON(t, ca, ""), configJSON(t, cb, ""); a != b {
		t.Fatalf("store configs differ\nnats.go %s\nnatsio  %s", a, b)
	}
	data := payload(2500)
	objects := []struct {
		ng jetstream.ObjectMeta
		io objstore.Meta
	}{
		{jetstream.ObjectMeta{Name: "plain"}, objstore.Meta{Name: "plain"}},
		{jetstream.ObjectMeta{Name: "ü/x?>y", Description: "d", Headers: nats.Header{"H": []string{"1", "2"}},
			Metadata: map[string]string{"b": "2", "a": "1"}, Opts: &jetstream.ObjectMetaOptions{ChunkSize: 1000}},
			objstore.Meta{Name: "ü/x?>y", Description: "d", Headers: proto.HeaderOf(map[string][]string{"H": {"1", "2"}}),
				Metadata: map[string]string{"b": "2", "a": "1"}, Opts: &objstore.MetaOptions{ChunkSize: 1000}}},
		{jetstream.ObjectMeta{Name: "empty"}, objstore.Meta{Name: "empty"}},
	}
	for i, o := range objects {
		d := data
		if o.io.Name == "empty" {
			d = nil
		}
		na, err := ns.Put(ctx, o.ng, bytes.NewReader(d))
		if err != nil {
			t.Fatal(err)
		}
		nb, err := is.Put(ctx, o.io, bytes.NewReader(d))
		if err != nil {
			t.Fatal(err)
		}
		enc := base64.URLEncoding.EncodeToString([]byte(o.io.Name))
		ma, err := sa.GetLastMsgForSubject(ctx, "$O.A.M."+enc)
		if err != nil {
			t.Fatal(err)
		}
		mb, err := sb.GetLastMsgForSubject(ctx, "$O.B.M."+enc)
		if err != nil {
			t.Fatal(err)
		}
		ja := strings.ReplaceAll(strings.ReplaceAll(string(ma.Data), na.NUID, "NUID"), `"bucket":"A"`, `"bucket":"X"`)
		jb := strings.ReplaceAll(strings.ReplaceAll(string(mb.Data), nb.NUID, "NUID"), `"bucket":"B"`, `"bucket":"X"`)
		if ja != jb {
			t.Fatalf("object %d meta differs\nnats.go %s\nnatsio  %s", i, ja, jb)
		}
		if a, b := headers(&ma.Header), headers(&mb.Header); !slices.Equal(a, b) {
			t.Fatalf("meta headers differ: %v %v", a, b)
		}
		if a, b := chunks(t, ctx, sa, "$O.A.C."+na.NUID), chunks(t, ctx, sb, "$O.B.C."+nb.NUID); !slices.EqualFunc(a, b, bytes.Equal) {
			t.Fatalf("object %d chunks differ: %d vs %d", i, len(a), len(b))
		}
		if testing.Verbose() {
			t.Logf("meta %s", jb)
		}
		// Delete markers too.
		ns.Delete(ctx, o.ng.Name)
		is.Delete(ctx, o.io.Name)
		ma, _ = sa.GetLastMsgForSubject(ctx, "$O.A.M."+enc)
		mb, _ = sb.GetLastMsgForSubject(ctx, "$O.B.M."+enc)
		ja = strings.ReplaceAll(strings.ReplaceAll(string(ma.Data), na.NUID, "NUID"), `"bucket":"A"`, `"bucket":"X"`)
		jb = strings.ReplaceAll(strings.ReplaceAll(string(mb.Data), nb.NUID, "NUID"), `"bucket":"B"`, `"bucket":"X"`)
		if ja != jb {
			t.Fatalf("object %d delete marker differs\nnats.go %s\nnatsio  %s", i, ja, jb)
		}
	}
	// Links.
	ta, _ := ns.PutString(ctx, "target", "t")
	tb, _ := is.PutString(ctx, "target", "t")
	la, _ := ns.AddLink(ctx, "lnk", ta)
	lb, _ := is.AddLink(ctx, "lnk", tb)
	enc := base64.URLEncoding.EncodeToString([]byte("lnk"))
	ma, _ := sa.GetLastMsgForSubject(ctx, "$O.A.M."+enc)
	mb, _ := sb.GetLastMsgForSubject(ctx, "$O.B.M."+enc)
	r := strings.NewReplacer(la.NUID, "NUID", lb.NUID, "NUID", `"bucket":"A"`, `"bucket":"X"`, `"bucket":"B"`, `"bucket":"X"`)
	if a, b := r.Replace(string(ma.Data)), r.Replace(string(mb.Data)); a != b {
		t.Fatalf("link meta differs\nnats.go %s\nnatsio  %s", a, b)
	}
}

// chunks reads the payloads on a chunk subject in order.
func chunks(t *testing.T, ctx context.Context, st *jsapi.Stream, subj string) [][]byte {
	var out [][]byte
	for seq := uint64(1); ; {
		m, err := st.GetNextMsgForSubject(ctx, subj, seq)
		if errors.Is(err, jsapi.ErrMsgNotFound) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m.Data)
		seq = m.Sequence + 1
	}
}
