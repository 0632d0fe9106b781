package conn_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
)

// longSubject is a valid subject of n bytes.
func longSubject(n int) string {
	return "long." + strings.Repeat("x", n-len("long."))
}

// TestSubjectTooLongForControlLine: a subject that would make the protocol
// line longer than the server's max_control_line is refused with
// ErrSubjectTooLong (also ErrBadSubject) before anything is sent, for
// publishes, requests and subscriptions; the connection stays up. The
// longest subject that fits is accepted by the server.
func TestSubjectTooLongForControlLine(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	ctx := ctxT(t)
	long := longSubject(5000)
	before := nc.Stats()

	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, conn.ErrSubjectTooLong) || !errors.Is(err, conn.ErrBadSubject) {
			t.Errorf("%s: %v, want ErrSubjectTooLong matching ErrBadSubject", what, err)
		}
	}
	check("Publish", nc.Publish(long, []byte("x")))
	check("PublishMsg with headers", nc.PublishMsg(long, "", proto.NewHeader("K", "v"), []byte("x")))
	check("PublishMsg with a long reply", nc.PublishMsg("short", longSubject(4095), nil, nil))
	_, err := nc.Request(ctx, long, []byte("x"))
	check("Request", err)
	_, err = nc.Subscribe(long)
	check("Subscribe", err)
	_, err = nc.QueueSubscribe("short", longSubject(4090))
	check("QueueSubscribe with a long queue group", err)

	if got := nc.Stats().OutMsgs; got != before.OutMsgs {
		t.Fatalf("%d messages sent for refused subjects", got-before.OutMsgs)
	}

	// The longest subject a PUB line takes, "PUB <subject> 0": the server
	// accepts it and the connection carries on.
	limit := conn.DefaultMaxControlLine
	fits := longSubject(limit - len(" 0"))
	if err := nc.Publish(fits, nil); err != nil {
		t.Fatalf("a %d-byte subject: %v", len(fits), err)
	}
	check("one byte more", nc.Publish(longSubject(limit-len(" 0")+1), nil))

	// The longest subject a SUB line takes for any subscription ID, and a
	// message on it with the longest reply its PUB line takes: the MSG
	// line the server delivers is longer than the limit (it adds the
	// subscription ID), and the connection reads it.
	subj := longSubject(limit - 22)
	reply := longSubject(limit - len(subj) - len("  1"))
	far, err := nc.Subscribe(subj)
	if err != nil {
		t.Fatalf("subscribe to a %d-byte subject: %v", len(subj), err)
	}
	if err := nc.PublishMsg(subj, reply, nil, []byte("1")); err != nil {
		t.Fatal(err)
	}
	check("reply one byte longer", nc.PublishMsg(subj, reply+"x", nil, []byte("1")))
	if m, err := far.NextMsg(ctx); err != nil || m.Subject != subj || m.Reply != reply {
		t.Fatalf("message on the %d-byte subject: %v", len(subj), err)
	}
	sub, err := nc.Subscribe("after")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("after", []byte("ok")); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(ctx); err != nil || string(m.Data) != "ok" {
		t.Fatalf("publish after the refusals: %v", err)
	}
	st := nc.Stats()
	if st.Reconnects != before.Reconnects || st.Disconnects != before.Disconnects || st.ServerErrors != before.ServerErrors || !nc.IsConnected() {
		t.Fatalf("the connection did not stay up: reconnects %d, disconnects %d, server errors %d",
			st.Reconnects, st.Disconnects, st.ServerErrors)
	}
}

// TestMaxControlLineRaised: against a server configured with a longer
// max_control_line, MaxControlLine lets subjects use it.
func TestMaxControlLineRaised(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false), natstest.ConfigText("max_control_line: 8192"))
	nc := connect(t, s.URL(), conn.MaxControlLine(8192))
	ctx := ctxT(t)
	long := longSubject(5000)
	sub, err := nc.Subscribe(long)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish(long, []byte("big")); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(ctx); err != nil || m.Subject != long || string(m.Data) != "big" {
		t.Fatalf("message on a %d-byte subject: %v", len(long), err)
	}
	if err := nc.Publish(longSubject(9000), nil); !errors.Is(err, conn.ErrSubjectTooLong) {
		t.Fatalf("9000-byte subject with MaxControlLine(8192): %v", err)
	}
	if st := nc.Stats(); st.Disconnects != 0 {
		t.Fatalf("%d disconnects", st.Disconnects)
	}
	if _, err := conn.Connect(ctx, s.URL(), conn.MaxControlLine(10)); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("MaxControlLine(10): %v", err)
	}
}
