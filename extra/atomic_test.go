package extra_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

func atomicStream(t *testing.T, js *jsapi.JS, name string) *jsapi.Stream {
	return stream(t, js, jsapi.StreamConfig{Name: name, Subjects: []string{strings.ToLower(name) + ".>"},
		AllowAtomicPublish: true, AllowDirect: true})
}

func TestAtomicCommitStoresAll(t *testing.T) {
	_, nc, js := startJS(t)
	st := atomicStream(t, js, "ORD")
	ctx := ctxT(t)

	b, err := extra.NewBatchPublisher(js)
	if err != nil {
		t.Fatal(err)
	}
	var h proto.Header
	h.Set("X-Source", "import")
	h.Set(extra.HeaderBatchSeq, "77") // managed by the publisher: dropped
	if err := b.AddMsg(ctx, "ord.created", &h, []byte("order-1")); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(ctx, "ord.paid", []byte("pay-1"), jsapi.MsgID("pay-1")); err != nil {
		t.Fatal(err)
	}
	if b.Size() != 2 || b.IsClosed() || len(b.BatchID()) == 0 {
		t.Fatalf("size %d closed %v id %q", b.Size(), b.IsClosed(), b.BatchID())
	}
	ack, err := b.Commit(ctx, "ord.done", []byte("done"))
	if err != nil {
		t.Fatal(err)
	}
	if ack.Stream != "ORD" || ack.Sequence != 3 || ack.BatchID != b.BatchID() || ack.BatchSize != 3 {
		t.Fatalf("ack %+v", ack)
	}
	if !b.IsClosed() {
		t.Fatal("publisher open after commit")
	}
	if _, err := b.Commit(ctx, "ord.done", nil); !errors.Is(err, extra.ErrBatchClosed) {
		t.Fatalf("commit after commit: %v", err)
	}
	if n := msgCount(t, st); n != 3 {
		t.Fatalf("%d messages stored, want 3", n)
	}
	m, err := st.GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := m.Header.Lookup("X-Source"); v != "import" {
		t.Fatalf("custom header lost: %q", m.Header)
	}
	if v, _ := m.Header.Lookup(extra.HeaderBatchSeq); v == "77" {
		t.Fatalf("caller's batch header was sent: %q", m.Header)
	}
	_ = nc
}

// A message that fails its check in the middle of the batch fails the
// commit, and none of the batch is stored.
func TestAtomicAllOrNothing(t *testing.T) {
	_, _, js := startJS(t)
	st := atomicStream(t, js, "AON")
	ctx := ctxT(t)
	if _, err := js.Publish(ctx, "aon.x", []byte("before")); err != nil {
		t.Fatal(err)
	}
	b, _ := extra.NewBatchPublisher(js)
	for i := range 5 {
		var opts []jsapi.PubOpt
		subj := fmt.Sprintf("aon.%d", i)
		if i == 2 {
			subj, opts = "aon.x", []jsapi.PubOpt{jsapi.ExpectLastSubjectSeq(99)}
		}
		if err := b.Add(ctx, subj, []byte("m"), opts...); err != nil {
			t.Fatalf("add %d: %v", i, err)
		}
	}
	_, err := b.Commit(ctx, "aon.end", nil)
	if !errors.Is(err, jsapi.ErrWrongLastSequence) {
		t.Fatalf("commit: %v, want wrong last sequence", err)
	}
	var ae *jsapi.APIError
	if !errors.As(err, &ae) || ae.ErrorCode == 0 {
		t.Fatalf("commit error is not an APIError: %v", err)
	}
	if !b.IsClosed() {
		t.Fatal("publisher open after a failed commit")
	}
	if n := msgCount(t, st); n != 1 {
		t.Fatalf("%d messages stored, want only the one before the batch", n)
	}

	// An expectation on the first message is checked against the stream
	// before the batch.
	_, err = extra.PublishBatch(ctx, js, []extra.BatchMsg{
		{Subject: "aon.a", Data: []byte("1"), Opts: []jsapi.PubOpt{jsapi.ExpectLastSeq(5)}},
		{Subject: "aon.b", Data: []byte("2")},
	})
	if !errors.Is(err, jsapi.ErrWrongLastSequence) {
		t.Fatalf("expect last seq: %v", err)
	}
	ack, err := extra.PublishBatch(ctx, js, []extra.BatchMsg{
		{Subject: "aon.a", Data: []byte("1"), Opts: []jsapi.PubOpt{jsapi.ExpectLastSeq(1)}},
		{Subject: "aon.b", Data: []byte("2")},
	})
	if err != nil || ack.BatchSize != 2 || ack.Sequence != 3 {
		t.Fatalf("batch with a correct expectation: %+v %v", ack, err)
	}
}

