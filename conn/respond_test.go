package conn_test

// Hostile input that reaches the client through the server: bytes another
// tenant chose, handed back to the library (a reply subject to answer).

import (
	"errors"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/proto"
)

// TestHostileLentReplyChecked: a handler answering lent messages (views of
// the read buffer, as micro's discovery handlers do) responds to a valid
// reply, then to invalid replies of the same length that arrive at the
// same place in the buffer. Each is checked on its bytes and refused
// before anything is written: the memo of the last checked subject
// compares content, not memory.
func TestLentReplyChecked(t *testing.T) {
	fs := startFake(t, withScript(fakeserver.Basic(nil)))
	nc := fs.connect(t)
	errs := make(chan error, 1)
	if _, err := nc.SubscribeInlineUnsafe("svc", func(m *conn.Msg) { errs <- m.Respond([]byte("ok")) }); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	c := fs.client(t, 1)
	for i, reply := range []string{"zz.abcd", "zz.\x1b[2J", "zz.abcd", "zz.a\x01b>", "zz.ab.>", "zz.a\x7fcd"} {
		valid := proto.ValidatePublishSubject(reply) == nil
		// The same frame length each time: the reply lands where the
		// previous one was.
		if err := c.SendMsg("svc", 1, reply, nil); err != nil {
			t.Fatal(err)
		}
		var err error
		select {
		case err = <-errs:
		case <-ctxT(t).Done():
			t.Fatalf("reply %d %q: the handler was not called", i, reply)
		}
		switch {
		case valid && err != nil:
			t.Fatalf("reply %d %q: %v", i, reply, err)
		case !valid && !errors.Is(err, conn.ErrBadSubject):
			t.Fatalf("reply %d %q: Respond returned %v, want ErrBadSubject", i, reply, err)
		}
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, op := range c.Pubs() {
		got = append(got, string(op.Subject))
	}
	if len(got) != 2 || got[0] != "zz.abcd" || got[1] != "zz.abcd" || len(c.Violations()) > 0 {
		t.Fatalf("published to %q (violations %v), want only the two valid replies", got, c.Violations())
	}
}
