package objstore_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/objstore"
)

// A Get read through costs the API requests of an ordered read (a create,
// and a delete when the read ends; the object's info is read with a
// direct get); a Reader closed before its first Read, or half way, leaves
// no consumer on the stream.
func TestGetRequests(t *testing.T) {
	e := newEnv(t)
	s := e.store(t, objstore.Config{Bucket: "req"})
	data := bytes.Repeat([]byte("x"), 300_000)
	if _, err := s.PutBytes(e.Ctx, "o", data); err != nil {
		t.Fatal(err)
	}
	total := func() uint64 { return testutil.APITotal(t, e.Server) }
	consumers := func() int {
		t.Helper()
		n := 0
		for _, err := range e.JS.ConsumerNames(e.Ctx, "OBJ_req") {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		return n
	}
	before := total()
	got, err := s.GetBytes(e.Ctx, "o")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("GetBytes: %d bytes, %v", len(got), err)
	}
	if n := total() - before; n != 2 {
		t.Fatalf("a Get read through: %d JetStream API requests, want 2", n)
	}
	r, err := s.Get(e.Ctx, "o")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if n := consumers(); n != 0 {
		t.Fatalf("%d consumers left by a Reader closed unread", n)
	}
	r, err = s.Get(e.Ctx, "o")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(r, make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if n := consumers(); n != 0 {
		t.Fatalf("%d consumers left by a Reader closed half read", n)
	}
}
