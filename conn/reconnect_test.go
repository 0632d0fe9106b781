package conn_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/internal/leakcheck"
	"github.com/natsio/natsio/internal/testutil"
)

func TestMaxReconnectsReleasesEverything(t *testing.T) {
	s := coreServer(t)
	p := testutil.Proxy(t, s.URL())
	baseG := leakcheck.InPackage("conn")
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
	eventually(t, "client goroutines to return", func() bool { return leakcheck.InPackage("conn") <= baseG })
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

// A server that gossips 30 addresses that accept TCP and never answer,
// then goes down for 2 s: the client must be back on the named server
// within ReconnectWait + jitter (2.5 s) of its return, as with no gossip.
// Gossiped servers never come before a named one whose wait is over, and
// an attempt to a gossiped server ends when a named server's wait does.
func TestGossipedBlackHolesDoNotStarveNamedServer(t *testing.T) {
	const (
		holes  = 30
		lossAt = time.Second
		outage = 2 * time.Second
		bound  = conn.DefaultReconnectWait + conn.DefaultReconnectJitter
	)
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		back := lossAt + outage
		urls := make([]string, holes)
		for i := range urls {
			urls[i] = fmt.Sprintf("hole%d:4222", i)
		}
		info := fakeserver.DefaultInfo().With("connect_urls", urls)
		srv := startFake(t, inMemory(), withSession(func(c *fakeserver.Client) {
			if handshake(c, info) != nil {
				return
			}
			if time.Since(start) < lossAt {
				time.Sleep(lossAt - time.Since(start))
				return // the named server goes down
			}
			serveOps(c, nil, nil)
		}))
		// The gossiped servers accept every connection and never send a
		// byte: silent until the client closes.
		blackHoles := make([]*fake, holes)
		for i, u := range urls {
			blackHoles[i] = startFake(t, inMemoryAt(u))
		}
		holesDial := dialFakes(blackHoles...)
		named := &outageDialer{l: srv.mem, start: start, down: lossAt, up: back}
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == fakeAddr {
				return named.dial(ctx, network, addr)
			}
			return holesDial(ctx, network, addr)
		}
		ev := newTimedEvents(start)
		nc, err := srv.tryConnect(t, context.Background(), conn.Dialer(dial), ev.opt(), conn.PingInterval(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if got := len(nc.Servers()); got != holes+1 {
			t.Fatalf("pool of %d servers, want %d", got, holes+1)
		}
		r := ev.wait(conn.EventReconnected)
		tried := 0
		for _, h := range blackHoles {
			if h.mem.Dials() > 0 {
				tried++
			}
		}
		nc.Close()
		for _, h := range blackHoles {
			h.stop()
		}
		srv.stop()
		late := r.at - back
		if r.Server != fakeURL || late < 0 || late > bound {
			t.Fatalf("reconnected to %s %v after the named server was back, want %s within %v (%d gossiped servers tried)\nnamed server dials: %v",
				r.Server, late, fakeURL, bound, tried, named.times())
		}
		t.Logf("back on the named server %v after its return; %d of %d gossiped servers tried meanwhile", late, tried, holes)
	})
}

func TestReconnectBufferDisabled(t *testing.T) {
	s := coreServer(t)
	p := testutil.Proxy(t, s.URL())
	ev := &testutil.Events{}
	nc := connect(t, p.URL(), conn.ReconnectBuffer(-1), testutil.FastReconnect(), ev.Opt())
	p.Refuse(true)
	p.CutAll()
	eventually(t, "disconnect", func() bool { return !nc.IsConnected() })
	start := time.Now()
	if err := nc.Publish("f27", []byte("x")); !errors.Is(err, conn.ErrReconnectBuffer) {
		t.Fatalf("publish while disconnected: %v", err)
	}
	if _, err := nc.Request(ctxT(t), "f27", nil); !errors.Is(err, conn.ErrReconnectBuffer) {
		t.Fatalf("request while disconnected: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("failing publishes took %v", d)
	}
	if nc.Stats().RequestsPending != 0 {
		t.Fatal("failed request left pending")
	}
	p.Refuse(false)
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	if err := nc.Publish("f27", []byte("x")); err != nil {
		t.Fatal(err)
	}
}

func TestReconnectBufferLimit(t *testing.T) {
	s := coreServer(t)
	p := testutil.Proxy(t, s.URL())
	watcher := connect(t, s.URL()) // stays connected
	sub, _ := watcher.Subscribe("f27.b")
	if err := watcher.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	ev := &testutil.Events{}
	const limit = 2048
	nc := connect(t, p.URL(), conn.ReconnectBuffer(limit), testutil.FastReconnect(), ev.Opt())
	p.Refuse(true)
	p.CutAll()
	eventually(t, "disconnect", func() bool { return !nc.IsConnected() })
	payload := func(i int) []byte { return []byte(fmt.Sprintf("%03d:%s", i, strings.Repeat("x", 96))) }
	accepted := 0
	for ; accepted < 100; accepted++ {
		err := nc.Publish("f27.b", payload(accepted))
		if err != nil {
			if !errors.Is(err, conn.ErrReconnectBuffer) {
				t.Fatalf("publish %d: %v", accepted, err)
			}
			break
		}
	}
	if accepted == 0 || accepted*100 > limit {
		t.Fatalf("%d publishes of 100 bytes accepted into a %d-byte buffer", accepted, limit)
	}
	for i := range 5 { // beyond the limit: every one fails at once
		if err := nc.Publish("f27.b", payload(100+i)); !errors.Is(err, conn.ErrReconnectBuffer) {
			t.Fatalf("publish beyond the buffer: %v", err)
		}
	}
	p.Refuse(false)
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	if err := nc.Publish("f27.b", []byte("end")); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		m, err := sub.NextMsg(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		if string(m.Data) == "end" {
			if i != accepted {
				t.Fatalf("%d buffered messages delivered, want %d", i, accepted)
			}
			break
		}
		if !bytes.Equal(m.Data, payload(i)) {
			t.Fatalf("message %d: %q", i, m.Data[:8])
		}
	}
}
