package extra_test

import (
	"errors"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

// TestAtomicEOBAtDefaultLimit: a batch of exactly MaxAtomicBatch messages
// commits with the end-of-batch marker, which the server does not count
// toward the limit; a message beyond the limit is refused before it is
// sent and the publisher stays usable.
func TestAtomicEOBAtDefaultLimit(t *testing.T) {
	_, nc, js := startJS(t)
	st := atomicStream(t, js, "EOBLIM")
	ctx := ctxT(t)

	b, err := extra.NewBatchPublisher(js, extra.AckEvery(250))
	if err != nil {
		t.Fatal(err)
	}
	for range extra.MaxAtomicBatch {
		if err := b.Add(ctx, "eoblim.a", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	ack, err := b.CommitEOB(ctx)
	if err != nil {
		t.Fatalf("CommitEOB after %d messages: %v", extra.MaxAtomicBatch, err)
	}
	if ack.BatchSize != extra.MaxAtomicBatch || ack.Sequence != extra.MaxAtomicBatch {
		t.Fatalf("ack %+v, want a batch of %d", ack, extra.MaxAtomicBatch)
	}
	if n := msgCount(t, st); n != extra.MaxAtomicBatch {
		t.Fatalf("%d messages stored, want %d", n, extra.MaxAtomicBatch)
	}

	// The 1001st Add is refused locally: nothing goes out, nothing is
	// stored.
	b, err = extra.NewBatchPublisher(js, extra.AckFirst(false))
	if err != nil {
		t.Fatal(err)
	}
	for range extra.MaxAtomicBatch {
		if err := b.Add(ctx, "eoblim.b", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	out := nc.Stats().OutMsgs
	err = b.Add(ctx, "eoblim.b", []byte("x"))
	if !errors.Is(err, extra.ErrBatchTooLarge) || !errors.Is(err, jsapi.ErrAtomicTooLarge) {
		t.Fatalf("message %d: %v, want ErrBatchTooLarge", extra.MaxAtomicBatch+1, err)
	}
	if got := nc.Stats().OutMsgs; got != out {
		t.Fatalf("the refused message was sent (%d messages out, want %d)", got, out)
	}
	if b.IsClosed() || b.Size() != extra.MaxAtomicBatch {
		t.Fatalf("closed %v size %d after the refusal", b.IsClosed(), b.Size())
	}
	b.Discard()
	if n := msgCount(t, st); n != extra.MaxAtomicBatch {
		t.Fatalf("%d messages stored, want %d (the uncommitted batch stores none)", n, extra.MaxAtomicBatch)
	}
}

// TestAtomicMaxBatchSize: against a server configured for larger batches
// (jetstream.limits.batch.max_msgs), MaxBatchSize lets a batch use its
// limit, with Commit and with CommitEOB; the default client limit still
// refuses the 1001st message.
func TestAtomicMaxBatchSize(t *testing.T) {
	const limit = 1500
	s := natstest.NewServer(t, natstest.ConfigText("jetstream { limits { batch { max_msgs: 1500 } } }"))
	nc := connect(t, s.URL())
	js := newJS(t, nc)
	st := atomicStream(t, js, "BIG")
	ctx := ctxT(t)

	b, err := extra.NewBatchPublisher(js, extra.MaxBatchSize(limit), extra.AckEvery(500))
	if err != nil {
		t.Fatal(err)
	}
	for range limit - 1 {
		if err := b.Add(ctx, "big.a", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	ack, err := b.Commit(ctx, "big.a", []byte("x"))
	if err != nil || ack.BatchSize != limit {
		t.Fatalf("commit of %d: %+v %v", limit, ack, err)
	}
	if err := b.Add(ctx, "big.a", nil); !errors.Is(err, extra.ErrBatchClosed) {
		t.Fatalf("add after commit: %v", err)
	}

	b, err = extra.NewBatchPublisher(js, extra.MaxBatchSize(limit), extra.AckEvery(500))
	if err != nil {
		t.Fatal(err)
	}
	for range limit {
		if err := b.Add(ctx, "big.b", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Add(ctx, "big.b", nil); !errors.Is(err, extra.ErrBatchTooLarge) {
		t.Fatalf("message %d with MaxBatchSize(%d): %v", limit+1, limit, err)
	}
	if ack, err := b.CommitEOB(ctx); err != nil || ack.BatchSize != limit {
		t.Fatalf("CommitEOB of %d: %+v %v", limit, ack, err)
	}
	if n := msgCount(t, st); n != 2*limit {
		t.Fatalf("%d messages stored, want %d", n, 2*limit)
	}

	msgs := make([]extra.BatchMsg, extra.MaxAtomicBatch+1)
	for i := range msgs {
		msgs[i] = extra.BatchMsg{Subject: "big.c"}
	}
	out := nc.Stats().OutMsgs
	if _, err := extra.PublishBatch(ctx, js, msgs); !errors.Is(err, extra.ErrBatchTooLarge) {
		t.Fatalf("PublishBatch of %d with the default limit: %v", len(msgs), err)
	}
	if nc.Stats().OutMsgs != out {
		t.Fatal("PublishBatch sent messages of a batch it refused")
	}
	if _, err := extra.PublishBatch(ctx, js, msgs, extra.MaxBatchSize(limit)); err != nil {
		t.Fatalf("PublishBatch of %d with MaxBatchSize(%d): %v", len(msgs), limit, err)
	}
}

// TestAtomicServerTooLarge: a client limit above the server's lets the
// batch go out, and the server's refusal matches the local check's
// sentinels; nothing is stored.
func TestAtomicServerTooLarge(t *testing.T) {
	_, _, js := startJS(t)
	st := atomicStream(t, js, "SRVBIG")
	ctx := ctxT(t)

	msgs := make([]extra.BatchMsg, extra.MaxAtomicBatch+1)
	for i := range msgs {
		msgs[i] = extra.BatchMsg{Subject: "srvbig.a", Data: []byte("x")}
	}
	_, err := extra.PublishBatch(ctx, js, msgs, extra.MaxBatchSize(2*extra.MaxAtomicBatch))
	var ae *jsapi.APIError
	if !errors.Is(err, extra.ErrBatchTooLarge) || !errors.Is(err, jsapi.ErrAtomicTooLarge) || !errors.As(err, &ae) {
		t.Fatalf("batch of %d against a server limit of %d: %v; want ErrBatchTooLarge from the server", len(msgs), extra.MaxAtomicBatch, err)
	}
	if n := msgCount(t, st); n != 0 {
		t.Fatalf("%d messages stored of a refused batch", n)
	}

	for _, o := range []extra.AtomicOpt{extra.MaxBatchSize(0), extra.MaxBatchSize(-1)} {
		if _, err := extra.NewBatchPublisher(js, o); !errors.Is(err, conn.ErrInvalidOption) {
			t.Fatalf("option %+v: %v", o, err)
		}
	}
}
