package fakeserver

import (
	"github.com/natsio/natsio/proto"
)

// Reply is what a Responder sends back for one publish: a header block
// (nil for a plain MSG), a payload and, optionally, the reply subject the
// answer itself carries (a $JS.ACK subject, say).
type Reply struct {
	Header []byte
	Body   []byte
	Reply  string
}

// Responder returns a handler that completes the handshake with info and
// then plays a request/reply service: for every PUB or HPUB with a reply
// subject, answer is called (on the handler's goroutine, in order) and a
// non-nil Reply is sent to that reply subject, on the client's
// subscription that matches it — exactly, or as a wildcard inbox ending in
// "*" or ">" — as a real server would route it. A publish whose reply no
// subscription matches is dropped, like a reply nobody listens to. Every
// operation is still recorded (Next, Ops, Pubs).
func Responder(info any, answer func(op *proto.Op) *Reply) func(*Client) {
	return func(c *Client) {
		ctx := c.Context()
		if _, err := c.Handshake(ctx, info); err != nil {
			return
		}
		subs := map[string]uint64{}
		for {
			op, err := c.Next(ctx)
			if err != nil {
				return
			}
			switch op.Kind {
			case proto.KindSub:
				subs[string(op.Subject)] = op.SID
			case proto.KindUnsub:
				for s, sid := range subs {
					if sid == op.SID {
						delete(subs, s)
					}
				}
			case proto.KindPub, proto.KindHPub:
				if len(op.Reply) == 0 {
					continue
				}
				r := answer(op)
				if r == nil {
					continue
				}
				to := string(op.Reply)
				sid, ok := routeReply(subs, to)
				if !ok {
					continue
				}
				if r.Header != nil {
					_ = c.SendHMsg(to, sid, r.Reply, r.Header, r.Body)
				} else {
					_ = c.SendMsg(to, sid, r.Reply, r.Body)
				}
			}
		}
	}
}

// routeReply finds the subscription a reply subject reaches: an exact one,
// else the lowest SID whose subject matches it with wildcards (a wildcard
// inbox "prefix.*" or "prefix.>").
func routeReply(subs map[string]uint64, subject string) (uint64, bool) {
	if sid, ok := subs[subject]; ok {
		return sid, true
	}
	var best uint64
	for s, sid := range subs {
		if (best == 0 || sid < best) && MatchSubject(s, subject) {
			best = sid
		}
	}
	return best, best != 0
}
