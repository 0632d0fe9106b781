package objstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/objstore"
	"github.com/natsio/natsio/proto"
)

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return "SHA-256=" + base64.URLEncoding.EncodeToString(s[:])
}

func TestNoIOOnInvalidInput(t *testing.T) {
	e := newEnv(t)
	s := e.store(t, objstore.Config{Bucket: "v"})
	e.Conn.Close()
	ctx := context.Background()
	for _, n := range []string{"", "a.b", "a b", "a*"} {
		if _, err := objstore.CreateStore(ctx, e.JS, objstore.Config{Bucket: n}); !errors.Is(err, objstore.ErrInvalidStoreName) {
			t.Fatalf("CreateStore(%q): %v", n, err)
		}
		if _, err := objstore.Bind(ctx, e.JS, n); !errors.Is(err, objstore.ErrInvalidStoreName) {
			t.Fatalf("Bind(%q): %v", n, err)
		}
		if err := objstore.DeleteStore(ctx, e.JS, n); !errors.Is(err, objstore.ErrInvalidStoreName) {
			t.Fatalf("DeleteStore(%q): %v", n, err)
		}
	}
	if _, err := s.PutBytes(ctx, "", []byte("x")); !errors.Is(err, objstore.ErrNameRequired) {
		t.Fatalf("Put without name: %v", err)
	}
	if _, err := s.Put(ctx, objstore.Meta{Name: "x", Opts: &objstore.MetaOptions{Link: &objstore.Link{Bucket: "v"}}}, nil); !errors.Is(err, objstore.ErrLinkNotAllowed) {
		t.Fatalf("Put with link: %v", err)
	}
	if _, err := s.GetInfo(ctx, ""); !errors.Is(err, objstore.ErrNameRequired) {
		t.Fatalf("GetInfo without name: %v", err)
	}
	if _, err := s.AddLink(ctx, "l", nil); !errors.Is(err, objstore.ErrObjectRequired) {
		t.Fatalf("AddLink nil: %v", err)
	}
	if _, err := s.AddLink(ctx, "l", &objstore.Info{Meta: objstore.Meta{Name: "o"}, Deleted: true}); !errors.Is(err, objstore.ErrNoLinkToDeleted) {
		t.Fatalf("AddLink deleted: %v", err)
	}
	link := &objstore.Info{Meta: objstore.Meta{Name: "o", Opts: &objstore.MetaOptions{Link: &objstore.Link{Bucket: "v", Name: "x"}}}}
	if _, err := s.AddLink(ctx, "l", link); !errors.Is(err, objstore.ErrNoLinkToLink) {
		t.Fatalf("AddLink to link: %v", err)
	}
	for _, err := range s.Watch(ctx, objstore.IncludeHistory(), objstore.UpdatesOnly()) {
		if !errors.Is(err, conn.ErrInvalidOption) {
			t.Fatalf("Watch options: %v", err)
		}
	}
}

func TestStoreLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := e.Ctx
	cfg := objstore.Config{Bucket: "art", Description: "d", TTL: time.Hour, MaxBytes: 1 << 30, Metadata: map[string]string{"k": "v"}}
	s := e.store(t, cfg)
	if s.Name() != "art" {
		t.Fatal(s.Name())
	}
	if _, err := objstore.CreateStore(ctx, e.JS, cfg); err != nil {
		t.Fatalf("idempotent create: %v", err)
	}
	other := cfg
	other.Description = "other"
	if _, err := objstore.CreateStore(ctx, e.JS, other); !errors.Is(err, objstore.ErrBucketExists) {
		t.Fatalf("create with other config: %v", err)
	}
	st, _ := e.JS.Stream(ctx, "OBJ_art")
	c := st.CachedInfo().Config
	if !slices.Equal(c.Subjects, []string{"$O.art.C.>", "$O.art.M.>"}) || c.Discard != jsapi.DiscardNew || !c.AllowRollup ||
		!c.AllowDirect || c.MaxAge != time.Hour || c.MaxBytes != 1<<30 || c.Description != "d" {
		t.Fatalf("stream config %+v", c)
	}
	status, err := s.Status(ctx)
	if err != nil || status.Bucket != "art" || status.TTL != time.Hour || status.Sealed || status.Metadata["k"] != "v" || status.Replicas != 1 {
		t.Fatalf("status %+v %v", status, err)
	}
	if _, err := objstore.UpdateStore(ctx, e.JS, other); err != nil {
		t.Fatal(err)
	}
	if status, _ = s.Status(ctx); status.Description != "other" {
		t.Fatalf("after update %+v", status)
	}
	if _, err := objstore.UpdateStore(ctx, e.JS, objstore.Config{Bucket: "nope"}); !errors.Is(err, objstore.ErrBucketNotFound) {
		t.Fatalf("update missing: %v", err)
	}
	if _, err := objstore.CreateOrUpdateStore(ctx, e.JS, objstore.Config{Bucket: "two", Storage: jsapi.StorageMemory, Compression: false}); err != nil {
		t.Fatal(err)
	}
	testutil.CheckStores(t, e.JSEnv, testutil.Stores[*objstore.Store, *objstore.Status]{
		Bind: objstore.Bind, Names: objstore.StoreNames, Statuses: objstore.Stores,
		Name: func(s *objstore.Status) string { return s.Bucket }, NotFound: objstore.ErrBucketNotFound,
	}, "art", "two")
	// Seal: read-only for good.
	if _, err := s.PutString(ctx, "before", "x"); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal(ctx); err != nil {
		t.Fatal(err)
	}
	if status, _ = s.Status(ctx); !status.Sealed {
		t.Fatal("not sealed")
	}
	if _, err := s.PutString(ctx, "after", "x"); err == nil {
		t.Fatal("Put into a sealed store succeeded")
	}
	if got, err := s.GetString(ctx, "before"); err != nil || got != "x" {
		t.Fatalf("read from sealed store: %q %v", got, err)
	}
	if err := objstore.DeleteStore(ctx, e.JS, "art"); err != nil {
		t.Fatal(err)
	}
	if err := objstore.DeleteStore(ctx, e.JS, "art"); !errors.Is(err, objstore.ErrBucketNotFound) {
		t.Fatalf("delete again: %v", err)
	}
	if _, err := s.GetInfo(ctx, "before"); !errors.Is(err, objstore.ErrBucketNotFound) {
		t.Fatalf("GetInfo in a deleted store: %v", err)
	}
	if _, err := s.Status(ctx); !errors.Is(err, objstore.ErrBucketNotFound) {
		t.Fatalf("Status of a deleted store: %v", err)
	}
}

