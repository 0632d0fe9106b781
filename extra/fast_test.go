package extra_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
)

func fastStream(t *testing.T, js *jsapi.JS, name string) *jsapi.Stream {
	return stream(t, js, jsapi.StreamConfig{Name: name, Subjects: []string{strings.ToLower(name) + ".>"},
		AllowBatchPublish: true, AllowDirect: true})
}

func TestFastIngest100k(t *testing.T) {
	_, _, js := startJS(t)
	st := fastStream(t, js, "FI")
	ctx := ctxT(t)
	p, err := extra.NewFastPublisher(js, extra.Flow(200))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(p.Inbox(), "."+p.BatchID()) || p.GapMode() != extra.GapFail {
		t.Fatalf("inbox %q id %q", p.Inbox(), p.BatchID())
	}
	const n = 100_000
	data := make([]byte, 16)
	var acks int
	var last uint64
	for i := 1; i <= n; i++ {
		a, err := p.Add(ctx, "fi.x", data)
		if err != nil {
			t.Fatalf("add %d: %v", i, err)
		}
		if a.BatchSeq != uint64(i) || a.AckSeq < last {
			t.Fatalf("add %d: %+v after ack %d", i, a, last)
		}
		// Flow control: never more than MaxOutstandingAcks (2) flow
		// intervals ahead of the acknowledged sequence.
		if a.BatchSeq > a.AckSeq+2*uint64(p.Flow()) {
			t.Fatalf("add %d ran ahead: %+v, flow %d", i, a, p.Flow())
		}
		if a.AckSeq > last {
			acks++
			if a.AckSeq%200 != 0 {
				t.Fatalf("flow ack at %d, flow is 200", a.AckSeq)
			}
		}
		last = a.AckSeq
	}
	if p.Flow() != 200 || acks < n/200/2 {
		t.Fatalf("flow %d, %d acknowledgements seen", p.Flow(), acks)
	}
	ack, err := p.Commit(ctx, "fi.end", []byte("end"))
	if err != nil {
		t.Fatal(err)
	}
	if ack.Stream != "FI" || ack.Sequence != n+1 || ack.BatchID != p.BatchID() || ack.BatchSize != n+1 {
		t.Fatalf("ack %+v", ack)
	}
	if p.Size() != n+1 || !p.IsClosed() {
		t.Fatalf("size %d closed %v", p.Size(), p.IsClosed())
	}
	if _, err := p.Add(ctx, "fi.x", data); !errors.Is(err, extra.ErrBatchClosed) {
		t.Fatalf("add after commit: %v", err)
	}
	if got := msgCount(t, st); got != n+1 {
		t.Fatalf("%d stored", got)
	}
}

