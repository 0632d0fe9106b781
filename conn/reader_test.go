package conn_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/conn"
)

// connectFeedRequester connects to an echoFeed server, subscribes to "feed" and
// makes one request, then waits until all is quiet.
func connectFeedRequester(t *testing.T, srv *fake, opts ...conn.Option) (*conn.Conn, *conn.Subscription) {
	t.Helper()
	nc := srv.connect(t, opts...)
	sub, err := nc.Subscribe("feed")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Request(ctx, "svc", []byte("warm")); err != nil {
		t.Fatal(err)
	}
	synctest.Wait()
	return nc, sub
}

// A subscription message sent just after a loop of requests ends is
// delivered at once, with no fake time passing: the connection's one
// reader goroutine reads every response and the message, and never waits
// for anyone to hand the socket back. Read with NextMsg, and by a
// SubscribeFunc handler before its first message.
func TestMessageAfterRequestLoop(t *testing.T) {
	for _, form := range []string{"nextmsg", "handler"} {
		t.Run(form, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				push := make(chan struct{})
				srv := startFake(t, inMemory(), withSession(echoFeed(100*time.Microsecond, push, "late")))
				defer srv.stop()
				defer close(push)
				nc, sub := connectFeedRequester(t, srv, conn.PingInterval(time.Hour), conn.MaxPingsOutstanding(2))
				defer nc.Close()
				got := make(chan *conn.Msg, 1)
				if form == "handler" {
					if _, err := nc.SubscribeFunc("feed", func(m *conn.Msg) { got <- m }); err != nil {
						t.Fatal(err)
					}
					_ = sub.Unsubscribe()
					if err := nc.Flush(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
				ctx := context.Background()
				const reqs = 300 // 30 ms of requests
				start := time.Now()
				for i := range reqs {
					m, err := nc.Request(ctx, "svc", []byte(fmt.Sprint(i)))
					if err != nil || string(m.Data) != fmt.Sprint(i) {
						t.Fatalf("request %d: %v %q", i, err, m.Data)
					}
				}
				if el := time.Since(start); el != reqs*100*time.Microsecond {
					t.Fatalf("the loop took %v of fake time, want %v", el, reqs*100*time.Microsecond)
				}
				sent := time.Now()
				push <- struct{}{}
				var m *conn.Msg
				if form == "handler" {
					m = <-got
				} else {
					var err error
					if m, err = sub.NextMsg(ctx); err != nil {
						t.Fatalf("NextMsg: %v", err)
					}
				}
				if string(m.Data) != "late" {
					t.Fatalf("got %q", m.Data)
				}
				if el := time.Since(sent); el != 0 {
					t.Fatalf("message delivered %v after the loop, want at once", el)
				}
			})
		})
	}
}
