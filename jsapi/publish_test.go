package jsapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
)

// pubEnv starts a JetStream server and a stream "P" on "p.>" (memory).
func pubEnv(t *testing.T, cfg string) (*jsapi.JS, *conn.Conn, context.Context) {
	t.Helper()
	s := natstest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	nc, err := conn.Connect(ctx, s.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	js, err := jsapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"name":"P","subjects":["p.>"],"storage":"memory"` + cfg + `}`
	m, err := nc.Request(ctx, "$JS.API.STREAM.CREATE.P", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if contains(m.Data, `"error"`) {
		t.Fatalf("create stream: %s", m.Data)
	}
	return js, nc, ctx
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }

func TestPublishAck(t *testing.T) {
	js, _, ctx := pubEnv(t, "")
	for i := 1; i <= 3; i++ {
		ack, err := js.Publish(ctx, "p.a", []byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		if ack.Stream != "P" || ack.Sequence != uint64(i) || ack.Duplicate {
			t.Fatalf("ack %+v", ack)
		}
	}
}

func TestPublishDedup(t *testing.T) {
	js, _, ctx := pubEnv(t, "")
	a1, err := js.Publish(ctx, "p.a", []byte("x"), jsapi.MsgID("m-1"))
	if err != nil {
		t.Fatal(err)
	}
	js.Publish(ctx, "p.b", []byte("y"))
	a2, err := js.Publish(ctx, "p.a", []byte("x"), jsapi.MsgID("m-1"))
	if err != nil {
		t.Fatal(err)
	}
	if !a2.Duplicate || a2.Sequence != a1.Sequence {
		t.Fatalf("retry with the same ID: %+v, original %+v", a2, a1)
	}
}

func TestPublishExpectations(t *testing.T) {
	js, _, ctx := pubEnv(t, "")
	a, err := js.Publish(ctx, "p.a", []byte("1"), jsapi.MsgID("id-1"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		opts []jsapi.PubOpt
		want error
	}{
		{"stream ok", []jsapi.PubOpt{jsapi.ExpectStream("P")}, nil},
		{"stream wrong", []jsapi.PubOpt{jsapi.ExpectStream("Q")}, jsapi.ErrWrongStream},
		{"last seq wrong", []jsapi.PubOpt{jsapi.ExpectLastSeq(a.Sequence + 100)}, jsapi.ErrWrongLastSequence},
		{"last subject seq wrong", []jsapi.PubOpt{jsapi.ExpectLastSubjectSeq(999)}, jsapi.ErrWrongLastSequence},
		{"last msg id wrong", []jsapi.PubOpt{jsapi.ExpectLastMsgID("nope")}, jsapi.ErrWrongLastMsgID},
	}
	for _, c := range cases {
		_, err := js.Publish(ctx, "p.a", []byte("2"), c.opts...)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
		var ae *jsapi.APIError
		if c.want != nil && !errors.As(err, &ae) {
			t.Errorf("%s: not an *APIError: %T", c.name, err)
		}
	}
	// Last sequence right: accepted.
	info, _ := js.Publish(ctx, "p.z", nil)
	if _, err := js.Publish(ctx, "p.z", nil, jsapi.ExpectLastSeq(info.Sequence)); err != nil {
		t.Fatal(err)
	}
	// The subject-scoped check: last message on p.z is info.Sequence+1.
	if _, err := js.Publish(ctx, "p.y", nil, jsapi.ExpectLastSubjectSeq(info.Sequence+1),
		jsapi.ExpectLastSubjectSeqFor("p.z")); err != nil {
		t.Fatalf("subject-scoped expectation: %v", err)
	}
	if _, err := js.Publish(ctx, "p.y", nil, jsapi.ExpectLastSubjectSeq(1),
		jsapi.ExpectLastSubjectSeqFor("p.z")); !errors.Is(err, jsapi.ErrWrongLastSequence) {
		t.Fatalf("wrong subject-scoped expectation: %v", err)
	}
}

func TestPublishRejectedLocally(t *testing.T) {
	js, nc, ctx := pubEnv(t, "")
	before := nc.Stats().OutMsgs
	bad := [][]jsapi.PubOpt{
		{jsapi.ExpectLastSubjectSeqFor("p.z")},
		{jsapi.TTL(500 * time.Millisecond)},
		{jsapi.ExpectStream("a.b")},
		{{}},
	}
	for _, opts := range bad {
		if _, err := js.Publish(ctx, "p.a", nil, opts...); !errors.Is(err, conn.ErrInvalidOption) {
			t.Errorf("%+v: got %v", opts, err)
		}
	}
	for _, h := range []*proto.Header{proto.NewHeader("bad key", "v"), proto.NewHeader("K", "a\r\nInjected: 1")} {
		if _, err := js.PublishMsg(ctx, "p.a", h, nil, jsapi.MsgID("m")); !errors.Is(err, conn.ErrInvalidOption) {
			t.Errorf("header %q with options: got %v", h, err)
		}
		if _, err := js.PublishMsg(ctx, "p.a", h, nil); !errors.Is(err, proto.ErrBadHeader) {
			t.Errorf("header %q: got %v", h, err)
		}
	}
	if _, err := js.Publish(ctx, "p.*", nil); !errors.Is(err, proto.ErrBadSubject) {
		t.Errorf("wildcard subject: %v", err)
	}
	if n := nc.Stats().OutMsgs - before; n != 0 {
		t.Fatalf("%d messages sent for rejected publishes", n)
	}
}

// An empty message ID means no ID: the message is stored without a
// Nats-Msg-Id header, and two such publishes are two messages.
func TestPublishEmptyMsgID(t *testing.T) {
	js, nc, ctx := pubEnv(t, "")
	sub, err := nc.Subscribe("p.noid")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for range 2 {
		ack, err := js.Publish(ctx, "p.noid", []byte("x"), jsapi.MsgID(""))
		if err != nil {
			t.Fatal(err)
		}
		if ack.Duplicate {
			t.Fatalf("ack %+v: duplicate", ack)
		}
		seqs = append(seqs, ack.Sequence)
	}
	if seqs[0] == seqs[1] {
		t.Fatalf("both publishes acked with sequence %d", seqs[0])
	}
	m, err := sub.NextMsg(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Header.Lookup(jsapi.HeaderMsgID); ok {
		t.Fatalf("header %q sent for an empty message ID", jsapi.HeaderMsgID)
	}
}

func TestPublishTTL(t *testing.T) {
	js, _, ctx := pubEnv(t, "")
	if _, err := js.Publish(ctx, "p.a", nil, jsapi.TTL(time.Hour)); !errors.Is(err, jsapi.ErrTTLDisabled) {
		t.Fatalf("TTL on a stream without allow_msg_ttl: %v", err)
	}
	js2, _, ctx2 := pubEnv(t, `,"allow_msg_ttl":true`)
	for _, d := range []time.Duration{time.Hour, 90 * time.Second, jsapi.TTLNever} {
		if _, err := js2.Publish(ctx2, "p.a", nil, jsapi.TTL(d)); err != nil {
			t.Fatalf("TTL %v: %v", d, err)
		}
	}
}

func TestPublishNoStream(t *testing.T) {
	js, _, ctx := pubEnv(t, "")
	start := time.Now()
	_, err := testutil.Retrying(t, js, 1, 10*time.Millisecond).Publish(ctx, "nostream.here", nil)
	if !errors.Is(err, jsapi.ErrNoStreamResponse) {
		t.Fatalf("got %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("no-stream publish should fail after its retries, not its deadline")
	}
}

func TestPublishCounter(t *testing.T) {
	js, _, ctx := pubEnv(t, `,"allow_msg_counter":true`)
	var ack jsapi.PubAck
	var err error
	for _, d := range []int64{5, 10, -3} {
		if ack, err = js.Publish(ctx, "p.count", nil, jsapi.Incr(d)); err != nil {
			t.Fatal(err)
		}
	}
	if ack.Value != "12" {
		t.Fatalf("counter total %q, want 12", ack.Value)
	}
}

func TestPublishSchedule(t *testing.T) {
	js, nc, ctx := pubEnv(t, `,"allow_msg_schedules":true,"allow_msg_ttl":true`)
	at := time.Now().Add(time.Second)
	if _, err := js.Publish(ctx, "p.sched.one", []byte("later"),
		jsapi.ScheduleAt(at), jsapi.ScheduleTarget("p.target")); err != nil {
		t.Fatal(err)
	}
	// The produced message appears on the target subject.
	deadline := time.Now().Add(20 * time.Second)
	for {
		m, err := nc.Request(ctx, "$JS.API.STREAM.MSG.GET.P", []byte(`{"last_by_subj":"p.target"}`))
		if err == nil && contains(m.Data, `"subject":"p.target"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("scheduled message never produced: %v %s", err, m.Data)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestParsePubAck(t *testing.T) {
	cases := []struct {
		in   string
		want jsapi.PubAck
		err  error
	}{
		{`{"stream":"S","seq":5}`, jsapi.PubAck{Stream: "S", Sequence: 5}, nil},
		{`{"stream":"S","seq":5,"duplicate":true,"domain":"hub"}`, jsapi.PubAck{Stream: "S", Sequence: 5, Duplicate: true, Domain: "hub"}, nil},
		{`{"stream":"S","seq":7,"val":"42"}`, jsapi.PubAck{Stream: "S", Sequence: 7, Value: "42"}, nil},
		{`{"stream":"S","seq":9,"batch":"b1","count":3}`, jsapi.PubAck{Stream: "S", Sequence: 9, BatchID: "b1", BatchSize: 3}, nil},
		{` { "stream" : "S" , "seq" : 1 } `, jsapi.PubAck{Stream: "S", Sequence: 1}, nil},
		{`{"stream":"S\u0041","seq":1}`, jsapi.PubAck{Stream: "SA", Sequence: 1}, nil},
		{`{"stream":"S","seq":1,"future":{"x":[1,2]}}`, jsapi.PubAck{Stream: "S", Sequence: 1}, nil},
		{`{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 3"},"stream":"S"}`, jsapi.PubAck{}, jsapi.ErrWrongLastSequence},
		{`{"stream":"S","seq":0}`, jsapi.PubAck{}, jsapi.ErrBadResponse},
		// The commit of a fast batch of duplicates stored nothing.
		{`{"stream":"S","seq":0,"batch":"b2","count":5}`, jsapi.PubAck{Stream: "S", BatchID: "b2", BatchSize: 5}, nil},
		{`{"stream":"S","seq":0,"batch":"b2","count":5,"future":1}`, jsapi.PubAck{Stream: "S", BatchID: "b2", BatchSize: 5}, nil},
		{`{"seq":0,"batch":"b2","count":5}`, jsapi.PubAck{}, jsapi.ErrBadResponse},
		{`{"seq":3}`, jsapi.PubAck{}, jsapi.ErrBadResponse},
		{`{"stream":"S","seq":99999999999999999999}`, jsapi.PubAck{}, jsapi.ErrBadResponse},
		{`not json`, jsapi.PubAck{}, jsapi.ErrBadResponse},
		{``, jsapi.PubAck{}, jsapi.ErrBadResponse},
	}
	for _, c := range cases {
		var got jsapi.PubAck
		err := jsapi.ParsePubAck([]byte(c.in), &got)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%s: got %v, want %v", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v %v, want %+v", c.in, got, err, c.want)
		}
	}
}