func TestPutGetAndMetaLayout(t *testing.T) {
	e := newEnv(t)
	s := e.store(t, objstore.Config{Bucket: "b"})
	ctx := e.Ctx
	data := bytes.Repeat([]byte("0123456789"), 105) // 1050 bytes
	// A name whose base64 needs padding and uses the URL alphabet.
	name := "dir/ü?>~x"
	meta := objstore.Meta{Name: name, Description: "d", Headers: proto.HeaderOf(map[string][]string{"K": {"v1", "v2"}}),
		Metadata: map[string]string{"m": "1"}, Opts: &objstore.MetaOptions{ChunkSize: 100}}
	before := time.Now().Add(-time.Second)
	info, err := s.Put(ctx, meta, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != 1050 || info.Chunks != 11 || info.Digest != digest(data) || info.NUID == "" || info.Bucket != "b" ||
		info.Name != name || info.Opts.ChunkSize != 100 || info.ModTime.Before(before) {
		t.Fatalf("put info %+v", info)
	}
	got, err := s.GetInfo(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if got.Size != 1050 || got.Chunks != 11 || got.Digest != info.Digest || got.NUID != info.NUID ||
		got.Description != "d" || !slices.Equal(slices.Collect(got.Headers.Values("K")), []string{"v1", "v2"}) || got.Metadata["m"] != "1" ||
		got.ModTime.Before(before) || got.Deleted {
		t.Fatalf("GetInfo %+v", got)
	}
	// The meta message, byte for byte.
	st, _ := e.JS.Stream(ctx, "OBJ_b")
	subj := "$O.b.M." + base64.URLEncoding.EncodeToString([]byte(name))
	if !strings.HasSuffix(subj, "=") {
		t.Fatalf("test name should need padding: %s", subj)
	}
	raw, err := st.GetLastMsgForSubject(ctx, subj)
	if err != nil {
		t.Fatalf("meta at %s: %v", subj, err)
	}
	want := `{"name":"dir/ü?\u003e~x","description":"d","headers":{"K":["v1","v2"]},"metadata":{"m":"1"},` +
		`"options":{"max_chunk_size":100},"bucket":"b","nuid":"` + info.NUID + `","size":1050,` +
		`"mtime":"0001-01-01T00:00:00Z","chunks":11,"digest":"` + digest(data) + `"}`
	if string(raw.Data) != want {
		t.Fatalf("meta JSON\n got %s\nwant %s", raw.Data, want)
	}
	if raw.Header.Get("Nats-Rollup") != "sub" {
		t.Fatalf("meta headers %q", raw.Header)
	}
	if n := e.chunkMsgs(t, "b")["$O.b.C."+info.NUID]; n != 11 {
		t.Fatalf("%d chunk messages", n)
	}
	// Reading back.
	r, err := s.Get(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if r.Info().Size != 1050 {
		t.Fatal(r.Info())
	}
	back, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(back, data) {
		t.Fatalf("read %d bytes, %v", len(back), err)
	}
	if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("read after EOF: %d %v", n, err)
	}
	r.Close()
	if b, err := s.GetBytes(ctx, name); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("GetBytes %v", err)
	}
	// Small and empty objects; the default chunk size is stored.
	if info, err := s.PutString(ctx, "small", "hi"); err != nil || info.Chunks != 1 || info.Opts.ChunkSize != objstore.DefaultChunkSize {
		t.Fatalf("PutString %+v %v", info, err)
	}
	if got, err := s.GetString(ctx, "small"); err != nil || got != "hi" {
		t.Fatalf("GetString %q %v", got, err)
	}
	empty, err := s.PutBytes(ctx, "empty", nil)
	if err != nil || empty.Size != 0 || empty.Chunks != 0 || empty.Digest != digest(nil) {
		t.Fatalf("empty %+v %v", empty, err)
	}
	if b, err := s.GetBytes(ctx, "empty"); err != nil || len(b) != 0 {
		t.Fatalf("empty read %q %v", b, err)
	}
	// An object of exactly n chunks.
	exact, err := s.Put(ctx, objstore.Meta{Name: "exact", Opts: &objstore.MetaOptions{ChunkSize: 10}}, bytes.NewReader(data[:100]))
	if err != nil || exact.Chunks != 10 || exact.Size != 100 {
		t.Fatalf("exact %+v %v", exact, err)
	}
	if _, err := s.GetInfo(ctx, "nothing"); !errors.Is(err, objstore.ErrObjectNotFound) {
		t.Fatalf("GetInfo missing: %v", err)
	}
	if _, err := s.Get(ctx, "nothing"); !errors.Is(err, objstore.ErrObjectNotFound) {
		t.Fatalf("Get missing: %v", err)
	}
	if _, err := s.Put(ctx, objstore.Meta{Name: "huge", Opts: &objstore.MetaOptions{ChunkSize: 64 << 20}}, bytes.NewReader(data)); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("chunk above max payload: %v", err)
	}
}

func TestReplacePurgesOldChunks(t *testing.T) {
	e := newEnv(t)
	s := e.store(t, objstore.Config{Bucket: "r"})
	ctx := e.Ctx
	opts := &objstore.MetaOptions{ChunkSize: 16}
	first, err := s.Put(ctx, objstore.Meta{Name: "x", Opts: opts}, strings.NewReader(strings.Repeat("a", 100)))
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.Put(ctx, objstore.Meta{Name: "x", Opts: opts}, strings.NewReader(strings.Repeat("b", 50)))
	if err != nil {
		t.Fatal(err)
	}
	subjects := e.chunkMsgs(t, "r")
	if len(subjects) != 1 || subjects["$O.r.C."+second.NUID] != 4 || subjects["$O.r.C."+first.NUID] != 0 {
		t.Fatalf("chunk subjects after replace: %v", subjects)
	}
	if got, _ := s.GetString(ctx, "x"); got != strings.Repeat("b", 50) {
		t.Fatalf("replaced data %q", got)
	}
	// Only one meta message per name.
	st, _ := e.JS.Stream(ctx, "OBJ_r")
	info, _ := st.Info(ctx, jsapi.SubjectsFilter("$O.r.M.>"))
	if len(info.State.Subjects) != 1 || info.State.Msgs != 5 {
		t.Fatalf("stream after replace: %d msgs, meta %v", info.State.Msgs, info.State.Subjects)
	}
}

