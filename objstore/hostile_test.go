package objstore_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/objstore"
)

// storeState is what a crafted meta message must not change: the number of
// messages on each subject of the store's stream and the data of the
// objects that are not under attack.
type storeState struct {
	msgs     uint64
	subjects map[string]uint64
}

func (e *env) state(t *testing.T, bucket string) storeState {
	t.Helper()
	st, err := e.JS.Stream(e.Ctx, "OBJ_"+bucket)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(e.Ctx, jsapi.SubjectsFilter(">"))
	if err != nil {
		t.Fatal(err)
	}
	return storeState{msgs: info.State.Msgs, subjects: info.State.Subjects}
}

func (s storeState) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d messages:", s.msgs)
	for _, k := range slices.Sorted(maps.Keys(s.subjects)) {
		fmt.Fprintf(&b, " %s=%d", k, s.subjects[k])
	}
	return b.String()
}

// A tenant who may publish to $O.<bucket>.M.> stores meta under the name
// "victim" whose nuid is a wildcard, holds dots, or whose name or store is
// another's. Get, Delete and Put of "victim" refuse with ErrMetaMismatch
// (which matches ErrBadObjectMeta), purge nothing and write nothing: the
// stream keeps every message and the other objects read back whole; List
// and Watch skip the forged meta.
func TestHostileMetaRefused(t *testing.T) {
	e := newEnv(t)
	s := e.store(t, objstore.Config{Bucket: "h"})
	ctx := e.Ctx
	small := &objstore.MetaOptions{ChunkSize: 8}
	dataA := []byte("the data of object a, in several chunks")
	a, err := s.Put(ctx, objstore.Meta{Name: "a", Opts: small}, bytes.NewReader(dataA))
	if err != nil {
		t.Fatal(err)
	}
	dataB := []byte("object b's data")
	if _, err := s.Put(ctx, objstore.Meta{Name: "b", Opts: small}, bytes.NewReader(dataB)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutString(ctx, "victim", "the victim's own data"); err != nil {
		t.Fatal(err)
	}
	before := e.state(t, "h")
	t.Logf("stream before: %v", before)

	victimSubj := "$O.h.M." + base64.URLEncoding.EncodeToString([]byte("victim"))
	forge := func(name, bucket, nuid string) {
		t.Helper()
		data, _ := json.Marshal(map[string]any{"name": name, "bucket": bucket, "nuid": nuid,
			"size": 10, "chunks": 1, "mtime": "0001-01-01T00:00:00Z", "digest": a.Digest})
		if _, err := e.JS.Publish(ctx, victimSubj, data, jsapi.Rollup("sub")); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, meta, bucket, nuid string
	}{
		{"nuid >", "victim", "h", ">"},
		{"nuid *", "victim", "h", "*"},
		{"nuid with dots", "victim", "h", a.NUID[:10] + ".*." + a.NUID[12:]},
		{"nuid ending in .>", "victim", "h", a.NUID[:20] + ".>"},
		{"nuid too short", "victim", "h", a.NUID[:21]},
		{"no nuid", "victim", "h", ""},
		{"name of another object", "a", "h", a.NUID},
		{"another store", "victim", "other", a.NUID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forge(c.meta, c.bucket, c.nuid)
			forged := e.state(t, "h")
			if r, err := s.Get(ctx, "victim"); !errors.Is(err, objstore.ErrMetaMismatch) || !errors.Is(err, objstore.ErrBadObjectMeta) {
				if r != nil {
					r.Close()
				}
				t.Errorf("Get: %v; want ErrMetaMismatch", err)
			}
			if _, err := s.GetInfo(ctx, "victim"); !errors.Is(err, objstore.ErrMetaMismatch) {
				t.Errorf("GetInfo: %v; want ErrMetaMismatch", err)
			}
			if err := s.Delete(ctx, "victim"); !errors.Is(err, objstore.ErrMetaMismatch) {
				t.Errorf("Delete: %v; want ErrMetaMismatch", err)
			}
			if _, err := s.PutString(ctx, "victim", "new data"); !errors.Is(err, objstore.ErrMetaMismatch) {
				t.Errorf("Put: %v; want ErrMetaMismatch", err)
			}
			if err := s.UpdateMeta(ctx, "victim", objstore.Meta{Description: "x"}); !errors.Is(err, objstore.ErrMetaMismatch) {
				t.Errorf("UpdateMeta: %v; want ErrMetaMismatch", err)
			}
			after := e.state(t, "h")
			if after.String() != forged.String() {
				t.Errorf("the stream changed:\nforged %v\nafter  %v", forged, after)
			}
			for k, n := range before.subjects {
				if strings.HasPrefix(k, "$O.h.C.") && after.subjects[k] != n {
					t.Errorf("chunks of %s: %d, were %d", k, after.subjects[k], n)
				}
			}
			if got, err := s.GetBytes(ctx, "a"); err != nil || !bytes.Equal(got, dataA) {
				t.Errorf("object a: %q %v", got, err)
			}
			if got, err := s.GetBytes(ctx, "b"); err != nil || !bytes.Equal(got, dataB) {
				t.Errorf("object b: %q %v", got, err)
			}
			var names []string
			for info, err := range s.List(ctx, objstore.ShowDeleted()) {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, info.Name)
			}
			if slices.Sort(names); !slices.Equal(names, []string{"a", "b"}) {
				t.Errorf("List: %q; want a and b (the forged meta skipped)", names)
			}
			t.Logf("stream after Get, Delete, Put: %v", after)
		})
	}
	// The initial values of a watch skip the forged meta too.
	var watched []string
	for info, err := range s.Watch(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if info == nil {
			break
		}
		watched = append(watched, info.Name)
	}
	if slices.Sort(watched); !slices.Equal(watched, []string{"a", "b"}) {
		t.Errorf("Watch: %q; want a and b", watched)
	}
}

// Meta as nats.go and this package write it passes the checks: a NUID
// is 22 characters of 0-9, A-Z, a-z, and links and deleted markers carry
// one too.
func TestMetaOfOwnObjectsAccepted(t *testing.T) {
	e := newEnv(t)
	s := e.store(t, objstore.Config{Bucket: "own"})
	ctx := e.Ctx
	info, err := s.PutString(ctx, "obj", "data")
	if err != nil {
		t.Fatal(err)
	}
	if len(info.NUID) != 22 {
		t.Fatalf("NUID %q", info.NUID)
	}
	if _, err := s.AddLink(ctx, "lnk", info); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetString(ctx, "lnk"); err != nil || got != "data" {
		t.Fatalf("through the link: %q %v", got, err)
	}
	if err := s.Delete(ctx, "lnk"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "obj"); err != nil {
		t.Fatal(err)
	}
	if d, err := s.GetInfo(ctx, "obj", objstore.ShowDeleted()); err != nil || !d.Deleted {
		t.Fatalf("deleted marker: %+v %v", d, err)
	}
	if _, err := s.PutString(ctx, "obj", "again"); err != nil {
		t.Fatalf("Put over a deleted marker: %v", err)
	}
}
