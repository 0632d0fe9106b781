package conn_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/natsio/natsio/conn"
)

// PublishRequestNow delivers like PublishRequest, reply subject included,
// and refuses what PublishRequest refuses before anything is written.
func TestPublishRequestNow(t *testing.T) {
	s := coreServer(t)
	nc := connect(t, s.URL())
	sub, err := nc.Subscribe("now.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if err := nc.PublishUnobserved(fmt.Sprintf("now.%d", i), "reply.here", nil, []byte("x"), conn.WriteNow); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 50 {
		m, err := sub.NextMsg(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		if m.Subject != fmt.Sprintf("now.%d", i) || m.Reply != "reply.here" || string(m.Data) != "x" {
			t.Fatalf("message %d: %q reply %q data %q", i, m.Subject, m.Reply, m.Data)
		}
	}
	before := nc.Stats().OutMsgs
	if err := nc.PublishUnobserved("bad subject", "r", nil, nil, conn.WriteNow); !errors.Is(err, conn.ErrBadSubject) {
		t.Fatalf("bad subject: %v", err)
	}
	if err := nc.PublishUnobserved("ok", "bad reply", nil, nil, conn.WriteNow); !errors.Is(err, conn.ErrBadSubject) {
		t.Fatalf("bad reply: %v", err)
	}
	if after := nc.Stats().OutMsgs; after != before {
		t.Fatalf("refused publishes counted: %d → %d", before, after)
	}
	nc.Close()
	if err := nc.PublishUnobserved("ok", "r", nil, nil, conn.WriteNow); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