// AckEvery requests an acknowledgement on the first and every n-th
// message; the others are sent without a reply subject.
func TestAtomicAckEvery(t *testing.T) {
	s, _, js := startJS(t)
	atomicStream(t, js, "AE")
	ctx := ctxT(t)
	watch := connect(t, s.URL())
	sub, err := watch.Subscribe("ae.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := watch.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	check := func(n int, opts []extra.AtomicOpt, wantReply func(seq int) bool) {
		t.Helper()
		b, err := extra.NewBatchPublisher(js, opts...)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < n; i++ {
			if err := b.Add(ctx, "ae.x", []byte("m")); err != nil {
				t.Fatal(err)
			}
		}
		ack, err := b.Commit(ctx, "ae.x", []byte("last"))
		if err != nil || ack.BatchSize != n {
			t.Fatalf("commit: %+v %v", ack, err)
		}
		for seq := 1; seq <= n; seq++ {
			m, err := sub.NextMsg(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if v, _ := m.Header.Lookup(extra.HeaderBatchSeq); v != fmt.Sprint(seq) {
				t.Fatalf("message %d has batch sequence %q", seq, v)
			}
			if v, _ := m.Header.Lookup(extra.HeaderBatchID); v != b.BatchID() {
				t.Fatalf("message %d has batch id %q", seq, v)
			}
			_, commit := m.Header.Lookup(extra.HeaderBatchCommit)
			if commit != (seq == n) {
				t.Fatalf("message %d commit header %v", seq, commit)
			}
			if got, want := m.Reply != "", wantReply(seq); got != want {
				t.Fatalf("message %d: reply %q, want one: %v", seq, m.Reply, want)
			}
		}
	}
	check(10, []extra.AtomicOpt{extra.AckEvery(3)}, func(seq int) bool { return seq == 1 || seq%3 == 0 || seq == 10 })
	check(5, []extra.AtomicOpt{extra.AckFirst(false)}, func(seq int) bool { return seq == 5 })
	check(4, []extra.AtomicOpt{extra.AckFirst(false), extra.AckEvery(2)}, func(seq int) bool { return seq%2 == 0 })
}

func TestAtomicDuplicateMsgID(t *testing.T) {
	_, _, js := startJS(t)
	st := atomicStream(t, js, "DUP")
	ctx := ctxT(t)
	b, _ := extra.NewBatchPublisher(js)
	if err := b.Add(ctx, "dup.a", []byte("1"), jsapi.MsgID("m-1")); err != nil {
		t.Fatal(err)
	}
	err := b.Add(ctx, "dup.b", []byte("2"), jsapi.MsgID("m-1"))
	if !errors.Is(err, jsapi.ErrAtomicDuplicateMsgID) || !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("duplicate id: %v", err)
	}
	if b.IsClosed() || b.Size() != 1 {
		t.Fatalf("a validation failure changed the publisher: closed %v size %d", b.IsClosed(), b.Size())
	}
	if err := b.Add(ctx, "dup.b", []byte("2"), jsapi.MsgID("m-2")); err != nil {
		t.Fatal(err)
	}
	ack, err := b.Commit(ctx, "dup.c", []byte("3"), jsapi.MsgID("m-3"))
	if err != nil || ack.BatchSize != 3 {
		t.Fatalf("commit: %+v %v", ack, err)
	}

	// PublishBatch finds the duplicate before sending anything.
	before := msgCount(t, st)
	_, err = extra.PublishBatch(ctx, js, []extra.BatchMsg{
		{Subject: "dup.a", Data: []byte("1"), Opts: []jsapi.PubOpt{jsapi.MsgID("x")}},
		{Subject: "dup.b", Data: []byte("2")},
		{Subject: "dup.c", Data: []byte("3"), Opts: []jsapi.PubOpt{jsapi.MsgID("x")}},
	})
	if !errors.Is(err, jsapi.ErrAtomicDuplicateMsgID) {
		t.Fatalf("PublishBatch duplicate: %v", err)
	}
	if n := msgCount(t, st); n != before {
		t.Fatalf("stored %d messages after a rejected batch", n-before)
	}
}

