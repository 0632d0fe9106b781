package natsotel_test

import (
	"fmt"
	"testing"

	"github.com/natsio/natsio/conn"
)

// The spans of borrowed messages keep their own copies of the subject and
// message ID: the connection reuses a lent message's memory once its
// handler returns, and a span outlives it.
func TestBorrowedMessagesSpansKeepTheirStrings(t *testing.T) {
	k := newKit(t, false)
	nc := k.srv.Connect(t, conn.Observe(k.inst))
	sub, err := nc.SubscribeFunc("lent.>", func(*conn.Msg) {}, conn.Borrowed())
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx(t)); err != nil {
		t.Fatal(err)
	}
	const n = 200
	for i := range n {
		if err := nc.Publish(fmt.Sprintf("lent.%03d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := sub.Drain(ctx(t)); err != nil {
		t.Fatal(err)
	}
	<-sub.HandlerDone()
	seen := map[string]bool{}
	for _, s := range k.ended("process lent.>") {
		v, _ := attr(s, "messaging.destination.name")
		seen[v.AsString()] = true
	}
	for i := range n {
		if subj := fmt.Sprintf("lent.%03d", i); !seen[subj] {
			t.Fatalf("no process span has destination %s (%d distinct of %d)", subj, len(seen), n)
		}
	}
}
