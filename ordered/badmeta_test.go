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
	"github.com/natsio/natsio/pull"
)

// A message whose $JS.ACK reply subject cannot be read is skipped, counted
// by Skipped and given to OnSkip, and the read goes on: it was not sent by
// the server, and a gap it hides shows in the next message's consumer
// sequence. nats-server never sends one, and refuses a reply starting with
// "$JS." from a client, so only a hostile server can: the fake one answers
// the consumer create and the first pull with a message whose reply has 8
// tokens.
func TestOrderedUnreadableMetadataIsSkipped(t *testing.T) {
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
	// The read goes on after the skip: end it from the hook.
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	var reasons []error
	n := 0
	for _, err = range oc.Messages(rctx, ordered.OnSkip(func(reason error) {
		reasons = append(reasons, reason)
		stop()
	})) {
		if err != nil {
			break
		}
		n++
	}
	if !errors.Is(err, context.Canceled) || n != 0 {
		t.Fatalf("after %d messages: %v, want the end of the read's context", n, err)
	}
	if len(reasons) != 1 || !errors.Is(reasons[0], pull.ErrStrayMessage) || oc.Skipped() != 1 {
		t.Fatalf("OnSkip reasons %v, Skipped %d; want one pull.ErrStrayMessage", reasons, oc.Skipped())
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
