package kv_test

import (
	"context"
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/kv"
)

// A watch begins when Watch returns, not at its first read: what is
// written after the call and before the loop starts comes after the
// end-of-initial-values marker, each write as its own entry (as nats.go's
// watcher reads it), not folded into the initial values. With a history
// of 1 the watch has read the initial value before Watch returns, so the
// write that replaces it in the stream cannot hide it.
func TestWatchBeginsWhenWatchReturns(t *testing.T) {
	type watchFn = func(ctx context.Context, b *kv.Bucket) iter.Seq2[*kv.Entry, error]
	cases := []struct {
		name  string
		watch watchFn
		want5 string // with a history of 5: put 0, put 1, Watch, put 2, put 3
		want1 string // with a history of 1: put 0, put 1, Watch, put 2
	}{
		{"Watch", func(ctx context.Context, b *kv.Bucket) iter.Seq2[*kv.Entry, error] {
			return b.Watch(ctx, "k")
		}, "k=1 | k=2 k=3", "k=1 | k=2"},
		{"WatchAll", func(ctx context.Context, b *kv.Bucket) iter.Seq2[*kv.Entry, error] {
			return b.WatchAll(ctx)
		}, "k=1 | k=2 k=3", "k=1 | k=2"},
		{"IncludeHistory", func(ctx context.Context, b *kv.Bucket) iter.Seq2[*kv.Entry, error] {
			return b.WatchAll(ctx, kv.IncludeHistory())
		}, "k=0 k=1 | k=2 k=3", "k=1 | k=2"},
		{"UpdatesOnly", func(ctx context.Context, b *kv.Bucket) iter.Seq2[*kv.Entry, error] {
			return b.WatchAll(ctx, kv.UpdatesOnly())
		}, "| k=2 k=3", "| k=2"},
	}
	for _, tc := range cases {
		for _, history := range []uint8{1, 5} {
			t.Run(fmt.Sprintf("%s/history=%d", tc.name, history), func(t *testing.T) {
				puts, want := []string{"2", "3"}, tc.want5
				if history == 1 {
					puts, want = []string{"2"}, tc.want1
				}
				e := newEnv(t)
				b := e.bucket(t, kv.Config{Bucket: "start", History: history})
				mustPut(t, b, "k", "0")
				mustPut(t, b, "k", "1")
				ctx, cancel := context.WithTimeout(e.Ctx, 10*time.Second) // a guard, not a timing
				defer cancel()
				seq := tc.watch(ctx, b)
				for _, v := range puts {
					mustPut(t, b, "k", v)
				}
				if got := readUntil(t, seq, puts[len(puts)-1]); got != want {
					t.Fatalf("watch read %q; want %q", got, want)
				}
			})
		}
	}
}

// readUntil ranges over a watch until an entry with value last, and
// returns what it read, the marker as "|".
func readUntil(t *testing.T, seq iter.Seq2[*kv.Entry, error], last string) string {
	t.Helper()
	return testutil.ReadUntil(t, seq, func(e *kv.Entry) string { return e.Key + "=" + string(e.Value) },
		func(e *kv.Entry) bool { return string(e.Value) == last })
}

// Ranging over a watch again starts a new watch: it begins at that range.
func TestWatchRangedAgainBeginsAgain(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "again", History: 5})
	mustPut(t, b, "k", "1")
	seq := b.WatchAll(e.Ctx)
	mustPut(t, b, "k", "2")
	if got := readUntil(t, seq, "2"); got != "k=1 | k=2" {
		t.Fatalf("first range read %q; want k=1 | k=2", got)
	}
	mustPut(t, b, "k", "3")
	// Its initial value is the latest when the second loop starts.
	if got := readUntil(t, seq, "3"); got != "k=3" {
		t.Fatalf("second range read %q; want k=3", got)
	}
}

// A watch with more initial values than it queues before its loop starts
// still yields each once, in revision order, the marker after the last
// of them, then what was written after Watch returned.
func TestWatchBeginsWithMoreInitialValuesThanItQueues(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "many", History: 2})
	const n = 700 // more than the queue and one pull
	for i := range n {
		mustPut(t, b, fmt.Sprintf("k%d", i), "1")
	}
	ctx, cancel := context.WithTimeout(e.Ctx, 30*time.Second) // a guard, not a timing
	defer cancel()
	seq := b.WatchAll(ctx)
	mustPut(t, b, "k0", "2")
	var rev uint64
	initial, marker := 0, false
	for ent, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		if ent == nil {
			if marker || initial != n {
				t.Fatalf("marker after %d initial values (marker seen before: %v)", initial, marker)
			}
			marker = true
			continue
		}
		if ent.Revision <= rev {
			t.Fatalf("revision %d after %d", ent.Revision, rev)
		}
		rev = ent.Revision
		if !marker {
			initial++
			continue
		}
		if ent.Key != "k0" || string(ent.Value) != "2" {
			t.Fatalf("update %s=%s; want k0=2", ent.Key, ent.Value)
		}
		break
	}
}
