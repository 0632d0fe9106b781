package conn_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/proto"
)

func TestOversizedMsgFromServer(t *testing.T) {
	fs := startFake(t, withScript(fakeserver.Basic(nil))) // max_payload 1 MiB
	ev := &testutil.Events{}
	nc := fs.connect(t, testutil.FastReconnect(), ev.Opt())
	sub, _ := nc.Subscribe("foo")
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	c1 := fs.client(t, 1)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	// Claims 9 MiB against an advertised 1 MiB, and starts sending it. The
	// client's inbound bound is max(4 × max_payload, 8 MiB) + 64 KiB (see
	// handshake.go: servers deliver more than max_payload in JetStream
	// replies), so 9 MiB is beyond it; a 2 MiB claim is accepted by design.
	_ = c1.Send([]byte("MSG foo 1 9437184\r\n" + strings.Repeat("x", 1024)))
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 4<<20 {
		t.Fatalf("allocated %d bytes handling an oversized MSG", d)
	}
	pe, _, _ := ev.First(conn.EventProtocolError)
	if !conn.IsProtocolError(pe.Err) || !errors.Is(pe.Err, proto.ErrPayloadTooLarge) {
		t.Fatalf("protocol error event %v, want ErrPayloadTooLarge (events: %v)", pe.Err, ev)
	}
	if d, _, _ := ev.First(conn.EventDisconnected); !errors.Is(d.Err, proto.ErrPayloadTooLarge) {
		t.Fatalf("disconnected with %v", d.Err)
	}
	waitClosed(t, c1, "the client to drop the connection")
	if sub.Delivered() != 0 {
		t.Fatal("oversized message delivered")
	}
	// Reconnected to the fake; the subscription is back and works.
	c2 := fs.client(t, 2)
	if _, err := c2.Expect(ctxT(t), proto.KindSub); err != nil {
		t.Fatal(err)
	}
	c2.SendMsg("foo", 1, "", []byte("small"))
	if m, err := sub.NextMsg(ctxT(t)); err != nil || string(m.Data) != "small" {
		t.Fatalf("after reconnect: %v %v", m, err)
	}
}

