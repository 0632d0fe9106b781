package kv_test

import (
	"context"
	"iter"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
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
	spy, err := conn.Connect(e.ctx, e.s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer spy.Close()
	pulls := make(chan string, 1024)
	if _, err := spy.SubscribeFunc("$JS.API.CONSUMER.MSG.NEXT.>", func(m *conn.Msg) {
		select {
		case pulls <- m.Reply:
		default:
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := spy.Flush(e.ctx); err != nil {
		t.Fatal(err)
	}
	// UpdatesOnly: one read, so the first pull the attacker sees is the
	// one whose inbox the watch keeps.
	w := startWatch(t, func(ctx context.Context) iter.Seq2[*kv.Entry, error] {
		return b.WatchAll(ctx, kv.UpdatesOnly())
	})
	w.marker()
	var reply string
	select {
	case reply = <-pulls:
	case <-time.After(10 * time.Second):
		t.Fatal("the attacker saw no pull request")
	}
	mustPut(t, b, "k", "v1")
	if got := w.entry(); got.Key != "k" || string(got.Value) != "v1" {
		t.Fatalf("entry %+v", got)
	}

	h := &proto.Header{}
	h.Add("KV-Operation", "PUT")
	for _, r := range []string{"", "_INBOX.attacker", "JS.ACK.KV_forged.C.1.1.1.1700000000000000000.0"} {
		if err := spy.PublishMsg(reply, r, h, []byte("forged")); err != nil {
			t.Fatal(err)
		}
	}
	if err := spy.Flush(e.ctx); err != nil {
		t.Fatal(err)
	}
	mustPut(t, b, "k", "v2")
	mustPut(t, b, "other", "o1")
	if got := w.entry(); got.Key != "k" || string(got.Value) != "v2" || got.Revision != 2 {
		t.Fatalf("entry %+v; want k=v2 at revision 2", got)
	}
	if got := w.entry(); got.Key != "other" || got.Revision != 3 {
		t.Fatalf("entry %+v; want other at revision 3", got)
	}
	if n := b.SkippedEntries(); n != 3 {
		t.Fatalf("SkippedEntries = %d; want 3", n)
	}
}
