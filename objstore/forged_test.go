package objstore_test

import (
	"testing"
	"time"

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
	type item struct {
		info *objstore.Info
		err  error
	}
	items := make(chan item, 64)
	go func() {
		defer close(items)
		// UpdatesOnly: one read, so the first pull the attacker sees is
		// the one whose inbox the watch keeps.
		for info, err := range s.Watch(e.Ctx, objstore.UpdatesOnly()) {
			items <- item{info, err}
			if err != nil {
				return
			}
			if info != nil && info.Name == "last" {
				return
			}
		}
	}()
	next := func() item {
		t.Helper()
		select {
		case it := <-items:
			return it
		case <-time.After(10 * time.Second):
			t.Fatal("the watch yielded nothing")
			return item{}
		}
	}
	if it := next(); it.info != nil || it.err != nil {
		t.Fatalf("want the end-of-initial-values marker, got %+v %v", it.info, it.err)
	}
	reply := spy.NextPull(t)
	h := &proto.Header{}
	h.Add("X-Forged", "1")
	spy.Publish(t, reply, []byte(`{"name":"forged","bucket":"forged","nuid":"x"}`), []testutil.Forged{
		{Reply: "", Header: h},
		{Reply: "_INBOX.attacker", Header: h},
		{Reply: "JS.ACK.OBJ_forged.C.1.1.1.1700000000000000000.0", Header: h},
	}...)
	for _, name := range []string{"first", "last"} {
		if _, err := s.PutBytes(e.Ctx, name, []byte("data of "+name)); err != nil {
			t.Fatal(err)
		}
		if it := next(); it.err != nil || it.info == nil || it.info.Name != name {
			t.Fatalf("watch yielded %+v %v; want the info of %q", it.info, it.err, name)
		}
	}
}
