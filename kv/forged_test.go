package kv_test

import (
	"context"
	"iter"
	"testing"

	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/proto"
)

// Another tenant that watches $JS.API.CONSUMER.MSG.NEXT.> learns a
// watch's pull inbox and publishes plain messages to it (no status, no
// readable $JS.ACK reply). The watch skips them, counts them in
// SkippedEntries, and goes on yielding the bucket's entries.
func TestForgedPlainMessageWatch(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "forged"})
	spy := testutil.NewPullSpy(t, e.Server.URL())
	// UpdatesOnly: one read, so the first pull the attacker sees is the
	// one whose inbox the watch keeps.
	w := startWatch(t, func(ctx context.Context) iter.Seq2[*kv.Entry, error] {
		return b.WatchAll(ctx, kv.UpdatesOnly())
	})
	w.Marker()
	reply := spy.NextPull(t)
	mustPut(t, b, "k", "v1")
	if got := w.Entry(); got.Key != "k" || string(got.Value) != "v1" {
		t.Fatalf("entry %+v", got)
	}

	h := &proto.Header{}
	h.Add("KV-Operation", "PUT")
	spy.PublishStrays(t, reply, "KV_forged", h, []byte("forged"))
	mustPut(t, b, "k", "v2")
	mustPut(t, b, "other", "o1")
	if got := w.Entry(); got.Key != "k" || string(got.Value) != "v2" || got.Revision != 2 {
		t.Fatalf("entry %+v; want k=v2 at revision 2", got)
	}
	if got := w.Entry(); got.Key != "other" || got.Revision != 3 {
		t.Fatalf("entry %+v; want other at revision 3", got)
	}
	if n := b.SkippedEntries(); n != 3 {
		t.Fatalf("SkippedEntries = %d; want 3", n)
	}
}