// TestInterruptedPutLeavesNothing: a reader failing midway, a cancelled context and a
// full store all leave no chunk and no object, and keep a replaced
// object intact.
func TestInterruptedPutLeavesNothing(t *testing.T) {
	e := newEnv(t)
	s := e.store(t, objstore.Config{Bucket: "i", MaxBytes: 2 << 20})
	ctx := e.Ctx
	orig, err := s.PutString(ctx, "kept", "original")
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string) {
		t.Helper()
		subjects := e.chunkMsgs(t, "i")
		if len(subjects) != 1 || subjects["$O.i.C."+orig.NUID] != 1 {
			t.Fatalf("%s: chunk subjects left %v", name, subjects)
		}
		for info, err := range s.List(ctx, objstore.ShowDeleted()) {
			if err != nil || info.Name != "kept" {
				t.Fatalf("%s: listed %+v %v", name, info, err)
			}
		}
		if got, err := s.GetString(ctx, "kept"); err != nil || got != "original" {
			t.Fatalf("%s: replaced object %q %v", name, got, err)
		}
	}
	opts := &objstore.MetaOptions{ChunkSize: 1024}

	// The reader fails after 10 chunks (a window is in flight).
	_, err = s.Put(ctx, objstore.Meta{Name: "new", Opts: opts}, &failingReader{r: newRand(1, 1<<20), n: 10 * 1024, err: errBroken})
	if !errors.Is(err, errBroken) {
		t.Fatalf("broken reader: %v", err)
	}
	if _, err := s.GetInfo(ctx, "new", objstore.ShowDeleted()); !errors.Is(err, objstore.ErrObjectNotFound) {
		t.Fatalf("partial object visible: %v", err)
	}
	check("reader error")
	_, err = s.Put(ctx, objstore.Meta{Name: "kept", Opts: opts}, &failingReader{r: newRand(1, 1<<20), n: 5000, err: errBroken})
	if !errors.Is(err, errBroken) {
		t.Fatalf("broken reader on replace: %v", err)
	}
	check("reader error on replace")

	// The context ends midway.
	cctx, cancel := context.WithCancel(ctx)
	_, err = s.Put(cctx, objstore.Meta{Name: "new", Opts: opts}, &cancelReader{r: newRand(2, 1<<20), after: 20 * 1024, cancel: cancel})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled put: %v", err)
	}
	check("cancelled context")

	// The store fills up.
	_, err = s.Put(ctx, objstore.Meta{Name: "big", Opts: opts}, newRand(3, 4<<20))
	var ae *jsapi.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("put beyond MaxBytes: %v", err)
	}
	check("store full")
}

type cancelReader struct {
	r      io.Reader
	after  int
	cancel func()
}

func (c *cancelReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.after -= n; c.after <= 0 {
		c.cancel()
	}
	return n, err
}

