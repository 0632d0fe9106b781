package extra_test

import (
	"errors"
	"testing"

	"github.com/natsio/natsio/extra"
)

// TestAtomicCommitEOB: an atomic batch committed with the end-of-batch
// marker stores the messages added and not the marker; the acknowledgement
// counts the messages, ends at the last of them, and the last one stored
// carries the ordinary commit header. CommitEOB with nothing added sends
// nothing and leaves the publisher open.
func TestAtomicCommitEOB(t *testing.T) {
	_, nc, js := startJS(t)
	st := atomicStream(t, js, "EOB")
	ctx := ctxT(t)

	b, err := extra.NewBatchPublisher(js)
	if err != nil {
		t.Fatal(err)
	}
	out := nc.Stats().OutMsgs
	if _, err := b.CommitEOB(ctx); !errors.Is(err, extra.ErrEmptyBatch) {
		t.Fatalf("CommitEOB of an empty batch: %v", err)
	}
	if nc.Stats().OutMsgs != out || b.IsClosed() {
		t.Fatal("an empty CommitEOB sent something or closed the publisher")
	}
	for _, subj := range []string{"eob.a", "eob.b", "eob.c"} {
		if err := b.Add(ctx, subj, []byte(subj)); err != nil {
			t.Fatal(err)
		}
	}
	ack, err := b.CommitEOB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ack.Stream != "EOB" || ack.BatchID != b.BatchID() || ack.BatchSize != 3 || ack.Sequence != 3 {
		t.Fatalf("ack %+v, want batch %s of 3 ending at 3", ack, b.BatchID())
	}
	if !b.IsClosed() {
		t.Fatal("publisher open after CommitEOB")
	}
	if _, err := b.CommitEOB(ctx); !errors.Is(err, extra.ErrBatchClosed) {
		t.Fatalf("CommitEOB after commit: %v", err)
	}
	if n := msgCount(t, st); n != 3 {
		t.Fatalf("%d messages stored, want 3 (the marker is not stored)", n)
	}
	last, err := st.GetMsg(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if last.Subject != "eob.c" || string(last.Data) != "eob.c" {
		t.Fatalf("last stored message %s %q", last.Subject, last.Data)
	}
	if v := last.Header.Get(extra.HeaderBatchCommit); v != "1" {
		t.Fatalf("last stored message's commit header %q, want 1", v)
	}
}
