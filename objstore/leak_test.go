package objstore_test

import (
	"bytes"
	"context"
	"io"
	"iter"
	"testing"

	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/objstore"
)

// Puts, a full and an abandoned read, listings and watches leave no
// goroutine of natsio running once the connection closes.
func TestNoGoroutineLeak(t *testing.T) {
	testutil.NoLeak(t, nil, func(j testutil.JSEnv) {
		e := &env{j}
		st := e.store(t, objstore.Config{Bucket: "leak"})
		data := bytes.Repeat([]byte("0123456789abcdef"), 8192) // 128 KiB
		opts := &objstore.MetaOptions{ChunkSize: 4096}
		for _, name := range []string{"a", "b"} {
			if _, err := st.Put(e.Ctx, objstore.Meta{Name: name, Opts: opts}, bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := st.GetBytes(e.Ctx, "a"); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("get: %d bytes, %v", len(got), err)
		}
		r, err := st.Get(e.Ctx, "b")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(r, make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
		r.Close() // abandoned midway
		for _, err := range st.List(e.Ctx) {
			if err != nil {
				t.Fatal(err)
			}
		}
		for range st.List(e.Ctx) {
			break
		}
		// waiting for updates: the cancel ends it
		testutil.CancelAfter(e.Ctx, 2, func(ctx context.Context) iter.Seq2[*objstore.Info, error] { return st.Watch(ctx) })
		if err := st.Delete(e.Ctx, "a"); err != nil {
			t.Fatal(err)
		}
	})
}