func TestDelete(t *testing.T) {
	e := newEnv(t)
	s := e.store(t, objstore.Config{Bucket: "d"})
	ctx := e.Ctx
	info, _ := s.Put(ctx, objstore.Meta{Name: "x", Opts: &objstore.MetaOptions{ChunkSize: 4}}, strings.NewReader("0123456789"))
	if err := s.Delete(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetInfo(ctx, "x"); !errors.Is(err, objstore.ErrObjectNotFound) {
		t.Fatalf("GetInfo deleted: %v", err)
	}
	del, err := s.GetInfo(ctx, "x", objstore.ShowDeleted())
	if err != nil || !del.Deleted || del.Size != 0 || del.Chunks != 0 || del.Digest != "" || del.NUID != info.NUID {
		t.Fatalf("deleted info %+v %v", del, err)
	}
	if n := len(e.chunkMsgs(t, "d")); n != 0 {
		t.Fatalf("%d chunk subjects after delete", n)
	}
	if _, err := s.Get(ctx, "x"); !errors.Is(err, objstore.ErrObjectNotFound) {
		t.Fatalf("Get deleted: %v", err)
	}
	if b, err := s.GetBytes(ctx, "x", objstore.ShowDeleted()); err != nil || len(b) != 0 {
		t.Fatalf("Get deleted with ShowDeleted: %q %v", b, err)
	}
	if err := s.Delete(ctx, "never"); !errors.Is(err, objstore.ErrObjectNotFound) {
		t.Fatalf("Delete missing: %v", err)
	}
	// A deleted name can be put again.
	if _, err := s.PutString(ctx, "x", "again"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetString(ctx, "x"); got != "again" {
		t.Fatalf("put after delete %q", got)
	}
}

func TestLinks(t *testing.T) {
	e := newEnv(t)
	ctx := e.Ctx
	s := e.store(t, objstore.Config{Bucket: "a"})
	other := e.store(t, objstore.Config{Bucket: "o"})
	obj, _ := s.PutString(ctx, "obj", "payload")
	far, _ := other.PutString(ctx, "far", "far away")

	l, err := s.AddLink(ctx, "link", obj)
	if err != nil {
		t.Fatal(err)
	}
	if !l.IsLink() || l.Opts.Link.Bucket != "a" || l.Opts.Link.Name != "obj" || l.NUID == "" {
		t.Fatalf("link info %+v", l)
	}
	r, err := s.Get(ctx, "link")
	if err != nil {
		t.Fatal(err)
	}
	if r.Info().Name != "obj" {
		t.Fatalf("link reader info %+v", r.Info())
	}
	if b, _ := io.ReadAll(r); string(b) != "payload" {
		t.Fatalf("through link %q", b)
	}
	r.Close()
	li, _ := s.GetInfo(ctx, "link")
	if !li.IsLink() {
		t.Fatal("GetInfo of a link")
	}
	if _, err := s.AddLink(ctx, "l2", li); !errors.Is(err, objstore.ErrNoLinkToLink) {
		t.Fatalf("link to link: %v", err)
	}
	if _, err := s.AddLink(ctx, "obj", far); !errors.Is(err, objstore.ErrObjectExists) {
		t.Fatalf("link over an object: %v", err)
	}
	// A link is replaced by a link, across stores.
	if _, err := s.AddLink(ctx, "link", far); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetString(ctx, "link"); err != nil || got != "far away" {
		t.Fatalf("cross-store link %q %v", got, err)
	}
	bl, err := s.AddBucketLink(ctx, "dir", other)
	if err != nil || bl.Opts.Link.Bucket != "o" || bl.Opts.Link.Name != "" {
		t.Fatalf("bucket link %+v %v", bl, err)
	}
	if _, err := s.Get(ctx, "dir"); !errors.Is(err, objstore.ErrLinkToBucket) {
		t.Fatalf("Get of a bucket link: %v", err)
	}
	// Deleting a link keeps its target.
	if err := s.Delete(ctx, "link"); err != nil {
		t.Fatal(err)
	}
	if got, _ := other.GetString(ctx, "far"); got != "far away" {
		t.Fatal("target gone with its link")
	}
}

func TestUpdateMeta(t *testing.T) {
	e := newEnv(t)
	s := e.store(t, objstore.Config{Bucket: "u"})
	ctx := e.Ctx
	orig, _ := s.PutString(ctx, "a", "data")
	s.PutString(ctx, "b", "other")
	if err := s.UpdateMeta(ctx, "a", objstore.Meta{Description: "new", Headers: proto.HeaderOf(map[string][]string{"H": {"1"}}), Metadata: map[string]string{"x": "y"}}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetInfo(ctx, "a")
	if got.Description != "new" || got.Headers.Get("H") != "1" || got.Metadata["x"] != "y" || got.NUID != orig.NUID || got.Digest != orig.Digest {
		t.Fatalf("updated %+v", got)
	}
	if err := s.UpdateMeta(ctx, "a", objstore.Meta{Name: "b"}); !errors.Is(err, objstore.ErrObjectExists) {
		t.Fatalf("rename onto b: %v", err)
	}
	if err := s.UpdateMeta(ctx, "a", objstore.Meta{Name: "c", Description: "renamed"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetInfo(ctx, "a", objstore.ShowDeleted()); !errors.Is(err, objstore.ErrObjectNotFound) {
		t.Fatalf("old name after rename: %v", err)
	}
	if got, err := s.GetString(ctx, "c"); err != nil || got != "data" {
		t.Fatalf("renamed data %q %v", got, err)
	}
	if err := s.UpdateMeta(ctx, "a", objstore.Meta{Description: "x"}); !errors.Is(err, objstore.ErrUpdateMetaDeleted) {
		t.Fatalf("update missing: %v", err)
	}
	s.Delete(ctx, "b")
	if err := s.UpdateMeta(ctx, "b", objstore.Meta{Description: "x"}); !errors.Is(err, objstore.ErrUpdateMetaDeleted) {
		t.Fatalf("update deleted: %v", err)
	}
	// Renaming onto a deleted name is fine.
	if err := s.UpdateMeta(ctx, "c", objstore.Meta{Name: "b"}); err != nil {
		t.Fatalf("rename onto deleted: %v", err)
	}
}

func TestCorruptionDetected(t *testing.T) {
	e := newEnv(t)
	s := e.store(t, objstore.Config{Bucket: "c"})
	ctx := e.Ctx
	info, _ := s.Put(ctx, objstore.Meta{Name: "x", Opts: &objstore.MetaOptions{ChunkSize: 8}}, strings.NewReader("some data to check"))
	// Rewrite the meta with a wrong digest, then with a wrong size.
	bad := *info
	bad.ModTime = time.Time{}
	bad.Digest = digest([]byte("other"))
	publishMeta(t, e, "c", &bad)
	if _, err := s.GetBytes(ctx, "x"); !errors.Is(err, objstore.ErrDigestMismatch) {
		t.Fatalf("wrong digest: %v", err)
	}
	bad.Digest, bad.Size = info.Digest, info.Size+1
	publishMeta(t, e, "c", &bad)
	if _, err := s.GetBytes(ctx, "x"); !errors.Is(err, objstore.ErrSizeMismatch) {
		t.Fatalf("wrong size: %v", err)
	}
	bad.Size = info.Size - 1
	publishMeta(t, e, "c", &bad)
	if _, err := s.GetBytes(ctx, "x"); !errors.Is(err, objstore.ErrSizeMismatch) {
		t.Fatalf("short size: %v", err)
	}
}

func publishMeta(t *testing.T, e *env, bucket string, info *objstore.Info) {
	t.Helper()
	data := fmt.Appendf(nil, `{"name":%q,"bucket":%q,"nuid":%q,"size":%d,"mtime":"0001-01-01T00:00:00Z","chunks":%d,"digest":%q,"options":{"max_chunk_size":8}}`,
		info.Name, info.Bucket, info.NUID, info.Size, info.Chunks, info.Digest)
	if _, err := e.JS.Publish(e.Ctx, "$O."+bucket+".M."+base64.URLEncoding.EncodeToString([]byte(info.Name)), data, jsapi.Rollup("sub")); err != nil {
		t.Fatal(err)
	}
}

func TestFiles(t *testing.T) {
	e := newEnv(t)
	s := e.store(t, objstore.Config{Bucket: "f"})
	dir := t.TempDir()
	src := filepath.Join(dir, "report.bin")
	data := bytes.Repeat([]byte("report "), 50000)
	if err := os.WriteFile(src, data, 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := s.PutFile(e.Ctx, "report.bin", src)
	if err != nil || info.Size != uint64(len(data)) {
		t.Fatalf("PutFile %+v %v", info, err)
	}
	dst := filepath.Join(dir, "copy.bin")
	if err := s.GetFile(e.Ctx, "report.bin", dst); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); !bytes.Equal(b, data) {
		t.Fatal("file content differs")
	}
	if _, err := s.PutFile(e.Ctx, "x", filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("PutFile missing: %v", err)
	}
	// A failed GetFile leaves neither the target nor a temporary file.
	if err := s.GetFile(e.Ctx, "missing", filepath.Join(dir, "none.bin")); !errors.Is(err, objstore.ErrObjectNotFound) {
		t.Fatalf("GetFile missing: %v", err)
	}
	bad := *info
	bad.Digest = digest([]byte("x"))
	bad.Name = "report.bin"
	data2 := fmt.Appendf(nil, `{"name":"report.bin","bucket":"f","nuid":%q,"size":%d,"mtime":"0001-01-01T00:00:00Z","chunks":%d,"digest":%q}`,
		info.NUID, info.Size, info.Chunks, bad.Digest)
	e.JS.Publish(e.Ctx, "$O.f.M."+base64.URLEncoding.EncodeToString([]byte("report.bin")), data2, jsapi.Rollup("sub"))
	if err := s.GetFile(e.Ctx, "report.bin", filepath.Join(dir, "corrupt.bin")); !errors.Is(err, objstore.ErrDigestMismatch) {
		t.Fatalf("GetFile corrupt: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("files left: %v", entries)
	}
}

func TestListAndWatch(t *testing.T) {
	e := newEnv(t)
	s := e.store(t, objstore.Config{Bucket: "lw"})
	ctx := e.Ctx
	for info, err := range s.List(ctx) {
		t.Fatalf("empty store listed %v %v", info, err)
	}
	s.PutString(ctx, "a", "1")
	s.PutString(ctx, "b", "2")
	s.PutString(ctx, "a", "3")
	s.PutString(ctx, "gone", "x")
	s.Delete(ctx, "gone")
	names := func(opts ...objstore.Opt) []string {
		var out []string
		for info, err := range s.List(ctx, opts...) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, info.Name)
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{"b", "a"}) {
		t.Fatalf("List %v", got)
	}
	if got := names(objstore.ShowDeleted()); !slices.Equal(got, []string{"b", "a", "gone"}) {
		t.Fatalf("List with deleted %v", got)
	}

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next, stop := pull(s.Watch(wctx))
	defer stop()
	for _, want := range []string{"b", "a", "gone"} {
		info, err, _ := next()
		if err != nil || info == nil || info.Name != want || info.ModTime.IsZero() {
			t.Fatalf("watch initial %+v %v, want %s", info, err, want)
		}
	}
	if info, err, _ := next(); info != nil || err != nil {
		t.Fatalf("want the marker, got %+v %v", info, err)
	}
	s.PutString(ctx, "c", "new")
	if info, _, _ := next(); info == nil || info.Name != "c" || info.Size != 3 {
		t.Fatalf("watch update %+v", info)
	}
	s.Delete(ctx, "c")
	if info, _, _ := next(); info == nil || info.Name != "c" || !info.Deleted {
		t.Fatalf("watch delete %+v", info)
	}

	// UpdatesOnly starts with the marker; IgnoreDeletes skips deletes.
	uctx, ucancel := context.WithCancel(ctx)
	defer ucancel()
	unext, ustop := pull(s.Watch(uctx, objstore.UpdatesOnly(), objstore.IgnoreDeletes()))
	defer ustop()
	if info, err, _ := unext(); info != nil || err != nil {
		t.Fatalf("updates-only marker %+v %v", info, err)
	}
	// (A meta replaced by a rollup before the watch read it is gone, so
	// each step is awaited.)
	s.PutString(ctx, "d", "x")
	if info, _, _ := unext(); info == nil || info.Name != "d" || info.Deleted {
		t.Fatalf("updates-only %+v, want d", info)
	}
	s.Delete(ctx, "d")
	s.PutString(ctx, "e", "y")
	if info, _, _ := unext(); info == nil || info.Name != "e" || info.Deleted {
		t.Fatalf("updates-only %+v, want e", info)
	}
	// IncludeHistory shows every meta revision still stored: rollups keep
	// one per name.
	hctx, hcancel := context.WithCancel(ctx)
	defer hcancel()
	hnext, hstop := pull(s.Watch(hctx, objstore.IncludeHistory()))
	defer hstop()
	n := 0
	for {
		info, err, _ := hnext()
		if err != nil {
			t.Fatal(err)
		}
		if info == nil {
			break
		}
		n++
	}
	if n != 6 {
		t.Fatalf("history watch yielded %d", n)
	}
}

func TestObjWatchSurvivesRestart(t *testing.T) {
	e := newEnv(t)
	s := e.store(t, objstore.Config{Bucket: "rs"})
	ctx := e.Ctx
	s.PutString(ctx, "before", "1")
	reconnected := make(chan time.Time, 2)
	defer e.Conn.OnReconnect(func() { reconnected <- time.Now() })()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next, stop := pull(s.Watch(wctx))
	defer stop()
	if info, _, _ := next(); info == nil || info.Name != "before" {
		t.Fatalf("initial %+v", info)
	}
	if info, err, _ := next(); info != nil || err != nil {
		t.Fatalf("marker %+v %v", info, err)
	}
	if err := e.Server.Restart(); err != nil {
		t.Fatal(err)
	}
	t0 := <-reconnected
	if _, err := s.PutString(ctx, "after", "2"); err != nil {
		t.Fatal(err)
	}
	info, err, _ := next()
	if err != nil || info == nil || info.Name != "after" {
		t.Fatalf("after restart %+v %v", info, err)
	}
	if d := time.Since(t0); d >= 2*time.Second {
		t.Fatalf("resumed %v after the reconnect", d)
	}
	// Nothing is delivered twice.
	s.PutString(ctx, "last", "3")
	if info, _, _ := next(); info == nil || info.Name != "last" {
		t.Fatalf("next %+v", info)
	}
}

// TestReaderClose closes a reader from another goroutine while it is
// being read: the read ends, nothing races, and the consumer is removed.
func TestReaderClose(t *testing.T) {
	e := newEnv(t)
	s := e.store(t, objstore.Config{Bucket: "rc", Storage: jsapi.StorageMemory})
	if _, err := s.Put(e.Ctx, objstore.Meta{Name: "x"}, newRand(4, 8<<20)); err != nil {
		t.Fatal(err)
	}
	r, err := s.Get(e.Ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1000)
	if _, err := io.ReadFull(r, buf); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		for {
			if _, err := r.Read(buf); err != nil {
				done <- err
				return
			}
		}
	}()
	r.Close()
	// Usually the read is cut short; on a fast host it may have finished.
	if err := <-done; err == nil {
		t.Fatal("read went on after Close")
	}
	if _, err := r.Read(buf); err == nil {
		t.Fatal("Read after Close succeeded")
	}
	st, _ := e.JS.Stream(e.Ctx, "OBJ_rc")
	if n := st.CachedInfo().State.Consumers; n != 0 {
		t.Fatalf("%d consumers after Close", n)
	}
}

// TestMetaHeadersJSON: an object's headers are stored as nats.go stores
// its nats.Header (a JSON object of each key to its values, keys sorted),
// are left out when there are none, and read back from that shape.
func TestMetaHeadersJSON(t *testing.T) {
	meta := objstore.Meta{Name: "o", Headers: proto.HeaderOf(map[string][]string{"b": {"2"}, "X-Kind": {"a", "b"}})}
	b, err := json.Marshal(objstore.Info{Meta: meta, Bucket: "B"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), `{"name":"o","headers":{"X-Kind":["a","b"],"b":["2"]},"bucket":"B",`) {
		t.Fatalf("meta JSON %s", b)
	}
	b, err = json.Marshal(objstore.Info{Meta: objstore.Meta{Name: "o"}, Bucket: "B"})
	if err != nil || strings.Contains(string(b), "headers") {
		t.Fatalf("meta JSON without headers: %s %v", b, err)
	}
	var info objstore.Info
	if err := json.Unmarshal([]byte(`{"name":"o","headers":{"H":["1","2"],"A":["x"]},"bucket":"B"}`), &info); err != nil {
		t.Fatal(err)
	}
	var got []string
	for k, v := range info.Headers.All() {
		got = append(got, k+"="+v)
	}
	if !slices.Equal(got, []string{"A=x", "H=1", "H=2"}) {
		t.Fatalf("headers read back %q", got)
	}
}
