package conn_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/proto"
)

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