func TestParseAckSubject(t *testing.T) {
	md, err := jsapi.ParseAckSubject("$JS.ACK.ORDERS.worker.2.1234.56.1700000000123456789.7")
	if err != nil {
		t.Fatal(err)
	}
	if md.Stream != "ORDERS" || md.Consumer != "worker" || md.NumDelivered != 2 || md.StreamSeq != 1234 ||
		md.ConsumerSeq != 56 || md.Timestamp.UnixNano() != 1700000000123456789 || md.NumPending != 7 || md.Domain != "" {
		t.Fatalf("v1: %+v", md)
	}
	md, err = jsapi.ParseAckSubject("$JS.ACK.hub.ACCHASH.ORDERS.worker.1.2.3.4.5")
	if err != nil || md.Domain != "hub" || md.Stream != "ORDERS" || md.StreamSeq != 2 || md.NumPending != 5 {
		t.Fatalf("v2: %+v %v", md, err)
	}
	md, err = jsapi.ParseAckSubject("$JS.ACK._.ACCHASH.S.c.1.2.3.4.5.rand")
	if err != nil || md.Domain != "" || md.Stream != "S" {
		t.Fatalf("v2 with token: %+v %v", md, err)
	}
	// More than 12 tokens: the server allows extension tokens after the
	// 11th, so they are ignored rather than rejected.
	md, err = jsapi.ParseAckSubject("$JS.ACK.hub.ACCHASH.S.c.1.2.3.4.5.x.y.z")
	if err != nil || md.Domain != "hub" || md.Stream != "S" || md.Consumer != "c" || md.NumDelivered != 1 ||
		md.StreamSeq != 2 || md.ConsumerSeq != 3 || md.Timestamp.UnixNano() != 4 || md.NumPending != 5 {
		t.Fatalf("v2 with 3 extra tokens: %+v %v", md, err)
	}
	for _, bad := range []string{
		"$JS.ACK.S.c.1.2.3.4", "$JS.ACK.S.c.1.2.3.4.5.6", "$JS.NAK.S.c.1.2.3.4.5",
		"$JS.ACK.S.c.1.99999999999999999999.3.4.5", "$JS.ACK.S.c.-1.2.3.4.5", "$JS.ACK..c.1.2.3.4.5",
		"$JS.ACK.S.c.1.2.3.18446744073709551615.5", "", "$JS.ACK.a.b.c.d.e.f.g.h.i.j.k.l.m", // fields not numbers
	} {
		if _, err := jsapi.ParseAckSubject(bad); !errors.Is(err, jsapi.ErrBadAckSubject) {
			t.Errorf("%q: got %v", bad, err)
		}
	}
}

