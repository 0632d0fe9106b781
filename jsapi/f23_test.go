package jsapi_test

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/internal/testserver"
	"github.com/natsio/natsio/jsapi"
)

// F23: the message is stored but its PubAck never reaches the client. The
// publish must fail (never report success it did not see); the retry with
// the same Msg-Id must come back as a duplicate carrying the original
// sequence, and the stream must hold the message once.
func TestF23PubAckLostRetryIsDuplicate(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	admin := connect(t, s.URL())
	adminJS := newJS(t, admin)
	m, err := admin.Request(ctx, "$JS.API.STREAM.CREATE.F23", []byte(`{"name":"F23","subjects":["f23.>"],"storage":"memory"}`))
	if err != nil {
		t.Fatal(err)
	}
	if contains(m.Data, `"error"`) {
		t.Fatalf("create stream: %s", m.Data)
	}
	stored := func() uint64 {
		st, err := adminJS.Stream(ctx, "F23")
		if err != nil {
			t.Fatalf("stream info: %v", err)
		}
		return st.CachedInfo().State.Msgs
	}

	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	p, err := faultproxy.New(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	nc := connect(t, p.URL(), conn.ReconnectBackoff(10*time.Millisecond, 50*time.Millisecond), conn.ReconnectJitter(0))
	js := newJS(t, nc)

	first, err := js.Publish(ctx, "f23.a", []byte("before"), jsapi.MsgID("f23-0"))
	if err != nil {
		t.Fatal(err)
	}

	// Hold everything the server sends: the PUB goes through and is
	// stored, its ack stays in the proxy.
	p.Stall(faultproxy.Down, true)
	pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	ack, err := js.Publish(pctx, "f23.a", []byte("payload"), jsapi.MsgID("f23-1"))
	cancel()
	if err == nil {
		t.Fatalf("publish reported success without its ack: %+v", ack)
	}
	eventually(t, "the unacknowledged message to be stored", func() bool { return stored() == 2 })

	// Cut with the ack still held (it is lost with the connection), then
	// let traffic flow on the next connection.
	p.CutAll()
	p.Stall(faultproxy.Down, false)

	var retry jsapi.PubAck
	eventually(t, "the retry to be acknowledged", func() bool {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		retry, err = js.Publish(rctx, "f23.a", []byte("payload"), jsapi.MsgID("f23-1"))
		if err != nil && !errors.Is(err, conn.ErrDisconnected) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, conn.ErrTimeout) {
			t.Fatalf("retry failed with %v", err)
		}
		return err == nil
	})
	if !retry.Duplicate || retry.Sequence != first.Sequence+1 {
		t.Fatalf("retry ack %+v: want a duplicate of sequence %d", retry, first.Sequence+1)
	}
	if n := stored(); n != 2 {
		t.Fatalf("stream holds %d messages, want 2 (no duplicate stored)", n)
	}
}
