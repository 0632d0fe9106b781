package objstore_test

import (
	"encoding/base64"
	"errors"
	"testing"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/objstore"
)

// A meta planted under a name (by anyone allowed to publish to
// $O.<bucket>.M.>) made Put and Delete of that name fail for good.
// RemoveBadMeta removes it, and only it: afterwards the name takes a new
// object, other objects are whole, and a valid meta is never removed.
func TestHostilePlantedMetaRemovable(t *testing.T) {
	e := newEnv(t)
	s := e.store(t, objstore.Config{Bucket: "planted"})
	ctx := e.Ctx
	if _, err := s.PutString(ctx, "victim", "the victim's data"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutString(ctx, "other", "other data"); err != nil {
		t.Fatal(err)
	}
	subject := "$O.planted.M." + base64.URLEncoding.EncodeToString([]byte("victim"))
	for _, planted := range []string{
		`{"name":"victim","bucket":"planted","nuid":">","size":1,"chunks":1}`,
		`{"name":"someone-else","bucket":"planted","nuid":"0123456789abcdefghijkl"}`,
		`not json`,
	} {
		if _, err := e.JS.Publish(ctx, subject, []byte(planted), jsapi.Rollup("sub")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutString(ctx, "victim", "new"); !errors.Is(err, objstore.ErrBadObjectMeta) {
			t.Fatalf("Put over %s: %v; want ErrBadObjectMeta", planted, err)
		}
		if err := s.Delete(ctx, "victim"); !errors.Is(err, objstore.ErrBadObjectMeta) {
			t.Fatalf("Delete over %s: %v; want ErrBadObjectMeta", planted, err)
		}
		if err := s.RemoveBadMeta(ctx, "victim"); err != nil {
			t.Fatalf("RemoveBadMeta over %s: %v", planted, err)
		}
		if _, err := s.GetInfo(ctx, "victim", objstore.ShowDeleted()); !errors.Is(err, objstore.ErrObjectNotFound) {
			t.Fatalf("after RemoveBadMeta: %v; want ErrObjectNotFound", err)
		}
		if _, err := s.PutString(ctx, "victim", "new"); err != nil {
			t.Fatalf("Put after RemoveBadMeta: %v", err)
		}
		if got, err := s.GetString(ctx, "victim"); err != nil || got != "new" {
			t.Fatalf("victim after Put: %q %v", got, err)
		}
		// A valid meta is not removed.
		if err := s.RemoveBadMeta(ctx, "victim"); !errors.Is(err, objstore.ErrObjectExists) {
			t.Fatalf("RemoveBadMeta of a valid object: %v; want ErrObjectExists", err)
		}
		if got, err := s.GetString(ctx, "victim"); err != nil || got != "new" {
			t.Fatalf("victim after refusing to remove its meta: %q %v", got, err)
		}
	}
	if got, err := s.GetString(ctx, "other"); err != nil || got != "other data" {
		t.Fatalf("other object: %q %v", got, err)
	}
	if err := s.Delete(ctx, "victim"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveBadMeta(ctx, "never"); !errors.Is(err, objstore.ErrObjectNotFound) {
		t.Fatalf("RemoveBadMeta of a name without meta: %v", err)
	}
	if err := s.RemoveBadMeta(ctx, ""); !errors.Is(err, objstore.ErrNameRequired) {
		t.Fatalf("RemoveBadMeta(\"\"): %v", err)
	}
}
