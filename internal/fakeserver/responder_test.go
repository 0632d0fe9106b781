package fakeserver_test

import (
	"testing"

	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/proto"
)

// TestResponderRoutesReplies: replies go to the subscription the reply
// subject reaches — exact, "prefix.*", "prefix.>" — with the Reply's
// header and reply subject; a publish whose reply nobody subscribes to,
// or that the answer function declines, gets nothing, and an UNSUB stops
// the routing to that subscription.
func TestResponderRoutesReplies(t *testing.T) {
	s := fakeserver.New(t, fakeserver.WithHandler(fakeserver.Responder(nil, func(op *proto.Op) *fakeserver.Reply {
		switch string(op.Subject) {
		case "plain":
			return &fakeserver.Reply{Body: []byte("p")}
		case "headed":
			return &fakeserver.Reply{Header: []byte("NATS/1.0 503\r\n\r\n"), Reply: "back.here"}
		}
		return nil
	})))
	rc := dial(t, s)
	rc.line() // INFO
	rc.write("CONNECT {}\r\nPING\r\n")
	if l := rc.line(); l != "PONG\r\n" {
		t.Fatalf("want PONG, got %q", l)
	}
	rc.write("SUB in.exact 1\r\nSUB star.* 2\r\nSUB gt.> 3\r\n")
	rc.write("PUB plain in.exact 0\r\n\r\n")
	if l := rc.line(); l != "MSG in.exact 1 1\r\n" {
		t.Fatalf("exact: %q", l)
	}
	rc.line()
	rc.write("PUB headed star.9 0\r\n\r\n")
	if l := rc.line(); l != "HMSG star.9 2 back.here 16 16\r\n" {
		t.Fatalf("star: %q", l)
	}
	rc.line() // status line
	rc.line() // end of the header block
	rc.line() // empty payload
	// Not routed: two tokens under "star.*", nobody on "none", declined.
	rc.write("PUB plain star.9.9 0\r\n\r\nPUB plain none 0\r\n\r\nPUB other in.exact 0\r\n\r\n")
	rc.write("PUB plain gt.a.b 0\r\n\r\n")
	if l := rc.line(); l != "MSG gt.a.b 3 1\r\n" {
		t.Fatalf("gt: %q", l)
	}
	rc.line()
	rc.write("UNSUB 3\r\nPUB plain gt.a.b 0\r\n\r\nPING\r\n")
	if l := rc.line(); l != "PONG\r\n" {
		t.Fatalf("after UNSUB: %q, want only the PONG", l)
	}
}
