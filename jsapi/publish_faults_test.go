package jsapi_test

// JetStream publishes across network faults: an ack lost with the
// connection, a publish caught by a reconnect.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

// F23: the message is stored but its PubAck never reaches the client. The
// publish must fail (never report success it did not see); the retry with
// the same Msg-Id must come back as a duplicate carrying the original
// sequence, and the stream must hold the message once.
func TestPubAckLostRetryIsDuplicate(t *testing.T) {
	s := natstest.NewServer(t)
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

	p := testutil.Proxy(t, s.URL())
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

// nats.go#2128: a JetStream publish (a request) caught by a reconnect must
// fail with ErrDisconnected, a transient error, never with ErrClosed; one
// issued while disconnected must not look terminal either; and publishing
// works again after the reconnect.
func TestRegressionNatsGo2128JSPublishDuringReconnectNotClosed(t *testing.T) {
	s := natstest.NewServer(t)
	p := testutil.Proxy(t, s.URL())
	ev := &testutil.Events{}
	nc := connect(t, p.URL(), testutil.FastReconnect(), ev.Opt())
	js := newJS(t, nc)
	ctx := ctxT(t)
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "R9", Subjects: []string{"r9.>"}, Storage: jsapi.StorageMemory}); err != nil {
		t.Fatal(err)
	}
	// The ack never comes down: the publish is in flight at the cut.
	p.Stall(faultproxy.Down, true)
	errc := make(chan error, 1)
	go func() {
		pctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := js.Publish(pctx, "r9.a", []byte("x"))
		errc <- err
	}()
	eventually(t, "publish in flight", func() bool { return nc.Stats().RequestsPending == 1 })
	p.Refuse(true)
	p.CutAll()
	p.Stall(faultproxy.Down, false)
	var err error
	select {
	case err = <-errc:
	case <-time.After(10 * time.Second):
		t.Fatal("the in-flight publish did not return within 10s")
	}
	if !errors.Is(err, conn.ErrDisconnected) || errors.Is(err, conn.ErrClosed) {
		t.Fatalf("in-flight JS publish at a reconnect: %v, want ErrDisconnected", err)
	}
	eventually(t, "disconnected", func() bool { return !nc.IsConnected() })
	pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = js.Publish(pctx, "r9.a", []byte("y"))
	cancel()
	if err == nil || errors.Is(err, conn.ErrClosed) {
		t.Fatalf("JS publish while disconnected: %v, want a transient error", err)
	}
	p.Refuse(false)
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) >= 1 && nc.IsConnected() })
	if _, err := js.Publish(ctx, "r9.a", []byte("z")); err != nil {
		t.Fatalf("JS publish after the reconnect: %v", err)
	}
}
