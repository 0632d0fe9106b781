package fakeserver_test

import (
	"errors"
	"testing"

	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/proto"
)

func TestMatchSubject(t *testing.T) {
	for _, tc := range []struct {
		pattern, subject string
		want             bool
	}{
		{"a", "a", true},
		{"a", "b", false},
		{"a.b", "a.b", true},
		{"a.b", "a", false},
		{"a", "a.b", false},
		{"a.*", "a.b", true},
		{"a.*", "a.b.c", false},
		{"a.*", "a", false},
		{"*.b", "a.b", true},
		{"a.*.c", "a.x.c", true},
		{"a.*.c", "a.x.d", false},
		{"a.>", "a.b", true},
		{"a.>", "a.b.c", true},
		{"a.>", "a", false},
		{">", "a.b", true},
		{"_INBOX.x.*", "_INBOX.x.1", true},
		{"a.b", "a..b", false},
	} {
		if got := fakeserver.MatchSubject(tc.pattern, tc.subject); got != tc.want {
			t.Errorf("MatchSubject(%q, %q) = %v, want %v", tc.pattern, tc.subject, got, tc.want)
		}
	}
}

// TestSendToRoutesBySubscription: SendTo delivers to the subscription the
// client's SUBs made that matches (the lowest SID among several), as MSG
// or HMSG; an UNSUB ends the routing, at once or after its maximum; with
// no subscription it is ErrNoInterest.
func TestSendToRoutesBySubscription(t *testing.T) {
	s := fakeserver.New(t)
	rc := dial(t, s)
	c, _ := s.Accept(ctxT(t))
	rc.write("CONNECT {}\r\nSUB in.> 7\r\nSUB in.* 3\r\nSUB hb 4\r\nUNSUB 4 2\r\nSUB gone 5\r\nUNSUB 5\r\nPING\r\n")
	if _, err := c.Expect(ctxT(t), proto.KindPing); err != nil {
		t.Fatal(err)
	}
	if err := c.SendTo("in.a", "r", nil, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if l := rc.line(); l != "MSG in.a 3 r 1\r\n" {
		t.Fatalf("got %q", l)
	}
	rc.line()
	if err := c.SendTo("in.a.b", "", []byte("NATS/1.0 100 Idle Heartbeat\r\n\r\n"), nil); err != nil {
		t.Fatal(err)
	}
	if l := rc.line(); l != "HMSG in.a.b 7 31 31\r\n" {
		t.Fatalf("got %q", l)
	}
	rc.line() // status line
	rc.line() // end of the header block
	rc.line() // empty payload
	for range 2 {
		if err := c.SendTo("hb", "", nil, nil); err != nil {
			t.Fatal(err)
		}
		if l := rc.line(); l != "MSG hb 4 0\r\n" {
			t.Fatalf("got %q", l)
		}
		rc.line()
	}
	for _, subj := range []string{"hb", "gone", "other"} {
		if err := c.SendTo(subj, "", nil, nil); !errors.Is(err, fakeserver.ErrNoInterest) {
			t.Fatalf("SendTo %s: %v, want ErrNoInterest", subj, err)
		}
	}
}
