package conn_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/internal/testutil"
)

func TestMaxReconnectsReleasesEverything(t *testing.T) {
	s := coreServer(t)
	p := testutil.Proxy(t, s.URL())
	baseG := goroutinesInConn()
	ev := &testutil.Events{}
	nc := connect(t, p.URL(), conn.MaxReconnects(2), testutil.FastReconnect(), ev.Opt(),
		conn.RequestTimeout(time.Minute))
	iterSub, _ := nc.Subscribe("f25.iter")
	nextSub, _ := nc.Subscribe("f25.next")
	nc.Subscribe("f25.silent")
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	iterErr := make(chan error, 1)
	go func() {
		for _, err := range iterSub.Messages(context.Background()) {
			if err != nil {
				iterErr <- err
				return
			}
		}
		iterErr <- nil
	}()
	nextErr := make(chan error, 1)
	go func() {
		_, err := nextSub.NextMsg(context.Background())
		nextErr <- err
	}()
	reqErr := make(chan error, 1)
	go func() {
		_, err := nc.Request(context.Background(), "f25.silent", nil)
		reqErr <- err
	}()
	eventually(t, "request pending", func() bool { return nc.Stats().RequestsPending == 1 })
	p.Stall(faultproxy.Down, true) // the next PONG never comes
	flushErr := make(chan error, 1)
	go func() { flushErr <- nc.Flush(context.Background()) }()
	eventually(t, "flush pending", func() bool { return conn.PendingPongs(nc) == 1 })

	s.Shutdown()
	p.CutAll()
	if err := recvErr(t, reqErr, 10*time.Second, "blocked Request"); !errors.Is(err, conn.ErrDisconnected) && !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("Request: %v", err)
	}
	if err := recvErr(t, flushErr, 10*time.Second, "blocked Flush"); !errors.Is(err, conn.ErrDisconnected) && !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("Flush: %v", err)
	}
	select {
	case <-nc.Closed():
	case <-time.After(10 * time.Second):
		t.Fatal("connection not closed after MaxReconnects(2) failures")
	}
	if err := nc.Err(); !errors.Is(err, conn.ErrNoServers) {
		t.Fatalf("closed with %v, want ErrNoServers", err)
	}
	if err := recvErr(t, iterErr, 10*time.Second, "blocked iterator"); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("iterator ended with %v", err)
	}
	if err := recvErr(t, nextErr, 10*time.Second, "blocked NextMsg"); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("NextMsg: %v", err)
	}
	if err := nc.Flush(ctxT(t)); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("Flush after close: %v", err)
	}
	if _, err := nc.Request(ctxT(t), "x", nil); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("Request after close: %v", err)
	}
	eventually(t, "Closed event", func() bool { return ev.Count(conn.EventClosed) == 1 })
	if c, _, _ := ev.First(conn.EventClosed); !errors.Is(c.Err, conn.ErrNoServers) {
		t.Fatalf("Closed event with %v", c.Err)
	}
	eventually(t, "client goroutines to return", func() bool { return goroutinesInConn() <= baseG })
}

func TestQueueAutoUnsubAcrossRestart(t *testing.T) {
	s := coreServer(t)
	ev := &testutil.Events{}
	nc := connect(t, s.URL(), testutil.FastReconnect(), ev.Opt())
	pubEv := &testutil.Events{}
	pub := connect(t, s.URL(), testutil.FastReconnect(), pubEv.Opt())
	sub, err := nc.QueueSubscribe("f29", "workers")
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.AutoUnsubscribe(10); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		pub.Publish("f29", []byte(strconv.Itoa(i)))
	}
	pub.Flush(ctxT(t))
	eventually(t, "five messages", func() bool { return sub.Delivered() == 5 })

	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "both reconnected", func() bool {
		return ev.Count(conn.EventReconnected) == 1 && pubEv.Count(conn.EventReconnected) == 1
	})
	if err := nc.Flush(ctxT(t)); err != nil { // the restored SUB/UNSUB are processed
		t.Fatal(err)
	}
	// The server holds the subscription in the same queue group with the
	// remaining count.
	cz, err := s.Server().Connz(&server.ConnzOptions{SubscriptionsDetail: true})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ci := range cz.Conns {
		for _, sd := range ci.SubsDetail {
			if sd.Subject == "f29" {
				found = true
				if sd.Queue != "workers" || sd.Max != 5 {
					t.Fatalf("restored subscription: queue %q max %d, want workers and 5", sd.Queue, sd.Max)
				}
			}
		}
	}
	if !found {
		t.Fatal("subscription not restored")
	}
	for i := 5; i < 15; i++ {
		pub.Publish("f29", []byte(strconv.Itoa(i)))
	}
	if err := pub.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for m, err := range sub.Messages(ctxT(t)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(m.Data))
	}
	if want := "0 1 2 3 4 5 6 7 8 9"; strings.Join(got, " ") != want {
		t.Fatalf("delivered %q, want %q", got, want)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if st := nc.Stats(); st.UnknownSID != 0 || st.InMsgs != 10 {
		t.Fatalf("server sent more than the remaining count: InMsgs %d UnknownSID %d", st.InMsgs, st.UnknownSID)
	}
}
