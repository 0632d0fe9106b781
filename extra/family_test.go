package extra_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/jsapi"
)

// failure is one way a publisher fails: the error it returned and the
// sentinel that says what happened, which the family must not hide.
type failure struct {
	name string
	err  error
	is   error
}

// checkFamily fails t unless every failure matches family and its own
// sentinel, and none matches other (the other publisher's family).
func checkFamily(t *testing.T, family, other error, fs []failure) {
	t.Helper()
	for _, f := range fs {
		if f.err == nil {
			t.Errorf("%s: no error", f.name)
			continue
		}
		if !errors.Is(f.err, family) || errors.Is(f.err, other) || !errors.Is(f.err, f.is) {
			t.Errorf("%s: %v matches family %v, other %v, own sentinel %v; want true, false, true",
				f.name, f.err, errors.Is(f.err, family), errors.Is(f.err, other), errors.Is(f.err, f.is))
		}
	}
}

// Every failure of the atomic batch publisher matches
// extra.ErrBatchPublish, and still its own sentinel.
func TestBatchPublishErrorFamily(t *testing.T) {
	_, _, js := startJS(t)
	ctx := ctxT(t)
	stream(t, js, jsapi.StreamConfig{Name: "PLAIN", Subjects: []string{"plain.>"}})
	atomicStream(t, js, "INC")
	var fs []failure
	add := func(name string, err, is error) { fs = append(fs, failure{name, err, is}) }

	_, err := extra.NewBatchPublisher(nil)
	add("NewBatchPublisher(nil)", err, conn.ErrInvalidOption)
	_, err = extra.NewBatchPublisher(js, extra.AckEvery(-1))
	add("NewBatchPublisher with a bad option", err, conn.ErrInvalidOption)
	_, err = extra.PublishBatch(ctx, js, nil)
	add("PublishBatch of nothing", err, extra.ErrEmptyBatch)
	_, err = extra.PublishBatchSeq(ctx, js, slices.Values([]extra.BatchMsg{}))
	add("PublishBatchSeq of nothing", err, extra.ErrEmptyBatch)
	_, err = extra.PublishBatch(ctx, js, make([]extra.BatchMsg, 3), extra.MaxBatchSize(2))
	add("PublishBatch too large", err, extra.ErrBatchTooLarge)
	//lint:ignore SA1012 a nil context is a failure under test
	_, err = extra.PublishBatch(nil, js, []extra.BatchMsg{{Subject: "inc.a"}})
	add("PublishBatch(nil ctx)", err, conn.ErrNilContext)
	_, err = extra.PublishBatch(ctx, js, []extra.BatchMsg{
		{Subject: "inc.a", Opts: []jsapi.PubOpt{jsapi.MsgID("x")}},
		{Subject: "inc.a", Opts: []jsapi.PubOpt{jsapi.MsgID("x")}}})
	add("PublishBatch with a duplicate message ID", err, jsapi.ErrAtomicDuplicateMsgID)

	b, _ := extra.NewBatchPublisher(js)
	add("Add to a stream without atomic publish", b.Add(ctx, "plain.a", []byte("x")), jsapi.ErrAtomicDisabled)
	add("Add after a failure", b.Add(ctx, "inc.a", nil), extra.ErrBatchClosed)
	b, _ = extra.NewBatchPublisher(js)
	_, err = b.CommitEOB(ctx)
	add("CommitEOB of nothing", err, extra.ErrEmptyBatch)
	b.Discard()
	add("AddMsg after Discard", b.AddMsg(ctx, "inc.a", nil, nil), extra.ErrBatchClosed)
	_, err = b.Commit(ctx, "inc.a", nil)
	add("Commit after Discard", err, extra.ErrBatchClosed)
	_, err = b.CommitMsg(ctx, "inc.a", nil, nil)
	add("CommitMsg after Discard", err, extra.ErrBatchClosed)

	b, _ = extra.NewBatchPublisher(js)
	if err := b.Add(ctx, "inc.a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	extra.SkipAtomicSeq(b)
	_, err = b.Commit(ctx, "inc.c", []byte("3"))
	add("Commit of an incomplete batch", err, jsapi.ErrAtomicIncomplete)

	done, cancel := context.WithCancel(ctx)
	cancel()
	b, _ = extra.NewBatchPublisher(js)
	add("Add with a done context", b.Add(done, "inc.a", nil), context.Canceled)

	checkFamily(t, extra.ErrBatchPublish, extra.ErrFastPublish, fs)
}

// Every failure of the fast publisher matches extra.ErrFastPublish, and
// still its own sentinel: what its calls return and what OnError is told.
func TestFastPublishErrorFamily(t *testing.T) {
	_, _, js := startJS(t)
	ctx := ctxT(t)
	stream(t, js, jsapi.StreamConfig{Name: "PLAIN", Subjects: []string{"plain.>"}})
	fastStream(t, js, "FF")
	var fs []failure
	add := func(name string, err, is error) { fs = append(fs, failure{name, err, is}) }

	_, err := extra.NewFastPublisher(nil)
	add("NewFastPublisher(nil)", err, conn.ErrInvalidOption)
	_, err = extra.NewFastPublisher(js, extra.Flow(0))
	add("NewFastPublisher with a bad option", err, conn.ErrInvalidOption)

	p, _ := extra.NewFastPublisher(js)
	_, err = p.Close(ctx)
	add("Close of nothing", err, extra.ErrEmptyBatch)
	_, err = p.Add(ctx, "plain.a", []byte("x"))
	add("Add to a stream without batch publish", err, jsapi.ErrBatchDisabled)
	_, err = p.Commit(ctx, "ff.a", nil)
	add("Commit after a failure", err, extra.ErrBatchClosed)

	p, _ = extra.NewFastPublisher(js)
	if err := p.Abort(); err != nil {
		t.Fatal(err)
	}
	_, err = p.AddMsg(ctx, "ff.a", nil, nil)
	add("AddMsg after Abort", err, extra.ErrBatchClosed)
	_, err = p.CommitMsg(ctx, "ff.a", nil, nil)
	add("CommitMsg after Abort", err, extra.ErrBatchClosed)

	// A gap in gap mode fail: Commit's error and the OnError report.
	var reported []error
	onError := extra.OnError(func(err error) { reported = append(reported, err) })
	if p, err = extra.NewFastPublisher(js, onError); err != nil {
		t.Fatalf("OnError in gap mode fail: %v", err)
	}
	for range 3 {
		if _, err := p.Add(ctx, "ff.a", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	extra.SkipFastSeq(p)
	if _, err := p.Add(ctx, "ff.a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	_, err = p.Commit(ctx, "ff.a", nil)
	add("Commit after a gap", err, extra.ErrGap)
	if len(reported) != 1 {
		t.Fatalf("OnError was told %v; want the gap", reported)
	}
	add("OnError's gap (gap mode fail)", reported[0], extra.ErrGap)

	// A failed message in gap mode ok goes to OnError only.
	reported = nil
	p, _ = extra.NewFastPublisher(js, extra.Gap(extra.GapOK), onError)
	if _, err := p.Add(ctx, "ff.b", []byte("x"), jsapi.ExpectLastSubjectSeq(42)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Commit(ctx, "ff.b", nil); err != nil {
		t.Fatal(err)
	}
	if len(reported) != 1 {
		t.Fatalf("OnError was told %v; want the failed message", reported)
	}
	add("OnError's failed message (gap mode ok)", reported[0], extra.ErrFlow)

	checkFamily(t, extra.ErrFastPublish, extra.ErrBatchPublish, fs)
}

// OnError is accepted in the default gap mode (fail), as seed 001's
// on_error is: it is told of the gap that ends the batch, which the next
// call also returns.
func TestFastOnErrorInGapFailMode(t *testing.T) {
	_, _, js := startJS(t)
	fastStream(t, js, "OE")
	ctx := ctxT(t)
	var reported []error
	p, err := extra.NewFastPublisher(js, extra.OnError(func(err error) { reported = append(reported, err) }))
	if err != nil {
		t.Fatalf("OnError in gap mode fail: %v", err)
	}
	if p.GapMode() != extra.GapFail {
		t.Fatalf("gap mode %v", p.GapMode())
	}
	for range 2 {
		if _, err := p.Add(ctx, "oe.a", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	extra.SkipFastSeq(p)
	if _, err := p.Add(ctx, "oe.a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	_, err = p.Commit(ctx, "oe.a", nil)
	var ge *extra.GapError
	if !errors.As(err, &ge) || ge.Expected != 3 || ge.Received != 4 {
		t.Fatalf("Commit after a gap: %v", err)
	}
	if len(reported) != 1 || !errors.As(reported[0], &ge) || ge.Expected != 3 {
		t.Fatalf("OnError was told %v; want the gap once", reported)
	}
}
