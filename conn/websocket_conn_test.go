package conn_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/natstest"
)

// byteCountingConn counts the bytes written to and read from the wire.
type byteCountingConn struct {
	net.Conn
	in, out *atomic.Int64
}

func (c byteCountingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.in.Add(int64(n))
	return n, err
}

func (c byteCountingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.out.Add(int64(n))
	return n, err
}

// countingDialer returns a Dialer option counting wire bytes into in and
// out.
func countingDialer(in, out *atomic.Int64) conn.Option {
	return conn.Dialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return byteCountingConn{Conn: c, in: in, out: out}, nil
	})
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

const wsBigPayload = 512 << 10

// wsExercise runs pub/sub and request/reply round trips over nc,
// including 512 KiB payloads, and checks every byte. Each publish is
// flushed on its own (see TestWSConnCompressedMaxPayload for batches).
func wsExercise(t *testing.T, nc *conn.Conn, prefix string) {
	t.Helper()
	sub, err := nc.Subscribe(prefix + ".data")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if _, err := nc.SubscribeFunc(prefix+".echo", func(m *conn.Msg) { m.Respond(m.Data) }); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	random := randomBytes(wsBigPayload, 1)
	text := bytes.Repeat([]byte("compressible natsio websocket payload "), wsBigPayload/38+1)[:wsBigPayload]
	payloads := [][]byte{[]byte("small"), nil, random, text}
	for i, p := range payloads {
		if err := nc.Publish(prefix+".data", p); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
		if err := nc.Flush(ctxT(t)); err != nil {
			t.Fatalf("flush %d: %v", i, err)
		}
	}
	for i, p := range payloads {
		m, err := sub.NextMsg(ctxT(t))
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if !bytes.Equal(m.Data, p) {
			t.Fatalf("message %d: %d bytes differ from the %d sent", i, len(m.Data), len(p))
		}
	}
	for i, p := range [][]byte{[]byte("small"), text} {
		r, err := nc.Request(ctxT(t), prefix+".echo", p)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if !bytes.Equal(r.Data, p) {
			t.Fatalf("reply %d: %d bytes differ from the %d sent", i, len(r.Data), len(p))
		}
	}
}

func TestWSConnRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		server, client, both bool
	}{
		// Plain and Compressed get the full exercise; the declined
		// offers a round trip and the wire check.
		{"Plain", false, false, false},
		{"ClientOffersServerDeclines", false, true, false},
		{"ServerOffersClientDoesNot", true, false, false},
		{"Compressed", true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := natstest.NewServer(t, natstest.JetStream(false), wsListener(tc.server))
			var in, out atomic.Int64
			opts := []conn.Option{countingDialer(&in, &out)}
			if tc.client {
				opts = append(opts, conn.WebSocketCompression())
			}
			nc := connect(t, s.WebSocketURL(), opts...)
			if !strings.HasPrefix(nc.ConnectedURL(), "ws://") {
				t.Fatalf("connected to %q", nc.ConnectedURL())
			}
			if tc.client == tc.server {
				wsExercise(t, nc, "ws")
			} else {
				roundTrip(t, nc, "ws.small")
			}

			// A compressible 512 KiB message: compressed on the wire
			// only when both sides agreed on permessage-deflate.
			big := bytes.Repeat([]byte("a"), wsBigPayload)
			before := out.Load()
			if err := nc.Publish("ws.sink", big); err != nil {
				t.Fatal(err)
			}
			if err := nc.Flush(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			sent := out.Load() - before
			if tc.both && sent > wsBigPayload/10 {
				t.Fatalf("compression negotiated but %d bytes written for 512 KiB of 'a'", sent)
			}
			if !tc.both && sent < wsBigPayload {
				t.Fatalf("no compression negotiated but only %d bytes written for 512 KiB", sent)
			}
		})
	}
}

// wsListener is a WebSocket listener, offering compression or not.
func wsListener(compression bool) natstest.Option {
	if compression {
		return natstest.WebSocketCompression()
	}
	return natstest.WebSocket()
}