func TestGarbageFromServer(t *testing.T) {
	isProto := func(sentinel error) func(error) bool {
		return func(err error) bool { return conn.IsProtocolError(err) && errors.Is(err, sentinel) }
	}
	isServer := func(kind error) func(error) bool {
		return func(err error) bool {
			var se *conn.ServerError
			return errors.As(err, &se) && errors.Is(err, kind)
		}
	}
	cases := []struct {
		name  string
		bytes string
		ok    func(error) bool
		event conn.EventKind
	}{
		{"unknown op", "Ivan\r\n", isProto(proto.ErrUnknownOp), conn.EventProtocolError},
		{"leading blank", " PING\r\n", isProto(proto.ErrUnknownOp), conn.EventProtocolError},
		{"unknown -ERR", "-ERR 'x'\r\n", isServer(conn.ErrServerOther), conn.EventServerError},
		{"header size above total", "HMSG foo 1 20 10\r\n0123456789\r\n", isProto(proto.ErrHeaderSize), conn.EventProtocolError},
		{"header below minimum", "HMSG foo 1 4 6\r\nNATS\r\n\r\n", isProto(proto.ErrHeaderSize), conn.EventProtocolError},
		{"oversized header", "HMSG foo 1 10000000 10000010\r\nNATS/1.0\r\n", isProto(proto.ErrPayloadTooLarge), conn.EventProtocolError},
		{"size beyond any bound", "MSG foo 1 999999999\r\n", isProto(proto.ErrPayloadTooLarge), conn.EventProtocolError},
		{"payload without CRLF", "MSG foo 1 3\r\nabcXX", isProto(proto.ErrMissingCRLF), conn.EventProtocolError},
		{"size overflow", "MSG foo 1 99999999999999999999\r\n", isProto(proto.ErrSize), conn.EventProtocolError},
		{"negative size", "MSG foo 1 -3\r\n", isProto(proto.ErrSize), conn.EventProtocolError},
		{"too many args", "MSG foo 1 bar baz 3\r\n", isProto(proto.ErrArgs), conn.EventProtocolError},
		{"control line without end", "MSG foo 1 " + strings.Repeat("9", 64<<10), isProto(proto.ErrControlLine), conn.EventProtocolError},
		{"bad async INFO", "INFO {\"max_payload\":\r\n", conn.IsProtocolError, conn.EventProtocolError},
		{"INFO max_payload 0", "INFO {\"max_payload\":0}\r\n", conn.IsProtocolError, conn.EventProtocolError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := startFake(t, withScript(fakeserver.Basic(nil)))
			ev := &testutil.Events{}
			nc := fs.connect(t, testutil.FastReconnect(), ev.Opt())
			sub, _ := nc.Subscribe("foo")
			if err := nc.Flush(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			c1 := fs.client(t, 1)
			// The client may hang up before a long input is written.
			_ = c1.Send([]byte(tc.bytes))
			eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
			d, _, _ := ev.First(conn.EventDisconnected)
			if !tc.ok(d.Err) {
				t.Fatalf("disconnected with %v (%T); events: %v", d.Err, d.Err, ev)
			}
			if e, _, ok := ev.First(tc.event); !ok || !tc.ok(e.Err) {
				t.Fatalf("no %v event with the typed error; events: %v", tc.event, ev)
			}
			waitClosed(t, c1, "the client to drop the connection")
			if sub.Delivered() != 0 {
				t.Fatal("garbage delivered as a message")
			}
			// Reconnected to the fake server: resubscribed and working.
			c2 := fs.client(t, 2)
			if op, err := c2.Expect(ctxT(t), proto.KindSub); err != nil || string(op.Subject) != "foo" {
				t.Fatalf("resubscribe: %v %v", op, err)
			}
			c2.SendMsg("foo", 1, "", []byte("ok"))
			if m, err := sub.NextMsg(ctxT(t)); err != nil || string(m.Data) != "ok" {
				t.Fatalf("after reconnect: %v %v", m, err)
			}
			if err := nc.Flush(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			for _, c := range fs.Clients() {
				if c.ParseErr() != nil || len(c.Violations()) > 0 {
					t.Fatalf("client sent bad bytes: %v %v", c.ParseErr(), c.Violations())
				}
			}
		})
	}
}

// TestNonFatalOdditiesDroppedAndCounted: input that is wrong but does not break the
// stream is dropped and counted without losing the connection: an HMSG
// whose header block is not NATS/1.0, a MSG for an unknown sid, a PONG
// nobody asked for.
func TestNonFatalOdditiesDroppedAndCounted(t *testing.T) {
	fs := startFake(t, withScript(fakeserver.Basic(nil)))
	ev := &testutil.Events{}
	nc := fs.connect(t, testutil.FastReconnect(), ev.Opt())
	sub, _ := nc.Subscribe("foo")
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	c1 := fs.client(t, 1)
	c1.SendHMsg("foo", 1, "", []byte("XATS/1.0\r\n\r\n"), []byte("bad"))
	c1.SendMsg("foo", 99, "", []byte("nobody"))
	c1.SendPong()
	c1.SendPong()
	c1.SendMsg("foo", 1, "", []byte("good"))
	m, err := sub.NextMsg(ctxT(t))
	if err != nil || string(m.Data) != "good" {
		t.Fatalf("next: %v %v (bad-header message must not be delivered)", m, err)
	}
	st := nc.Stats()
	if st.BadHeaders != 1 || st.UnknownSID != 1 {
		t.Fatalf("BadHeaders %d UnknownSID %d, want 1 and 1", st.BadHeaders, st.UnknownSID)
	}
	eventually(t, "bad header event", func() bool { return ev.Any(conn.EventProtocolError, proto.ErrBadHeader) })
	if !nc.IsConnected() || ev.Count(conn.EventDisconnected) != 0 || fs.Accepted() != 1 {
		t.Fatalf("connection lost; events: %v", ev)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

// TestUnsolicitedPongDoesNotAnswerFlush: PONGs without an outstanding
// PING are ignored; they must not answer a later Flush.
func TestUnsolicitedPongDoesNotAnswerFlush(t *testing.T) {
	var c1 *fakeserver.Client
	ready := make(chan struct{})
	fs := startFake(t, withScript(func(c *fakeserver.Client) {
		// Manual handshake: no automatic PONGs.
		c.SendInfo(nil)
		if _, err := c.ExpectConnect(c.Context()); err != nil {
			return
		}
		if _, err := c.Expect(c.Context(), proto.KindPing); err != nil {
			return
		}
		c1 = c
		close(ready)
		c.SendPong()
	}))
	nc := fs.connect(t, conn.PingInterval(time.Hour), conn.MaxPingsOutstanding(2))
	<-ready
	sub, _ := nc.Subscribe("foo")
	if _, err := c1.Expect(ctxT(t), proto.KindSub); err != nil {
		t.Fatal(err)
	}
	c1.Send([]byte("PONG\r\nPONG\r\nPONG\r\n"))
	c1.SendMsg("foo", 1, "", []byte("after pongs"))
	if _, err := sub.NextMsg(ctxT(t)); err != nil { // the PONGs were read
		t.Fatal(err)
	}
	flushed := make(chan error, 1)
	go func() { flushed <- nc.Flush(ctxT(t)) }()
	if _, err := c1.Expect(ctxT(t), proto.KindPing); err != nil {
		t.Fatal(err)
	}
	if n := conn.PendingPongs(nc); n != 1 {
		t.Fatalf("%d PINGs outstanding, want 1", n)
	}
	select {
	case err := <-flushed:
		t.Fatalf("Flush returned %v before its PONG was sent", err)
	default:
	}
	c1.SendPong()
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if !nc.IsConnected() {
		t.Fatal("disconnected")
	}
}

// A read that ends inside a message for a subscription whose handler has
// not started yet, right after a response: the reader goroutine reads on
// and delivers the message when its rest arrives, with no fake time
// passing in between.
func TestCutMessageDeliveredWhenItsRestArrives(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rest := make(chan struct{})
		srv := startFake(t, inMemory(), withSession(func(c *fakeserver.Client) {
			if handshake(c, nil) != nil {
				return
			}
			sids := map[string]uint64{}
			serveOps(c, nil, func(op *proto.Op) {
				switch op.Kind {
				case proto.KindSub:
					sids[string(op.Subject)] = op.SID
				case proto.KindPub:
					if len(op.Reply) == 0 {
						return
					}
					var inbox uint64
					for s, sid := range sids {
						if strings.HasSuffix(s, ".*") {
							inbox = sid
						}
					}
					// The response and the head of a message, in one write.
					b := fmt.Appendf(nil, "MSG %s %d %d\r\n%s\r\nMSG cut %d 5\r\nab", op.Reply, inbox, len(op.Payload), op.Payload, sids["cut"])
					if c.Send(b) != nil {
						return
					}
					go func() {
						<-rest
						_ = c.Send([]byte("cde\r\n"))
					}()
				}
			})
		}))
		defer srv.stop()
		nc := srv.connect(t)
		defer nc.Close()
		got := make(chan string, 1)
		if _, err := nc.SubscribeFunc("cut", func(m *conn.Msg) { got <- string(m.Data) }); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := nc.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if m, err := nc.Request(ctx, "svc", []byte("q")); err != nil || string(m.Data) != "q" {
			t.Fatalf("request: %v", err)
		}
		synctest.Wait()
		start := time.Now()
		close(rest)
		if data := <-got; data != "abcde" {
			t.Fatalf("message %q, want abcde", data)
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("the rest of the cut message was delivered %v after it arrived, want at once", d)
		}
	})
}