func TestAtomicLimitsAndValidation(t *testing.T) {
	_, _, js := startJS(t)
	st := atomicStream(t, js, "LIM")
	ctx := ctxT(t)

	// Exactly MaxAtomicBatch messages commit.
	b, _ := extra.NewBatchPublisher(js, extra.AckEvery(250))
	for range extra.MaxAtomicBatch - 1 {
		if err := b.Add(ctx, "lim.a", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	ack, err := b.Commit(ctx, "lim.a", []byte("x"))
	if err != nil || ack.BatchSize != extra.MaxAtomicBatch {
		t.Fatalf("1000-message batch: %+v %v", ack, err)
	}

	// The 1001st message is refused locally; the publisher stays usable.
	b, _ = extra.NewBatchPublisher(js, extra.AckFirst(false))
	for range extra.MaxAtomicBatch {
		if err := b.Add(ctx, "lim.b", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	_, err = b.Commit(ctx, "lim.b", nil)
	if !errors.Is(err, extra.ErrBatchTooLarge) || !errors.Is(err, jsapi.ErrAtomicTooLarge) {
		t.Fatalf("1001st message: %v", err)
	}
	if b.IsClosed() || b.Size() != extra.MaxAtomicBatch {
		t.Fatalf("closed %v size %d after a validation failure", b.IsClosed(), b.Size())
	}
	b.Discard()
	b.Discard()
	if err := b.Add(ctx, "lim.b", nil); !errors.Is(err, extra.ErrBatchClosed) {
		t.Fatalf("add after discard: %v", err)
	}

	big := make([]extra.BatchMsg, extra.MaxAtomicBatch+1)
	for i := range big {
		big[i] = extra.BatchMsg{Subject: "lim.c"}
	}
	if _, err := extra.PublishBatch(ctx, js, big); !errors.Is(err, extra.ErrBatchTooLarge) {
		t.Fatalf("PublishBatch 1001: %v", err)
	}
	if _, err := extra.PublishBatch(ctx, js, nil); !errors.Is(err, extra.ErrEmptyBatch) {
		t.Fatalf("PublishBatch empty: %v", err)
	}
	empty := func(yield func(extra.BatchMsg) bool) {}
	if _, err := extra.PublishBatchSeq(ctx, js, empty); !errors.Is(err, extra.ErrEmptyBatch) {
		t.Fatalf("PublishBatchSeq empty: %v", err)
	}

	// Options.
	if _, err := extra.NewBatchPublisher(js, extra.BatchID(strings.Repeat("x", 65))); !errors.Is(err, jsapi.ErrAtomicInvalidBatchID) {
		t.Fatalf("long batch id: %v", err)
	}
	if _, err := extra.NewBatchPublisher(js, extra.BatchID("a b")); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("batch id with a space: %v", err)
	}
	for _, o := range []extra.AtomicOpt{extra.AckEvery(-1), extra.AckTimeout(0), {}} {
		if _, err := extra.NewBatchPublisher(js, o); !errors.Is(err, conn.ErrInvalidOption) {
			t.Fatalf("option %+v: %v", o, err)
		}
	}
	id := strings.Repeat("i", extra.MaxBatchIDLen)
	b, err = extra.NewBatchPublisher(js, extra.BatchID(id))
	if err != nil || b.BatchID() != id {
		t.Fatalf("64-character id: %v", err)
	}

	// Headers the batch does not support, refused locally.
	if err := b.Add(ctx, "lim.d", nil, jsapi.ExpectLastMsgID("x")); !errors.Is(err, jsapi.ErrAtomicUnsupportedHeader) {
		t.Fatalf("expected last msg id: %v", err)
	}
	if err := b.Add(ctx, "lim.d", nil, jsapi.ExpectLastSeq(extra.MaxAtomicBatch)); err != nil {
		t.Fatalf("expected last sequence on the first message: %v", err)
	}
	if err := b.Add(ctx, "lim.d", nil, jsapi.ExpectLastSeq(extra.MaxAtomicBatch)); !errors.Is(err, jsapi.ErrAtomicUnsupportedHeader) {
		t.Fatalf("expected last sequence on the second message: %v", err)
	}
	if err := b.Add(ctx, "lim.*", nil); !errors.Is(err, conn.ErrBadSubject) {
		t.Fatalf("wildcard subject: %v", err)
	}
	var noCtx context.Context
	if err := b.Add(noCtx, "lim.d", nil); !errors.Is(err, conn.ErrNilContext) {
		t.Fatalf("nil context: %v", err)
	}
	if b.IsClosed() || b.Size() != 1 {
		t.Fatalf("validation failures changed the publisher: closed %v size %d", b.IsClosed(), b.Size())
	}
	if ack, err := b.Commit(ctx, "lim.d", nil); err != nil || ack.BatchID != id || ack.BatchSize != 2 {
		t.Fatalf("commit with custom id: %+v %v", ack, err)
	}
	if n := msgCount(t, st); n != extra.MaxAtomicBatch+2 {
		t.Fatalf("%d messages stored", n)
	}
}

func TestAtomicServerErrors(t *testing.T) {
	_, _, js := startJS(t)
	ctx := ctxT(t)
	stream(t, js, jsapi.StreamConfig{Name: "PLAIN", Subjects: []string{"plain.>"}})
	atomicStream(t, js, "FLY")
	inc := atomicStream(t, js, "INC")

	// Not enabled: found by the first message's acknowledgement.
	b, _ := extra.NewBatchPublisher(js)
	err := b.Add(ctx, "plain.a", []byte("x"))
	if !errors.Is(err, jsapi.ErrAtomicDisabled) {
		t.Fatalf("not enabled: %v", err)
	}
	if !b.IsClosed() {
		t.Fatal("publisher open after a server error")
	}

	// No stream listens.
	b, _ = extra.NewBatchPublisher(js)
	if err := b.Add(ctx, "nowhere.a", nil); !errors.Is(err, jsapi.ErrNoStreamResponse) {
		t.Fatalf("no stream: %v", err)
	}

	// The server keeps at most 50 batches in flight per stream.
	var open []*extra.BatchPublisher
	for i := range 51 {
		b, _ := extra.NewBatchPublisher(js)
		err := b.Add(ctx, "fly.a", []byte("x"))
		if i < 50 {
			if err != nil {
				t.Fatalf("batch %d: %v", i, err)
			}
			open = append(open, b)
			continue
		}
		if !errors.Is(err, jsapi.ErrAtomicTooManyInflight) {
			t.Fatalf("51st batch: %v", err)
		}
	}
	for _, b := range open {
		b.Discard()
	}

	// A hole in the sequence: the server refuses the commit as incomplete.
	b, _ = extra.NewBatchPublisher(js)
	if err := b.Add(ctx, "inc.a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	extra.SkipAtomicSeq(b)
	if _, err := b.Commit(ctx, "inc.c", []byte("3")); !errors.Is(err, jsapi.ErrAtomicIncomplete) {
		t.Fatalf("incomplete: %v", err)
	}
	if n := msgCount(t, inc); n != 0 {
		t.Fatalf("incomplete batch stored %d messages", n)
	}
}

func TestPublishBatchSeq(t *testing.T) {
	_, _, js := startJS(t)
	st := atomicStream(t, js, "SEQ")
	ctx := ctxT(t)
	msgs := func(n int, bad int) iter.Seq[extra.BatchMsg] {
		return func(yield func(extra.BatchMsg) bool) {
			for i := 1; i <= n; i++ {
				subj := fmt.Sprintf("seq.%d", i)
				if i == bad {
					subj = "seq.>"
				}
				if !yield(extra.BatchMsg{Subject: subj, Data: []byte(subj)}) {
					return
				}
			}
		}
	}
	ack, err := extra.PublishBatchSeq(ctx, js, msgs(5, 0), extra.AckEvery(2))
	if err != nil || ack.BatchSize != 5 || ack.Sequence != 5 {
		t.Fatalf("5 messages: %+v %v", ack, err)
	}
	// The last input message carries the commit: no extra message.
	if n := msgCount(t, st); n != 5 {
		t.Fatalf("%d stored", n)
	}
	// A message failing validation after some were sent: nothing stored.
	if _, err := extra.PublishBatchSeq(ctx, js, msgs(5, 4)); !errors.Is(err, conn.ErrBadSubject) {
		t.Fatalf("bad message: %v", err)
	}
	if n := msgCount(t, st); n != 5 {
		t.Fatalf("%d stored after a failed batch", n)
	}
	// One message.
	ack, err = extra.PublishBatchSeq(ctx, js, msgs(1, 0))
	if err != nil || ack.BatchSize != 1 {
		t.Fatalf("one message: %+v %v", ack, err)
	}
}

// Counter increments in one batch add up. (Server 2.15.2 does not put the
// total in a batch commit's ack: BatchAck.Value stays empty there.)
func TestAtomicCounterValue(t *testing.T) {
	_, _, js := startJS(t)
	st := stream(t, js, jsapi.StreamConfig{Name: "CNT", Subjects: []string{"cnt.>"}, AllowAtomicPublish: true, AllowMsgCounter: true})
	ctx := ctxT(t)
	ack, err := extra.PublishBatch(ctx, js, []extra.BatchMsg{
		{Subject: "cnt.a", Opts: []jsapi.PubOpt{jsapi.Incr(1)}},
		{Subject: "cnt.a", Opts: []jsapi.PubOpt{jsapi.Incr(2)}},
		{Subject: "cnt.a", Opts: []jsapi.PubOpt{jsapi.Incr(3)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ack.BatchSize != 3 || ack.Sequence != 3 {
		t.Fatalf("counter batch ack %+v", ack)
	}
	m, err := st.GetMsg(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Data) != `{"val":"6"}` {
		t.Fatalf("counter total %s", m.Data)
	}
}