func TestWSConnReconnectAfterRestart(t *testing.T) {
	for _, compress := range []bool{false, true} {
		t.Run(map[bool]string{false: "Plain", true: "Compressed"}[compress], func(t *testing.T) {
			s := natstest.NewServer(t, natstest.JetStream(false), wsListener(compress))
			var rec testutil.Events
			opts := []conn.Option{testutil.FastReconnect(), rec.Opt()}
			if compress {
				opts = append(opts, conn.WebSocketCompression())
			}
			nc := connect(t, s.WebSocketURL(), opts...)
			sub, err := nc.Subscribe("wsre")
			if err != nil {
				t.Fatal(err)
			}
			if err := nc.Flush(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			wsURL := s.WebSocketURL()
			if err := s.Restart(); err != nil {
				t.Fatal(err)
			}
			eventually(t, "reconnect over WebSocket", func() bool {
				return nc.Stats().Reconnects == 1 && nc.IsConnected() && rec.Has(conn.EventReconnected)
			})
			if nc.ConnectedURL() != wsURL {
				t.Fatalf("reconnected to %q, want %q", nc.ConnectedURL(), wsURL)
			}
			if e, ok := rec.Find(conn.EventReconnected, nil); !ok || e.Server != wsURL {
				t.Fatalf("reconnected event %+v", e)
			}
			// The subscription was restored over the new WebSocket.
			big := randomBytes(wsBigPayload, 7)
			if err := nc.Publish("wsre", big); err != nil {
				t.Fatal(err)
			}
			m, err := sub.NextMsg(ctxT(t))
			if err != nil {
				t.Fatalf("after reconnect: %v", err)
			}
			if !bytes.Equal(m.Data, big) {
				t.Fatalf("after reconnect: %d bytes differ from the %d sent", len(m.Data), len(big))
			}
			roundTrip(t, nc, "wsafter")
		})
	}
}

// TestWSConnCompressedMaxPayload: with permessage-deflate, a message of
// max_payload bytes (valid on any transport) and a batch of publishes
// larger than max_payload in total are delivered. nats-server caps the
// decompressed size of one WebSocket message at max_payload, so the client
// must not compress more than that into one message.
func TestWSConnCompressedMaxPayload(t *testing.T) {
	for _, compress := range []bool{false, true} {
		t.Run(map[bool]string{false: "Plain", true: "Compressed"}[compress], func(t *testing.T) {
			s := natstest.NewServer(t, natstest.JetStream(false), natstest.WebSocketCompression())
			var rec testutil.Events
			opts := []conn.Option{rec.Opt(), conn.NoReconnect()}
			if compress {
				opts = append(opts, conn.WebSocketCompression())
			}
			nc := connect(t, s.WebSocketURL(), opts...)
			sub, err := nc.Subscribe("wsmax")
			if err != nil {
				t.Fatal(err)
			}
			if err := nc.Flush(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			max := bytes.Repeat([]byte("m"), int(nc.MaxPayload()))
			if err := nc.Publish("wsmax", max); err != nil {
				t.Fatal(err)
			}
			if err := nc.Flush(ctxT(t)); err != nil {
				t.Fatalf("flush after a max_payload publish: %v", err)
			}
			half := bytes.Repeat([]byte("h"), int(nc.MaxPayload())/2)
			for range 3 {
				if err := nc.Publish("wsmax", half); err != nil {
					t.Fatal(err)
				}
			}
			if err := nc.Flush(ctxT(t)); err != nil {
				t.Fatalf("flush after a batch past max_payload: %v", err)
			}
			for i, want := range [][]byte{max, half, half, half} {
				m, err := sub.NextMsg(ctxT(t))
				if err != nil {
					t.Fatalf("message %d: %v (events %v)", i, err, rec.All())
				}
				if !bytes.Equal(m.Data, want) {
					t.Fatalf("message %d: %d bytes, want %d", i, len(m.Data), len(want))
				}
			}
			if rec.Has(conn.EventDisconnected) {
				t.Fatalf("connection dropped: %v", rec.All())
			}
		})
	}
}
