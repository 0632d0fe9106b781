package ordered_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
	"github.com/natsio/natsio/proto"
)

// A message whose $JS.ACK reply subject cannot be read ends Messages with
// jsapi.ErrBadAckSubject: without the consumer sequence the ordered
// consumer cannot tell a gap, so skipping such messages would be a silent
// stall. A real server never sends this: the fake one answers the consumer
// create and the first pull with a message whose reply has 8 tokens.
func TestOrderedUnreadableMetadataIsAnError(t *testing.T) {
	fs := fakeserver.New(t, fakeserver.WithHandler(fakeJetStream("$JS.ACK.S.C.1.1.1.1700000000000000000")))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, fs.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jsapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	oc := ordered.New(js, "S", ordered.Options{})
	n := 0
	for _, err = range oc.Messages(ctx) {
		if err != nil {
			break
		}
		n++
	}
	if !errors.Is(err, jsapi.ErrBadAckSubject) || n != 0 {
		t.Fatalf("after %d messages: %v, want jsapi.ErrBadAckSubject", n, err)
	}
}

// fakeJetStream is a handler playing just enough of a JetStream server for
// one ordered consumer: it creates any consumer on stream S (reporting one
// pending message) and answers each pull with one message carrying
// ackReply as its reply subject.
func fakeJetStream(ackReply string) func(*fakeserver.Client) {
	return func(c *fakeserver.Client) {
		ctx := c.Context()
		if _, err := c.Handshake(ctx, fakeserver.DefaultInfo().With("jetstream", true)); err != nil {
			return
		}
		var mu sync.Mutex
		subs := map[string]uint64{}
		// sidFor finds the subscription a reply subject reaches: an exact
		// one or a wildcard inbox ("prefix.*" or "prefix.>").
		sidFor := func(subj string) (uint64, bool) {
			mu.Lock()
			defer mu.Unlock()
			for s, sid := range subs {
				if s == subj {
					return sid, true
				}
				if p, ok := strings.CutSuffix(s, "*"); ok && strings.HasPrefix(subj, p) && !strings.Contains(subj[len(p):], ".") {
					return sid, true
				}
				if p, ok := strings.CutSuffix(s, ">"); ok && strings.HasPrefix(subj, p) {
					return sid, true
				}
			}
			return 0, false
		}
		for {
			op, err := c.Next(ctx)
			if err != nil {
				return
			}
			switch op.Kind {
			case proto.KindSub:
				mu.Lock()
				subs[string(op.Subject)] = op.SID
				mu.Unlock()
				continue
			case proto.KindPub, proto.KindHPub:
			default:
				continue
			}
			subj, reply := string(op.Subject), string(op.Reply)
			sid, ok := sidFor(reply)
			if !ok {
				continue
			}
			switch {
			case strings.HasPrefix(subj, "$JS.API.CONSUMER.CREATE.S."):
				name := strings.Split(subj, ".")[5]
				body := `{"type":"io.nats.jetstream.api.v1.consumer_create_response","stream_name":"S","name":"` + name +
					`","config":{"name":"` + name + `","ack_policy":"none","deliver_policy":"all"},"num_pending":1}`
				_ = c.SendMsg(reply, sid, "", []byte(body))
			case strings.HasPrefix(subj, "$JS.API.CONSUMER.MSG.NEXT.S."):
				_ = c.SendMsg(reply, sid, ackReply, []byte("payload"))
			case strings.HasPrefix(subj, "$JS.API.CONSUMER.DELETE.S."):
				_ = c.SendMsg(reply, sid, "", []byte(`{"type":"io.nats.jetstream.api.v1.consumer_delete_response","success":true}`))
			case strings.HasPrefix(subj, "$JS.API.INFO"):
				_ = c.SendMsg(reply, sid, "", []byte(`{"type":"io.nats.jetstream.api.v1.account_info_response","api":{"level":1}}`))
			}
		}
	}
}
