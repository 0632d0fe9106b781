package jsapi_test

import (
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

// tooManyRequests is the reply a 2.15 stream sends when its ingest queue
// is full (server stream.go queueInbound): a 429 status line AND a
// JSON body with err_code 10167, the stream, and the zero sequence.
var tooManyRequests = &fakeserver.Reply{
	Header: []byte("NATS/1.0 429 Too Many Requests\r\n\r\n"),
	Body:   []byte(`{"error":{"code":429,"err_code":10167,"description":"too many requests"},"stream":"S","seq":0}`),
}

// fakeStream returns a handler that plays a stream capturing subject: it
// answers the n-th publish to subject (from 0) with script(n). Other
// operations are only recorded.
func fakeStream(subject string, script func(n int) *fakeserver.Reply) func(*fakeserver.Client) {
	n := 0
	return fakeserver.Responder(fakeserver.DefaultInfo().With("jetstream", true), func(op *proto.Op) *fakeserver.Reply {
		if string(op.Subject) != subject {
			return nil
		}
		n++
		return script(n - 1)
	})
}

// publishesTo flushes the connection of js (so the fake server has
// recorded everything the client sent) and returns the PUB/HPUB ops to
// subject that reached the fake server's first connection.
func publishesTo(t *testing.T, fs *fakeserver.Server, js *jsapi.JS, subject string) []proto.Op {
	t.Helper()
	if err := js.Conn().Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	c, err := fs.Client(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	var out []proto.Op
	for _, op := range c.Pubs() {
		if string(op.Subject) == subject {
			out = append(out, op)
		}
	}
	return out
}

// A publish pushed back with 429 (status line and 10167 JSON body, as the
// server sends it) is retried, with the same Nats-Msg-Id, and the retry's
// PubAck is returned.
func TestPublishRetriesTooManyRequests(t *testing.T) {
	fs := fakeserver.New(t, fakeserver.WithHandler(fakeStream("orders.1", func(n int) *fakeserver.Reply {
		if n == 0 {
			return tooManyRequests
		}
		return &fakeserver.Reply{Body: []byte(`{"stream":"S","seq":7}`)}
	})))
	js := newJS(t, connect(t, fs.URL()))
	ack, err := testutil.Retrying(t, js, 2, time.Millisecond).Publish(ctxT(t), "orders.1", []byte("x"),
		jsapi.MsgID("order-1"))
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if ack.Stream != "S" || ack.Sequence != 7 {
		t.Fatalf("ack %+v, want stream S sequence 7", ack)
	}
	pubs := publishesTo(t, fs, js, "orders.1")
	if len(pubs) != 2 {
		t.Fatalf("%d publishes reached the server, want 2", len(pubs))
	}
	for i, op := range pubs {
		h := proto.HeaderFromBlock(op.Header)
		if id := h.Get(jsapi.HeaderMsgID); id != "order-1" {
			t.Errorf("publish %d: Nats-Msg-Id %q, want order-1", i+1, id)
		}
		if string(op.Payload) != "x" {
			t.Errorf("publish %d: payload %q", i+1, op.Payload)
		}
	}
}

// A stream that keeps pushing back exhausts the retries: Publish makes
// retries+1 attempts and returns the 429 as ErrTooManyRequests.
func TestPublishTooManyRequestsExhausted(t *testing.T) {
	const retries = 3
	fs := fakeserver.New(t, fakeserver.WithHandler(fakeStream("orders.1", func(int) *fakeserver.Reply {
		return tooManyRequests
	})))
	js := newJS(t, connect(t, fs.URL()))
	ack, err := testutil.Retrying(t, js, retries, time.Millisecond).Publish(ctxT(t), "orders.1", []byte("x"))
	if !errors.Is(err, jsapi.ErrTooManyRequests) || ack != (jsapi.PubAck{}) {
		t.Fatalf("Publish: %+v, %v; want ErrTooManyRequests", ack, err)
	}
	if ae, ok := errors.AsType[*jsapi.APIError](err); !ok || ae.Code != 429 || ae.ErrorCode != 10167 {
		t.Fatalf("error %#v, want the server's *APIError", err)
	}
	if pubs := publishesTo(t, fs, js, "orders.1"); len(pubs) != retries+1 {
		t.Fatalf("%d publishes reached the server, want %d", len(pubs), retries+1)
	}
}
