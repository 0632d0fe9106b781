package objstore_test

import (
	"context"
	"iter"
	"testing"

	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/objstore"
	"github.com/natsio/natsio/proto"
)

// Another tenant that watches $JS.API.CONSUMER.MSG.NEXT.> learns a
// store watch's pull inbox and publishes plain messages to it (no status,
// no readable $JS.ACK reply). The watch skips them and goes on yielding
// the store's changes.
func TestForgedPlainMessageWatch(t *testing.T) {
	e := newEnv(t)
	s := e.store(t, objstore.Config{Bucket: "forged"})
	spy := testutil.NewPullSpy(t, e.Server.URL())
	// UpdatesOnly: one read, so the first pull the attacker sees is the
	// one whose inbox the watch keeps.
	w := testutil.StartWatch(t, func(ctx context.Context) iter.Seq2[*objstore.Info, error] {
		return s.Watch(ctx, objstore.UpdatesOnly())
	})
	w.Marker()
	reply := spy.NextPull(t)
	h := &proto.Header{}
	h.Add("X-Forged", "1")
	spy.PublishStrays(t, reply, "OBJ_forged", h, []byte(`{"name":"forged","bucket":"forged","nuid":"x"}`))
	for _, name := range []string{"first", "last"} {
		if _, err := s.PutBytes(e.Ctx, name, []byte("data of "+name)); err != nil {
			t.Fatal(err)
		}
		if info := w.Entry(); info.Name != name {
			t.Fatalf("watch yielded %+v; want the info of %q", info, name)
		}
	}
}
