package ordered_test

import (
	"testing"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
)

// F57: an ordered consumer with OptStartTime set to the stored time stamp
// of message 3 (read back with GetMsg, not the wall clock) yields exactly
// messages 3..10 with UntilDrained, in order, and ends.
func TestOrderedOptStartTime(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, "o.a", 5)
	st, err := e.js.Stream(e.ctx, "O")
	if err != nil {
		t.Fatal(err)
	}
	third, err := st.GetMsg(e.ctx, 3)
	if err != nil || third.Sequence != 3 || third.Time.IsZero() {
		t.Fatalf("GetMsg(3): %+v %v", third, err)
	}
	e.publish(t, "o.b", 5)

	oc := newOrdered(t, e.js, "O", ordered.Config{OptStartTime: third.Time})
	var seqs []uint64
	for m, err := range oc.Messages(e.ctx, ordered.UntilDrained()) {
		if err != nil {
			t.Fatal(err)
		}
		md, err := m.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, md.StreamSeq)
	}
	if len(seqs) != 8 {
		t.Fatalf("yielded stream seqs %v, want 3..10", seqs)
	}
	for i, s := range seqs {
		if s != uint64(3+i) {
			t.Fatalf("yielded stream seqs %v, want 3..10", seqs)
		}
	}
}
