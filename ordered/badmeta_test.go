package ordered_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/testutil"
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
	nc := testutil.Connect(t, fs.URL())
	js, err := jsapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	oc, err := ordered.New(ctx, js, "S", ordered.Config{})
	if err != nil {
		t.Fatal(err)
	}
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
	return fakeserver.Responder(fakeserver.DefaultInfo().With("jetstream", true), func(op *proto.Op) *fakeserver.Reply {
		subj := string(op.Subject)
		switch {
		case strings.HasPrefix(subj, "$JS.API.CONSUMER.CREATE.S."):
			name := strings.Split(subj, ".")[5]
			return &fakeserver.Reply{Body: []byte(`{"type":"io.nats.jetstream.api.v1.consumer_create_response","stream_name":"S","name":"` + name +
				`","config":{"name":"` + name + `","ack_policy":"none","deliver_policy":"all"},"num_pending":1}`)}
		case strings.HasPrefix(subj, "$JS.API.CONSUMER.MSG.NEXT.S."):
			return &fakeserver.Reply{Body: []byte("payload"), Reply: ackReply}
		case strings.HasPrefix(subj, "$JS.API.CONSUMER.DELETE.S."):
			return &fakeserver.Reply{Body: []byte(`{"type":"io.nats.jetstream.api.v1.consumer_delete_response","success":true}`)}
		case strings.HasPrefix(subj, "$JS.API.INFO"):
			return &fakeserver.Reply{Body: []byte(`{"type":"io.nats.jetstream.api.v1.account_info_response","api":{"level":1}}`)}
		}
		return nil
	})
}
