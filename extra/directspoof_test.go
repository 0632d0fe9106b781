package extra_test

import (
	"testing"

	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

// A message stored with fields named as those the server adds to a batch
// Direct Get reply (any client may publish them) does not end the batch
// and is read with the server's values; its own fields stay in its Header.
func TestGetBatchStoredServerFields(t *testing.T) {
	_, _, js := startJS(t)
	stream(t, js, jsapi.StreamConfig{Name: "SP", Subjects: []string{"sp.>"}, AllowDirect: true})
	ctx := ctxT(t)
	h := proto.NewHeader("Nats-Subject", "sp.a", "Nats-Sequence", "nope", "Nats-Time-Stamp", "never",
		"Nats-Num-Pending", "x", "Nats-Last-Sequence", "y", "X-Own", "1")
	for i, subj := range []string{"sp.a", "sp.evil", "sp.b"} {
		var hh *proto.Header
		if i == 1 {
			hh = h
		}
		if _, err := js.PublishMsg(ctx, subj, hh, []byte(subj)); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := collect(t, extra.GetBatch(ctx, js, "SP", 10))
	if err != nil || len(ms) != 3 {
		t.Fatalf("GetBatch: %d messages, %v", len(ms), err)
	}
	m := ms[1]
	if m.Subject != "sp.evil" || m.Sequence != 2 || m.Time.IsZero() || m.Time.Year() < 2020 {
		t.Fatalf("GetBatch: %s #%d at %v; want sp.evil #2", m.Subject, m.Sequence, m.Time)
	}
	if m.Header.Get("Nats-Sequence") != "nope" || m.Header.Get("X-Own") != "1" || m.Header.Len() != 6 {
		t.Fatalf("stored header %v", m.Header)
	}
	last, err := collect(t, extra.GetLastMsgsFor(ctx, js, "SP", []string{"sp.evil"}))
	if err != nil || len(last) != 1 || last[0].Sequence != 2 || last[0].Subject != "sp.evil" {
		t.Fatalf("GetLastMsgsFor: %v %v", last, err)
	}
}
