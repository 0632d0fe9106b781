package conn_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/natstest"
)

// Disconnects and the reconnect buffer's figures: counted as they happen,
// the peak bounded by the ReconnectBuffer option, Buffered showing what
// waits and emptied once the connection is back.
func TestStatsDisconnectsAndReconnectBuffer(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	const limit = 4096
	nc := connect(t, s.URL(), conn.ReconnectBuffer(limit), testutil.FastReconnect())

	nc.ForceReconnect()
	eventually(t, "the forced reconnect", func() bool { return nc.Stats().Reconnects == 1 && nc.IsConnected() })
	if st := nc.Stats(); st.Disconnects != 1 || st.ReconnectBufferPeak != 0 || st.ReconnectBufferFull != 0 {
		t.Fatalf("after a forced reconnect: %+v", st)
	}

	s.Shutdown()
	eventually(t, "the client to notice the shutdown", func() bool { return !nc.IsConnected() })
	data := make([]byte, 100)
	published := 0
	for {
		err := nc.Publish("stats.buf", data)
		if errors.Is(err, conn.ErrReconnectBuffer) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if published++; published > limit {
			t.Fatal("the reconnect buffer never filled")
		}
	}
	if err := nc.Publish("stats.buf", data); !errors.Is(err, conn.ErrReconnectBuffer) {
		t.Fatalf("second publish over the limit: %v", err)
	}
	st := nc.Stats()
	if st.Disconnects != 2 || st.ReconnectBufferFull != 2 {
		t.Fatalf("while disconnected: %+v", st)
	}
	if b := nc.Buffered(); b == 0 || b > limit || st.ReconnectBufferPeak != b {
		t.Fatalf("Buffered %d, peak %d, limit %d", b, st.ReconnectBufferPeak, limit)
	}

	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the reconnect and the buffer written", func() bool {
		return nc.Stats().Reconnects == 2 && nc.Buffered() == 0
	})
	if st2 := nc.Stats(); st2.ReconnectBufferPeak != st.ReconnectBufferPeak || st2.Disconnects != 2 {
		t.Fatalf("after the reconnect: %+v (before: %+v)", st2, st)
	}
}

// -ERR lines are counted whether or not they end the connection; garbage
// from the server is counted as a protocol error.
func TestStatsServerAndProtocolErrors(t *testing.T) {
	fs := startFake(t, withScript(func(c *fakeserver.Client) {
		_, _ = c.Handshake(c.Context(), nil)
	}))
	nc := fs.connect(t, testutil.FastReconnect())
	c1 := fs.client(t, 1)
	if err := c1.SendErr(`Permissions Violation for Publish to "x"`); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the -ERR to be counted", func() bool { return nc.Stats().ServerErrors == 1 })
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatalf("a permissions -ERR dropped the connection: %v", err)
	}
	if err := c1.Send([]byte("BOGUS 1 2 3\r\n")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the protocol error to be counted", func() bool { return nc.Stats().ProtocolErrors == 1 })
	eventually(t, "the reconnect", func() bool { return nc.Stats().Reconnects == 1 })
	if st := nc.Stats(); st.Disconnects != 1 || st.ServerErrors != 1 {
		t.Fatalf("after the garbage: %+v", st)
	}
}

func TestRTT(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	d, err := nc.RTT(ctxT(t))
	if err != nil || d <= 0 {
		t.Fatalf("RTT = %v, %v", d, err)
	}
	nc.Close()
	if _, err := nc.RTT(ctxT(t)); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("RTT after Close: %v", err)
	}
}

// Requests are counted by how they ended; none stays pending once every
// call returned.
func TestStatsRequests(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	if _, err := nc.SubscribeFunc("svc", func(m *conn.Msg) { m.Respond([]byte("ok")) }); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Subscribe("silent"); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := nc.Request(ctxT(t), "svc", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := nc.Request(ctxT(t), "nobody", nil); !errors.Is(err, conn.ErrNoResponders) {
		t.Fatalf("request to nobody: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctxT(t), 100*time.Millisecond)
	defer cancel()
	if _, err := nc.Request(ctx, "silent", nil); !errors.Is(err, conn.ErrTimeout) {
		t.Fatalf("request nobody answers: %v", err)
	}
	st := nc.Stats()
	if st.Requests != 5 || st.NoResponders != 1 || st.RequestTimeouts != 1 || st.RequestsPending != 0 {
		t.Fatalf("requests: %+v", st)
	}
}