// TestPublishReusesReplySubject: a stream answers each publish once, so a
// loop of publishes reuses one reply subject (the server caches routing per
// subject), while core requests, which may be answered many times, never
// reuse one.
func TestPublishReusesReplySubject(t *testing.T) {
	js, nc, ctx := pubEnv(t, "")
	spy, err := nc.Subscribe("p.>")
	if err != nil {
		t.Fatal(err)
	}
	replies := func(n int) map[string]int {
		t.Helper()
		seen := map[string]int{}
		for range n {
			m, err := spy.NextMsg(ctx)
			if err != nil {
				t.Fatal(err)
			}
			seen[m.Reply]++
		}
		return seen
	}
	for range 5 {
		if _, err := js.Publish(ctx, "p.a", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if seen := replies(5); len(seen) != 1 {
		t.Fatalf("5 publishes used %d reply subjects: %v", len(seen), seen)
	}

	// A JetStream error reply is the only reply too.
	if _, err := js.Publish(ctx, "p.a", []byte("x"), jsapi.ExpectLastSeq(1)); !errors.Is(err, jsapi.ErrWrongLastSequence) {
		t.Fatalf("publish with a wrong last sequence: %v", err)
	}
	if _, err := js.Publish(ctx, "p.a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if seen := replies(2); len(seen) != 1 {
		t.Fatalf("a publish after a JetStream error used a new reply subject: %v", seen)
	}

	// Core requests: a responder on the same connection answers each.
	responder, err := nc.SubscribeFunc("svc", func(m *conn.Msg) { _ = nc.Publish(m.Reply, m.Data) })
	if err != nil {
		t.Fatal(err)
	}
	defer responder.Unsubscribe()
	spySvc, err := nc.Subscribe("svc")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 3 {
		if _, err := nc.Request(ctx, "svc", []byte("q")); err != nil {
			t.Fatal(err)
		}
		m, err := spySvc.NextMsg(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if seen[m.Reply] {
			t.Fatalf("core request reused reply subject %s", m.Reply)
		}
		seen[m.Reply] = true
	}
}
