package conn_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
)

// TestReuseReply: a reply subject declared finished serves the next
// request, once; a foreign message is ignored; a request that timed out
// never gives its subject back.
func TestReuseReply(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	ctx := ctxT(t)
	if _, err := nc.SubscribeFunc("svc", func(m *conn.Msg) { m.Respond(m.Data) }); err != nil {
		t.Fatal(err)
	}
	spy, err := nc.Subscribe("svc")
	if err != nil {
		t.Fatal(err)
	}
	silent, err := nc.Subscribe("silent")
	if err != nil {
		t.Fatal(err)
	}
	spySilent, err := nc.Subscribe("silent")
	if err != nil {
		t.Fatal(err)
	}
	_ = silent
	// request sends one request to svc and returns the response and the
	// reply subject the server saw.
	request := func() (*conn.Msg, string) {
		t.Helper()
		m, err := nc.Request(ctx, "svc", []byte("q"))
		if err != nil {
			t.Fatal(err)
		}
		seen, err := spy.NextMsg(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if seen.Reply != m.Subject {
			t.Fatalf("response on %q for a request with reply %q", m.Subject, seen.Reply)
		}
		return m, seen.Reply
	}

	m1, r1 := request()
	nc.ReuseReply(m1)
	nc.ReuseReply(m1) // a second call must not make the subject serve two requests
	nc.ReuseReply(&conn.Msg{Subject: "svc"})
	nc.ReuseReply(&conn.Msg{Subject: r1 + "0"}) // a token never handed out
	nc.ReuseReply(nil)

	m2, r2 := request()
	if r2 != r1 {
		t.Fatalf("request after ReuseReply used %q, want %q", r2, r1)
	}
	_, r3 := request()
	if r3 == r1 {
		t.Fatalf("subject %q served two requests after one ReuseReply", r1)
	}
	nc.ReuseReply(m2)

	// The reused subject goes to the request that times out; it must not
	// come back.
	tctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	_, err = nc.Request(tctx, "silent", nil)
	cancel()
	if !errors.Is(err, conn.ErrTimeout) {
		t.Fatalf("request to a silent subscriber: %v", err)
	}
	seen, err := spySilent.NextMsg(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if seen.Reply != r1 {
		t.Fatalf("timed-out request used %q, want the reused %q", seen.Reply, r1)
	}
	for range 3 {
		if _, r := request(); r == r1 {
			t.Fatalf("the timed-out request's subject %q came back", r1)
		}
	}
}
