package kv_test

import (
	"context"
	"iter"
	"testing"

	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/kv"
)

// Puts, gets, key listings, a history and watches ended by break and by
// cancel leave no goroutine of natsio running once the connection closes.
func TestNoGoroutineLeak(t *testing.T) {
	testutil.NoLeak(t, nil, func(j testutil.JSEnv) {
		e := &env{j}
		b := e.bucket(t, kv.Config{Bucket: "leak", History: 5})
		for i := range 10 {
			mustPut(t, b, "k"+string(rune('a'+i)), "v")
		}
		mustPut(t, b, "ka", "v2")
		if _, err := b.Get(e.Ctx, "ka"); err != nil {
			t.Fatal(err)
		}
		if keys, err := b.Keys(e.Ctx); err != nil || len(keys) != 10 {
			t.Fatalf("keys %v %v", keys, err)
		}
		if _, err := b.History(e.Ctx, "ka"); err != nil {
			t.Fatal(err)
		}
		for range b.ListKeys(e.Ctx) {
			break
		}
		for _, err := range b.WatchAll(e.Ctx) {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
		// waiting for updates: the cancel ends it
		testutil.CancelAfter(e.Ctx, 10, func(ctx context.Context) iter.Seq2[*kv.Entry, error] { return b.WatchAll(ctx) })
	})
}
