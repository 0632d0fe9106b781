package conn_test

// The request multiplexer set up while the link is down. The test of a bug
// reported against another client carries the issue in its name
// (docs/reliability.md).

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
)

// nats.go#537: the request mux must be set up retriably. When the very
// first request of a connection fails because the link is down, requests
// work once the link is back.
func TestRegressionNatsGo537RequestMuxRetriable(t *testing.T) {
	s := coreServer(t)
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
			p := testutil.Proxy(t, s.URL())
			ev := &testutil.Events{}
			nc := connect(t, p.URL(), append(tc.opts, testutil.FastReconnect(), ev.Opt())...)
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
			eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) >= 1 && nc.IsConnected() })
			for i := range 3 {
				m, err := nc.Request(ctxT(t), "r10.echo", []byte("again"))
				if err != nil || string(m.Data) != "again" {
					t.Fatalf("request %d after the reconnect: %v", i, err)
				}
			}
		})
	}
}
