package objstore_test

// Listing a store whose objects were all deleted. The test of a bug
// reported against another client carries the issue in its name
// (docs/reliability.md).

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/natsio/natsio/objstore"
)

// nats.go#1610: listing a store whose objects were all deleted ends
// promptly: nothing without ShowDeleted, only the tombstones with it.
func TestRegressionNatsGo1610ListAllDeletedEnds(t *testing.T) {
	e := newEnv(t)
	s := e.store(t, objstore.Config{Bucket: "alldel"})
	ctx, cancel := context.WithTimeout(e.Ctx, 5*time.Second)
	defer cancel()
	const n = 5
	for i := range n {
		name := fmt.Sprint("o", i)
		if _, err := s.PutString(ctx, name, "data"); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	list := func(opts ...objstore.Opt) int {
		lctx, lcancel := context.WithTimeout(ctx, 2*time.Second)
		defer lcancel()
		k := 0
		for info, err := range s.List(lctx, opts...) {
			if err != nil {
				t.Fatalf("List: %v (hung until the deadline?)", err)
			}
			if !info.Deleted {
				t.Fatalf("deleted object %q listed as live", info.Name)
			}
			k++
		}
		if lctx.Err() != nil {
			t.Fatal("List ran into its deadline")
		}
		return k
	}
	if k := list(); k != 0 {
		t.Fatalf("List of an all-deleted store gave %d objects", k)
	}
	if k := list(objstore.ShowDeleted()); k != n {
		t.Fatalf("List with ShowDeleted gave %d tombstones, want %d", k, n)
	}
}
