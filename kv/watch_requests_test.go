package kv_test

import (
	"testing"

	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/kv"
)

// The JetStream API requests of a watch: those of the one ordered
// consumer it reads from when Watch is called (a create, a delete when the
// watch ends, and a stream info before them for UpdatesOnly), whether it
// ends at the marker or later.
func TestWatchRequests(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "req"})
	mustPut(t, b, "a", "1")
	mustPut(t, b, "b", "1")
	total := func() uint64 { return testutil.APITotal(t, e.Server) }
	// watch ranges over the watch until the marker and then updates more
	// entries, putting each first.
	watch := func(t *testing.T, updates int, opts ...kv.WatchOpt) {
		t.Helper()
		marker, got := false, 0
		for ent, err := range b.WatchAll(e.Ctx, opts...) {
			if err != nil {
				t.Fatal(err)
			}
			if ent == nil {
				marker = true
			} else if marker {
				got++
			}
			if marker && got == updates {
				break
			}
			if marker {
				mustPut(t, b, "c", "x")
			}
		}
	}
	cases := []struct {
		name string
		run  func(t *testing.T)
		want uint64
	}{
		// create and delete, one consumer for the initial values and the
		// updates
		{"WatchAll, one update", func(t *testing.T) { watch(t, 1) }, 2},
		{"WatchAll, ended at the marker", func(t *testing.T) { watch(t, 0) }, 2},
		// stream info, then create and delete
		{"UpdatesOnly, one update", func(t *testing.T) { watch(t, 1, kv.UpdatesOnly()) }, 3},
		{"UpdatesOnly, ended at the marker", func(t *testing.T) { watch(t, 0, kv.UpdatesOnly()) }, 3},
		{"ListKeys", func(t *testing.T) {
			for _, err := range b.ListKeys(e.Ctx) {
				if err != nil {
					t.Fatal(err)
				}
			}
		}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := total()
			tc.run(t)
			if n := total() - before; n != tc.want {
				t.Fatalf("%d JetStream API requests, want %d", n, tc.want)
			}
		})
	}
}
