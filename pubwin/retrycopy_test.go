package pubwin_test

import (
	"testing"
	"time"
	"unsafe"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
	"github.com/natsio/natsio/pubwin"
)

// A retried publish sends what was given to Publish, even when the
// caller's memory behind the subject and the header changed meanwhile (as
// a borrowed message's does once its loop body returns): the window keeps
// copies, not the caller's strings.
func TestRetryKeepsCopies(t *testing.T) {
	s := natstest.NewServer(t)
	js, _, ctx := setup(t, s.URL(), "")
	w, err := pubwin.New(js, pubwin.RetryOnNoResponders(3, 200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	// Strings that are views of memory the caller will overwrite.
	subj := []byte("r.a")
	val := []byte("one")
	var h proto.Header
	h.Set("K", unsafe.String(&val[0], len(val)))
	// No stream captures r.> yet: the first attempt draws a 503 and is
	// retried after 200 ms. The stream is created on the same connection
	// after the publish, so the server sees the publish first.
	f, err := w.PublishMsg(ctx, unsafe.String(&subj[0], len(subj)), &h, []byte("data"))
	if err != nil {
		t.Fatal(err)
	}
	copy(subj, "r.b")
	copy(val, "two")
	h.Reset()
	st, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "R", Subjects: []string{"r.>"}, Storage: jsapi.StorageMemory})
	if err != nil {
		t.Fatal(err)
	}
	ack, err := f.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w.Stats().Retries == 0 {
		t.Fatal("the publish was not retried")
	}
	sm, err := st.GetMsg(ctx, ack.Sequence)
	if err != nil {
		t.Fatal(err)
	}
	if sm.Subject != "r.a" || sm.Header.Get("K") != "one" {
		t.Fatalf("stored on %q with K=%q; want r.a and one", sm.Subject, sm.Header.Get("K"))
	}
}
