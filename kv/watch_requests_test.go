package kv_test

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsio/natsio/kv"
)

// The JetStream API requests of a watch: per shape of watch, the same as
// an ordered consumer that creates its server-side consumer when first
// read (a create per read, a delete when each read ends, a stream info
// for UpdatesOnly), and a watch that ends at the end-of-initial marker of
// UpdatesOnly makes no consumer at all.
func TestWatchRequests(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "req"})
	mustPut(t, b, "a", "1")
	mustPut(t, b, "b", "1")
	total := func() uint64 {
		t.Helper()
		info, err := e.s.Server().Jsz(&server.JSzOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return info.API.Total
	}
	// watch ranges over the watch until the marker and then updates more
	// entries, putting each first.
	watch := func(t *testing.T, updates int, opts ...kv.WatchOpt) {
		t.Helper()
		marker, got := false, 0
		for ent, err := range b.WatchAll(e.ctx, opts...) {
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
		// create and delete for the initial values, create and delete
		// for the updates
		{"WatchAll, one update", func(t *testing.T) { watch(t, 1) }, 4},
		{"WatchAll, ended at the marker", func(t *testing.T) { watch(t, 0) }, 2},
		// stream info, then create and delete for the updates
		{"UpdatesOnly, one update", func(t *testing.T) { watch(t, 1, kv.UpdatesOnly()) }, 3},
		{"UpdatesOnly, ended at the marker", func(t *testing.T) { watch(t, 0, kv.UpdatesOnly()) }, 1},
		{"ListKeys", func(t *testing.T) {
			for _, err := range b.ListKeys(e.ctx) {
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
