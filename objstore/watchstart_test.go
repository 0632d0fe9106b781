package objstore_test

import (
	"context"
	"iter"
	"strconv"
	"testing"
	"time"

	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/objstore"
)

// An object store watch begins when Watch returns, not at its first read:
// a change made after the call and before the loop starts comes after the
// end-of-initial-values marker, and the info it replaced (the store keeps
// one meta per object) is still read as the initial value.
func TestObjectWatchBeginsWhenWatchReturns(t *testing.T) {
	cases := []struct {
		name string
		opts []objstore.WatchOpt
		want string
	}{
		{"Watch", nil, "o:1 | o:2"},
		{"UpdatesOnly", []objstore.WatchOpt{objstore.UpdatesOnly()}, "| o:2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			s := e.store(t, objstore.Config{Bucket: "start"})
			put := func(data string) {
				t.Helper()
				if _, err := s.PutString(e.Ctx, "o", data); err != nil {
					t.Fatal(err)
				}
			}
			put("x")
			ctx, cancel := context.WithTimeout(e.Ctx, 10*time.Second) // a guard, not a timing
			defer cancel()
			seq := s.Watch(ctx, tc.opts...)
			put("yy")
			if got := readInfos(t, seq, 2); got != tc.want {
				t.Fatalf("watch read %q; want %q", got, tc.want)
			}
		})
	}
}

// readInfos ranges over a watch until an info of size last and returns
// what it read as name:size, the marker as "|".
func readInfos(t *testing.T, seq iter.Seq2[*objstore.Info, error], last uint64) string {
	t.Helper()
	return testutil.ReadUntil(t, seq, func(i *objstore.Info) string { return i.Name + ":" + strconv.FormatUint(i.Size, 10) },
		func(i *objstore.Info) bool { return i.Size == last })
}