func TestFastGapFails(t *testing.T) {
	_, _, js := startJS(t)
	st := fastStream(t, js, "GF")
	ctx := ctxT(t)
	p, _ := extra.NewFastPublisher(js)
	for range 5 {
		if _, err := p.Add(ctx, "gf.a", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	extra.SkipFastSeq(p) // message 6 "lost"
	if _, err := p.Add(ctx, "gf.a", []byte("7")); err != nil {
		t.Fatal(err)
	}
	_, err := p.Commit(ctx, "gf.a", []byte("8"))
	var ge *extra.GapError
	if !errors.Is(err, extra.ErrGap) || !errors.As(err, &ge) {
		t.Fatalf("commit after a gap: %v", err)
	}
	if ge.Expected != 6 || ge.Received != 7 || ge.PubAck == nil || ge.PubAck.BatchSize != 5 || ge.PubAck.BatchID != p.BatchID() {
		t.Fatalf("gap %+v ack %+v", ge, ge.PubAck)
	}
	if !p.IsClosed() {
		t.Fatal("publisher open after a gap in fail mode")
	}
	if n := msgCount(t, st); n != 5 {
		t.Fatalf("%d stored, want the 5 before the gap", n)
	}
}

func TestFastGapOK(t *testing.T) {
	_, _, js := startJS(t)
	st := fastStream(t, js, "GO")
	ctx := ctxT(t)
	var reported []error
	p, err := extra.NewFastPublisher(js, extra.Gap(extra.GapOK), extra.OnError(func(err error) { reported = append(reported, err) }))
	if err != nil || p.GapMode() != extra.GapOK {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := p.Add(ctx, "go.a", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	extra.SkipFastSeq(p)
	for range 3 {
		if _, err := p.Add(ctx, "go.a", []byte("y")); err != nil {
			t.Fatal(err)
		}
	}
	ack, err := p.Commit(ctx, "go.a", []byte("z"))
	if err != nil {
		t.Fatal(err)
	}
	if ack.BatchSize != 10 || ack.Sequence != 9 {
		t.Fatalf("ack %+v", ack)
	}
	if len(reported) != 1 {
		t.Fatalf("reported %v", reported)
	}
	var ge *extra.GapError
	if !errors.As(reported[0], &ge) || ge.Expected != 6 || ge.Received != 7 || ge.PubAck != nil {
		t.Fatalf("reported %v", reported[0])
	}
	if n := msgCount(t, st); n != 9 {
		t.Fatalf("%d stored", n)
	}
}

// A message failing its check: in gap mode fail the batch ends there; in
// gap mode ok it is reported and the batch goes on.
func TestFastFlowError(t *testing.T) {
	_, _, js := startJS(t)
	st := fastStream(t, js, "FE")
	ctx := ctxT(t)

	p, _ := extra.NewFastPublisher(js)
	for i := 1; i <= 4; i++ {
		var opts []jsapi.PubOpt
		if i == 3 {
			opts = append(opts, jsapi.ExpectLastSubjectSeq(42))
		}
		if _, err := p.Add(ctx, "fe.a", []byte("x"), opts...); err != nil {
			t.Fatal(err)
		}
	}
	_, err := p.Commit(ctx, "fe.a", nil)
	var fe *extra.FastAPIError
	if !errors.Is(err, extra.ErrFlow) || !errors.Is(err, jsapi.ErrWrongLastSequence) || !errors.As(err, &fe) {
		t.Fatalf("commit: %v", err)
	}
	if fe.Seq != 3 || !fe.Flow || fe.PubAck == nil || fe.PubAck.BatchSize != 2 {
		t.Fatalf("flow error %+v ack %+v", fe, fe.PubAck)
	}
	if n := msgCount(t, st); n != 2 {
		t.Fatalf("%d stored", n)
	}

	var reported []error
	p, _ = extra.NewFastPublisher(js, extra.Gap(extra.GapOK), extra.OnError(func(err error) { reported = append(reported, err) }))
	for i := 1; i <= 4; i++ {
		var opts []jsapi.PubOpt
		if i == 2 {
			opts = append(opts, jsapi.ExpectLastSubjectSeq(42))
		}
		if _, err := p.Add(ctx, "fe.b", []byte("x"), opts...); err != nil {
			t.Fatal(err)
		}
	}
	ack, err := p.Commit(ctx, "fe.b", nil)
	if err != nil || ack.BatchSize != 5 {
		t.Fatalf("commit in gap mode ok: %+v %v", ack, err)
	}
	if len(reported) != 1 || !errors.As(reported[0], &fe) || fe.Seq != 2 || !errors.Is(fe, jsapi.ErrWrongLastSequence) {
		t.Fatalf("reported %v", reported)
	}
	if n := msgCount(t, st); n != 2+4 {
		t.Fatalf("%d stored", n)
	}

	// Gap mode ok, the commit itself fails its check: the batch ends
	// without it and Commit reports why.
	reported = nil
	p, _ = extra.NewFastPublisher(js, extra.Gap(extra.GapOK), extra.OnError(func(err error) { reported = append(reported, err) }))
	if _, err := p.Add(ctx, "fe.c", []byte("x")); err != nil {
		t.Fatal(err)
	}
	_, err = p.Commit(ctx, "fe.c", nil, jsapi.ExpectLastSubjectSeq(42))
	if !errors.As(err, &fe) || fe.Seq != 2 || fe.PubAck == nil || fe.PubAck.BatchSize != 1 || !errors.Is(err, jsapi.ErrWrongLastSequence) {
		t.Fatalf("failing commit in gap mode ok: %v", err)
	}
	if n := msgCount(t, st); n != 2+4+1 {
		t.Fatalf("%d stored", n)
	}
}

func TestFastAbortKeepsStored(t *testing.T) {
	_, _, js := startJS(t)
	st := fastStream(t, js, "AB")
	ctx := ctxT(t)
	p, _ := extra.NewFastPublisher(js, extra.Flow(4))
	for range 10 {
		if _, err := p.Add(ctx, "ab.a", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := p.Abort(); err != nil {
		t.Fatal(err)
	}
	if !p.IsClosed() {
		t.Fatal("open after abort")
	}
	if _, err := p.Add(ctx, "ab.a", nil); !errors.Is(err, extra.ErrBatchClosed) {
		t.Fatalf("add after abort: %v", err)
	}
	if _, err := p.Close(ctx); !errors.Is(err, extra.ErrBatchClosed) {
		t.Fatalf("close after abort: %v", err)
	}
	eventually(t, "10 stored messages", func() bool { return msgCount(t, st) == 10 })
}

func TestFastCloseAndCommitAcks(t *testing.T) {
	_, _, js := startJS(t)
	st := fastStream(t, js, "CL")
	ctx := ctxT(t)

	p, _ := extra.NewFastPublisher(js)
	if _, err := p.Close(ctx); !errors.Is(err, extra.ErrEmptyBatch) {
		t.Fatalf("close of an empty batch: %v", err)
	}
	if p.IsClosed() {
		t.Fatal("closed by a failed Close")
	}
	for range 3 {
		if _, err := p.Add(ctx, "cl.a", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	ack, err := p.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The end-of-batch marker is not stored nor counted.
	if ack.BatchSize != 3 || ack.Sequence != 3 || ack.BatchID != p.BatchID() || p.Size() != 3 {
		t.Fatalf("close ack %+v size %d", ack, p.Size())
	}
	if n := msgCount(t, st); n != 3 {
		t.Fatalf("%d stored", n)
	}

	// A batch of one: the commit is the first message.
	p, _ = extra.NewFastPublisher(js)
	ack, err = p.Commit(ctx, "cl.b", []byte("only"))
	if err != nil || ack.BatchSize != 1 || ack.Sequence != 4 || ack.BatchID != p.BatchID() {
		t.Fatalf("single commit %+v %v", ack, err)
	}

	// Headers and options travel with fast messages.
	p, _ = extra.NewFastPublisher(js)
	if _, err := p.AddMsg(ctx, "cl.c", proto.NewHeader("X-K", "v"), []byte("h"), jsapi.MsgID("id-1")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Commit(ctx, "cl.c", nil); err != nil {
		t.Fatal(err)
	}
	m, err := st.GetMsg(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := m.Header.Lookup("X-K"); v != "v" {
		t.Fatalf("header %q", m.Header)
	}
}

// The server lowers the flow of a batch that shares the stream with
// another one, and the publisher follows it.
func TestFastFlowFollowsServer(t *testing.T) {
	_, _, js := startJS(t)
	fastStream(t, js, "FL")
	ctx := ctxT(t)
	p1, _ := extra.NewFastPublisher(js, extra.Flow(10), extra.MaxOutstandingAcks(1))
	if _, err := p1.Add(ctx, "fl.a", nil); err != nil {
		t.Fatal(err)
	}
	if p1.Flow() != 10 {
		t.Fatalf("first batch flow %d", p1.Flow())
	}
	p2, _ := extra.NewFastPublisher(js, extra.Flow(10), extra.MaxOutstandingAcks(1))
	if _, err := p2.Add(ctx, "fl.b", nil); err != nil {
		t.Fatal(err)
	}
	if p2.Flow() != 1 {
		t.Fatalf("second batch starts at flow %d, want 1", p2.Flow())
	}
	for i := 2; i <= 50; i++ {
		a, err := p2.Add(ctx, "fl.b", nil)
		if err != nil {
			t.Fatal(err)
		}
		if a.BatchSeq > a.AckSeq+uint64(p2.Flow()) {
			t.Fatalf("ran ahead: %+v flow %d", a, p2.Flow())
		}
	}
	if p2.Flow() != 10 {
		t.Fatalf("flow after ramp-up %d, want the requested 10", p2.Flow())
	}
	if ack, err := p2.Commit(ctx, "fl.b", nil); err != nil || ack.BatchSize != 51 {
		t.Fatalf("commit %+v %v", ack, err)
	}
	if ack, err := p1.Close(ctx); err != nil || ack.BatchSize != 1 {
		t.Fatalf("close %+v %v", ack, err)
	}
}

func TestFastErrors(t *testing.T) {
	s := natstest.NewServer(t, natstest.Configure(func(o *server.Options) {
		o.JetStreamLimits.MaxBatchInflightPerStream = 2
	}))
	nc := connect(t, s.URL())
	js := newJS(t, nc)
	ctx := ctxT(t)
	stream(t, js, jsapi.StreamConfig{Name: "PLAIN", Subjects: []string{"plain.>"}})
	fastStream(t, js, "TM")

	for _, o := range []extra.FastOpt{extra.Flow(0), extra.Flow(65536), extra.MaxOutstandingAcks(0), extra.MaxOutstandingAcks(4),
		extra.FastAckTimeout(-1), extra.PingInterval(0), extra.Gap(7), {}} {
		if _, err := extra.NewFastPublisher(js, o); !errors.Is(err, conn.ErrInvalidOption) {
			t.Fatalf("option %+v: %v", o, err)
		}
	}
	if _, err := extra.NewFastPublisher(js, extra.FastAckTimeout(time.Second), extra.PingInterval(2*time.Second)); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("ping interval above ack timeout: %v", err)
	}

	// Not enabled: the first message's reply.
	p, _ := extra.NewFastPublisher(js)
	_, err := p.Add(ctx, "plain.a", []byte("x"))
	var fe *extra.FastAPIError
	if !errors.Is(err, jsapi.ErrBatchDisabled) || !errors.As(err, &fe) || fe.Seq != 1 || fe.Flow {
		t.Fatalf("not enabled: %v", err)
	}
	if !p.IsClosed() {
		t.Fatal("open after a server error")
	}

	// No stream.
	p, _ = extra.NewFastPublisher(js)
	if _, err := p.Add(ctx, "nowhere.a", nil); !errors.Is(err, jsapi.ErrNoStreamResponse) {
		t.Fatalf("no stream: %v", err)
	}

	// Too many fast batches in flight on the stream (limit set to 2).
	var ps []*extra.FastPublisher
	for i := range 3 {
		p, _ := extra.NewFastPublisher(js)
		_, err := p.Add(ctx, "tm.a", nil)
		if i < 2 {
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
			continue
		}
		if !errors.Is(err, jsapi.ErrBatchTooManyInflight) {
			t.Fatalf("third batch: %v", err)
		}
	}
	for _, p := range ps {
		if _, err := p.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// Validation failures leave the publisher usable.
	p, _ = extra.NewFastPublisher(js)
	if _, err := p.Add(ctx, "tm.*", nil); !errors.Is(err, conn.ErrBadSubject) {
		t.Fatalf("wildcard subject: %v", err)
	}
	if _, err := p.Add(ctx, "tm.a", nil, jsapi.TTL(time.Millisecond)); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("bad option: %v", err)
	}
	if _, err := p.Add(ctx, "tm.a", make([]byte, 2<<20)); !errors.Is(err, conn.ErrMaxPayload) || !errors.Is(err, extra.ErrPublishFailed) {
		t.Fatalf("oversized: %v", err)
	}
	if p.IsClosed() || p.Size() != 0 {
		t.Fatal("validation failures changed the publisher")
	}
	if ack, err := p.Commit(ctx, "tm.a", nil); err != nil || ack.BatchSize != 1 {
		t.Fatalf("commit after validation failures: %+v %v", ack, err)
	}
}

// A responder that is not a stream: replies it cannot trust fail the batch.
func TestFastInvalidReplies(t *testing.T) {
	s, _, js := startJS(t)
	ctx := ctxT(t)
	fake := connect(t, s.URL())
	reply := map[string]string{
		"fake.mismatch": `{"stream":"X","seq":9,"batch":"another","count":1}`,
		"fake.count":    "",
		"fake.garbage":  `not json`,
	}
	sub, err := fake.SubscribeFunc("fake.>", func(m *conn.Msg) {
		r := reply[m.Subject]
		if strings.HasSuffix(m.Reply, ".1.0.$FI") { // a start
			r = `{"type":"ack","seq":0,"msgs":10}`
		} else if m.Subject == "fake.count" {
			// Name the batch from the reply subject, count wrongly.
			toks := strings.Split(m.Reply, ".")
			r = fmt.Sprintf(`{"stream":"X","seq":9,"batch":%q,"count":7}`, toks[len(toks)-6])
		}
		m.Respond([]byte(r))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := fake.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for subj, want := range map[string]error{"fake.mismatch": extra.ErrInvalidBatchAck, "fake.count": extra.ErrInvalidBatchAck, "fake.garbage": jsapi.ErrBadResponse} {
		p, _ := extra.NewFastPublisher(js)
		if _, err := p.Add(ctx, subj, nil); err != nil {
			t.Fatalf("%s: add: %v", subj, err)
		}
		if _, err := p.Commit(ctx, subj, nil); !errors.Is(err, want) {
			t.Fatalf("%s: commit: %v", subj, err)
		}
		if !p.IsClosed() {
			t.Fatalf("%s: open", subj)
		}
	}

	// The atomic publisher checks its commit acknowledgement too.
	b, _ := extra.NewBatchPublisher(js, extra.AckFirst(false))
	if _, err := b.Commit(ctx, "fake.mismatch", nil); !errors.Is(err, extra.ErrInvalidBatchAck) {
		t.Fatalf("atomic mismatch: %v", err)
	}
}

// TestFastDuplicatesReported: a fast batch whose message repeats a
// message ID already stored reports it the way the server does. A batch of
// one that commits at once gets a PubAck marked Duplicate with the original
// sequence; a batch made only of duplicates commits with its full size and
// stores nothing; a batch mixing both stores only the new messages. The
// stream never holds a second copy.
func TestFastDuplicatesReported(t *testing.T) {
	_, _, js := startJS(t)
	st := fastStream(t, js, "FD")
	ctx := ctxT(t)
	first, err := js.Publish(ctx, "fd.a", []byte("one"), jsapi.MsgID("id-1"))
	if err != nil || first.Sequence != 1 {
		t.Fatalf("publish: %+v %v", first, err)
	}

	p, err := extra.NewFastPublisher(js)
	if err != nil {
		t.Fatal(err)
	}
	ack, err := p.Commit(ctx, "fd.a", []byte("one again"), jsapi.MsgID("id-1"))
	if err != nil {
		t.Fatal(err)
	}
	if !ack.Duplicate || ack.Sequence != 1 || ack.BatchID != p.BatchID() || ack.BatchSize != 1 {
		t.Fatalf("one-message batch of a duplicate: %+v", ack)
	}

	p, err = extra.NewFastPublisher(js, extra.Flow(2))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := p.Add(ctx, "fd.a", []byte("dup"), jsapi.MsgID("id-1")); err != nil {
			t.Fatalf("add %d: %v", i, err)
		}
	}
	ack, err = p.Commit(ctx, "fd.a", []byte("dup"), jsapi.MsgID("id-1"))
	if err != nil {
		t.Fatal(err)
	}
	if ack.Sequence != 0 || ack.BatchSize != 5 || ack.BatchID != p.BatchID() || ack.Stream != "FD" {
		t.Fatalf("batch of duplicates: %+v, want sequence 0 (nothing stored)", ack)
	}

	p, err = extra.NewFastPublisher(js)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Add(ctx, "fd.a", []byte("dup"), jsapi.MsgID("id-1")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Add(ctx, "fd.b", []byte("new"), jsapi.MsgID("id-2")); err != nil {
		t.Fatal(err)
	}
	ack, err = p.Commit(ctx, "fd.c", []byte("new too"), jsapi.MsgID("id-3"))
	if err != nil {
		t.Fatal(err)
	}
	if ack.Sequence != 3 || ack.BatchSize != 3 || ack.Duplicate {
		t.Fatalf("mixed batch: %+v", ack)
	}
	if got := msgCount(t, st); got != 3 {
		t.Fatalf("stream holds %d messages, want 3 (one per message ID)", got)
	}
	for seq, want := range map[uint64]string{1: "one", 2: "new", 3: "new too"} {
		m, err := st.GetMsg(ctx, seq)
		if err != nil || string(m.Data) != want {
			t.Fatalf("seq %d: %v %q, want %q", seq, err, m.Data, want)
		}
	}
}

// A dead ctx sends nothing and leaves either publisher usable: the batch
// goes on and counts only what was sent.
func TestBatchPublishersDeadContext(t *testing.T) {
	_, _, js := startJS(t)
	st := stream(t, js, jsapi.StreamConfig{Name: "DC", Subjects: []string{"dc.>"}, AllowAtomicPublish: true, AllowBatchPublish: true})
	ctx := ctxT(t)
	dead, cancel := context.WithCancel(context.Background())
	cancel()

	b, err := extra.NewBatchPublisher(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Add(ctx, "dc.a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(dead, "dc.a", []byte("lost")); !errors.Is(err, context.Canceled) {
		t.Fatalf("atomic add with a dead ctx: %v", err)
	}
	if _, err := b.Commit(dead, "dc.a", []byte("lost")); !errors.Is(err, context.Canceled) {
		t.Fatalf("atomic commit with a dead ctx: %v", err)
	}
	ack, err := b.Commit(ctx, "dc.a", []byte("2"))
	if err != nil || ack.BatchSize != 2 {
		t.Fatalf("atomic commit: %+v %v", ack, err)
	}

	p, err := extra.NewFastPublisher(js)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Add(dead, "dc.b", []byte("lost")); !errors.Is(err, context.Canceled) {
		t.Fatalf("fast add with a dead ctx: %v", err)
	}
	if _, err := p.Add(ctx, "dc.b", []byte("3")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Close(dead); !errors.Is(err, context.Canceled) {
		t.Fatalf("fast close with a dead ctx: %v", err)
	}
	fa, err := p.Commit(ctx, "dc.b", []byte("4"))
	if err != nil || fa.BatchSize != 2 {
		t.Fatalf("fast commit: %+v %v", fa, err)
	}
	if n := msgCount(t, st); n != 4 {
		t.Fatalf("stream holds %d messages, want 4 (nothing from the dead contexts)", n)
	}
}
