package conn_test

// Regression tests for bugs reported against other NATS clients
// (RELIABILITY.md section (b)), named after the issue thread.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/internal/testserver"
	"github.com/natsio/natsio/jsapi"
)

// nats.go#2128: a JetStream publish (a request) caught by a reconnect must
// fail with ErrDisconnected, a transient error, never with ErrClosed; one
// issued while disconnected must not look terminal either; and publishing
// works again after the reconnect.
func TestRegressionNatsGo2128JSPublishDuringReconnectNotClosed(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	p := fltProxy(t, fltHostPort(s.URL()))
	ev := &fltEvents{}
	nc := connect(t, p.URL(), fltFastReconnect(), ev.opt())
	js, err := jsapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
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
	err = recvErr(t, errc, 10*time.Second, "in-flight publish")
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
	eventually(t, "reconnect", func() bool { return ev.count(conn.EventReconnected) >= 1 && nc.IsConnected() })
	if _, err := js.Publish(ctx, "r9.a", []byte("z")); err != nil {
		t.Fatalf("JS publish after the reconnect: %v", err)
	}
}

// nats.go#537: the request mux must be set up retriably. When the very
// first request of a connection fails because the link is down, requests
// work once the link is back.
func TestRegressionNatsGo537RequestMuxRetriable(t *testing.T) {
	s := fltServer(t)
	responder := connect(t, s.URL())
	if _, err := responder.SubscribeFunc("r10.echo", func(m *conn.Msg) { m.Respond(m.Data) }); err != nil {
		t.Fatal(err)
	}
	if err := responder.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts []conn.Option
	}{
		{"buffer disabled", []conn.Option{conn.ReconnectBuffer(-1)}},
		{"buffered", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := fltProxy(t, fltHostPort(s.URL()))
			ev := &fltEvents{}
			nc := connect(t, p.URL(), append(tc.opts, fltFastReconnect(), ev.opt())...)
			p.Refuse(true)
			p.CutAll()
			eventually(t, "disconnected", func() bool { return !nc.IsConnected() })
			// The first request ever: its mux subscription cannot reach the server.
			rctx, cancel := context.WithTimeout(ctxT(t), 200*time.Millisecond)
			_, err := nc.Request(rctx, "r10.echo", []byte("first"))
			cancel()
			if err == nil || errors.Is(err, conn.ErrClosed) {
				t.Fatalf("first request while disconnected: %v, want a transient error", err)
			}
			p.Refuse(false)
			eventually(t, "reconnect", func() bool { return ev.count(conn.EventReconnected) >= 1 && nc.IsConnected() })
			for i := range 3 {
				m, err := nc.Request(ctxT(t), "r10.echo", []byte("again"))
				if err != nil || string(m.Data) != "again" {
					t.Fatalf("request %d after the reconnect: %v", i, err)
				}
			}
		})
	}
}
