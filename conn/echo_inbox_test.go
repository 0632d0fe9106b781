package conn_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
)

// TestNoEcho: a NoEcho connection subscribed to a subject it publishes to
// does not receive its own messages, and receives another connection's;
// a connection without the option receives its own.
func TestNoEcho(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	quiet := connect(t, s.URL(), conn.NoEcho())
	other := connect(t, s.URL())
	ctx := ctxT(t)
	qsub, err := quiet.Subscribe("echo.t")
	if err != nil {
		t.Fatal(err)
	}
	osub, err := other.Subscribe("echo.t")
	if err != nil {
		t.Fatal(err)
	}
	for _, nc := range []*conn.Conn{quiet, other} {
		if err := nc.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}

	if err := quiet.Publish("echo.t", []byte("mine")); err != nil {
		t.Fatal(err)
	}
	// The server handles the PUB before the PING of Flush: had it
	// delivered "mine" back, the MSG would have been read before the PONG.
	if err := quiet.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := qsub.Pending(); n != 0 || quiet.Stats().InMsgs != 0 {
		t.Fatalf("the NoEcho connection received its own message (%d pending)", n)
	}
	if m, err := osub.NextMsg(ctx); err != nil || string(m.Data) != "mine" {
		t.Fatalf("the other connection: %v", err)
	}
	if err := other.Publish("echo.t", []byte("theirs")); err != nil {
		t.Fatal(err)
	}
	if m, err := qsub.NextMsg(ctx); err != nil || string(m.Data) != "theirs" {
		t.Fatalf("the NoEcho connection's first message: %v, want the other connection's", err)
	}
	// Without NoEcho a connection hears itself.
	if m, err := osub.NextMsg(ctx); err != nil || string(m.Data) != "theirs" {
		t.Fatalf("the echoing connection's own message: %v", err)
	}
}

// TestInboxPrefix: requests (Request, RequestMany) reply to subjects under
// the connection's inbox prefix, as a responder sees, and NewInbox uses
// it; an invalid prefix is refused.
func TestInboxPrefix(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	ctx := ctxT(t)
	const prefix = "_MY.inbox"
	nc := connect(t, s.URL(), conn.InboxPrefix(prefix))
	svc := connect(t, s.URL())
	replies := make(chan string, 4)
	sub, err := svc.SubscribeFunc("svc.echo", func(m *conn.Msg) {
		replies <- m.Reply
		_ = m.Respond(m.Data)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := svc.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	if m, err := nc.Request(ctx, "svc.echo", []byte("hi")); err != nil || string(m.Data) != "hi" {
		t.Fatalf("request: %v", err)
	}
	if r := <-replies; !strings.HasPrefix(r, prefix+".") {
		t.Fatalf("Request's reply subject %q is not under %s", r, prefix)
	}
	for m, err := range nc.RequestMany(ctx, "svc.echo", nil, []byte("many"), conn.ManyMax(1)) {
		if err != nil || string(m.Data) != "many" {
			t.Fatalf("RequestMany: %v", err)
		}
	}
	if r := <-replies; !strings.HasPrefix(r, prefix+".") {
		t.Fatalf("RequestMany's reply subject %q is not under %s", r, prefix)
	}
	a, b := nc.NewInbox(), nc.NewInbox()
	if !strings.HasPrefix(a, prefix+".") || a == b {
		t.Fatalf("NewInbox gave %q and %q", a, b)
	}
	if in := connect(t, s.URL()).NewInbox(); !strings.HasPrefix(in, conn.DefaultInboxPrefix+".") {
		t.Fatalf("default NewInbox %q", in)
	}

	for _, p := range []string{"", "a.*", "a.>", "bad.", "a b"} {
		if _, err := conn.Connect(ctx, s.URL(), conn.InboxPrefix(p)); !errors.Is(err, conn.ErrInvalidOption) {
			t.Errorf("InboxPrefix(%q): %v", p, err)
		}
	}
}
