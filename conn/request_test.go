package conn_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
)

// echoResponder starts a responder on its own connection.
func echoResponder(t *testing.T, url, subject string) {
	t.Helper()
	rc := connect(t, url)
	if _, err := rc.SubscribeFunc(subject, func(m *conn.Msg) { m.Respond(m.Data) }); err != nil {
		t.Fatal(err)
	}
	if err := rc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

// Requests while messages for a subscription of the same connection keep
// arriving: every request gets its own response and every message is
// delivered, in order.
func TestRequestsWithSubscriptionTraffic(t *testing.T) {
	s := coreServer(t)
	echoResponder(t, s.URL(), "echo")
	nc := connect(t, s.URL())
	pub := connect(t, s.URL())
	ctx := ctxT(t)
	sub, err := nc.Subscribe("feed")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	const msgs, reqs = 20000, 2000
	go func() {
		for i := range msgs {
			pub.Publish("feed", fmt.Appendf(nil, "%d", i))
		}
		pub.Flush(context.Background())
	}()
	for i := range reqs {
		want := fmt.Sprintf("r%d", i)
		m, err := nc.Request(ctx, "echo", []byte(want))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if string(m.Data) != want {
			t.Fatalf("request %d got %q", i, m.Data)
		}
	}
	for i := range msgs {
		m, err := sub.NextMsg(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if want := fmt.Sprint(i); string(m.Data) != want {
			t.Fatalf("message %q, want %q", m.Data, want)
		}
	}
}

// Many requesters at once: each is woken with its own response.
func TestConcurrentRequesters(t *testing.T) {
	s := coreServer(t)
	echoResponder(t, s.URL(), "echo")
	nc := connect(t, s.URL())
	ctx := ctxT(t)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Go(func() {
			for i := range 300 {
				want := fmt.Sprintf("%d.%d", g, i)
				m, err := nc.Request(ctx, "echo", []byte(want))
				if err != nil {
					errs <- err
					return
				}
				if string(m.Data) != want {
					errs <- fmt.Errorf("got %q, want %q", m.Data, want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// A request that times out leaves the link usable.
func TestRequestTimeoutKeepsLink(t *testing.T) {
	s := coreServer(t)
	echoResponder(t, s.URL(), "echo")
	silent := connect(t, s.URL())
	if _, err := silent.Subscribe("void"); err != nil {
		t.Fatal(err)
	}
	if err := silent.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	ev := &testutil.Events{}
	nc := connect(t, s.URL(), conn.RequestTimeout(50*time.Millisecond), ev.Opt())
	for i := range 5 {
		if _, err := nc.Request(context.Background(), "void", nil); !errors.Is(err, conn.ErrTimeout) {
			t.Fatalf("request %d to a silent subscriber: %v, want ErrTimeout", i, err)
		}
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		_, err := nc.Request(dctx, "void", nil)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("request %d with a deadline: %v", i, err)
		}
		m, err := nc.Request(ctxT(t), "echo", []byte("ok"))
		if err != nil || string(m.Data) != "ok" {
			t.Fatalf("request after a timeout: %v %v", m, err)
		}
	}
	if n := ev.Count(conn.EventDisconnected); n != 0 {
		t.Fatalf("%d disconnects: a request timeout broke the link", n)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

// The link is lost while a requester waits: the request fails with
// ErrDisconnected, the connection reconnects and the next request works.
func TestRequestDuringRestart(t *testing.T) {
	s := coreServer(t)
	nc := connect(t, s.URL(), testutil.FastReconnect())
	if _, err := nc.Subscribe("void"); err != nil { // keeps the request waiting
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := nc.Request(ctxT(t), "void", nil)
		done <- err
	}()
	eventually(t, "the request to be pending", func() bool { return nc.Stats().OutMsgs >= 1 })
	nc.ForceReconnect()
	if err := <-done; !errors.Is(err, conn.ErrDisconnected) {
		t.Fatalf("request across the loss: %v, want ErrDisconnected", err)
	}
	echoResponder(t, s.URL(), "echo")
	eventually(t, "reconnect", nc.IsConnected)
	m, err := nc.Request(ctxT(t), "echo", []byte("back"))
	if err != nil || string(m.Data) != "back" {
		t.Fatalf("request after the reconnect: %v %v", m, err)
	}
}

// Over TLS too: requests get their responses, including after timeouts.
func TestRequestsOverTLS(t *testing.T) {
	certs := natstest.GenerateCerts(t)
	s := natstest.NewServer(t, natstest.JetStream(false), natstest.TLS(certs))
	url := tlsURL(s)
	rc := connect(t, url, conn.RootCAs(certs.CAFile))
	if _, err := rc.SubscribeFunc("echo", func(m *conn.Msg) { m.Respond(m.Data) }); err != nil {
		t.Fatal(err)
	}
	if _, err := rc.Subscribe("void"); err != nil {
		t.Fatal(err)
	}
	if err := rc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	ev := &testutil.Events{}
	nc := connect(t, url, conn.RootCAs(certs.CAFile), ev.Opt())
	for i := range 200 {
		if i%50 == 0 {
			// A short deadline for the silent subscriber only: the echo
			// requests keep the default timeout (a loaded machine may
			// take more than a few milliseconds for a round trip).
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Millisecond)
			_, err := nc.Request(ctx, "void", nil)
			cancel()
			if !errors.Is(err, conn.ErrTimeout) {
				t.Fatalf("request to a silent subscriber: %v", err)
			}
		}
		want := fmt.Sprint(i)
		m, err := nc.Request(context.Background(), "echo", []byte(want))
		if err != nil || string(m.Data) != want {
			t.Fatalf("request %d: %v %v", i, m, err)
		}
	}
	if n := ev.Count(conn.EventDisconnected); n != 0 {
		t.Fatalf("%d disconnects", n)
	}
}

// Two requests answered together: every response reaches its own
// requester.
func TestConcurrentPairsGetOwnResponses(t *testing.T) {
	s := coreServer(t)
	nc := connect(t, s.URL())
	rc := connect(t, s.URL())
	// The responder answers both requests of a round together, so that
	// both requesters wait on their channels (the role is taken by the
	// first; the second cannot read).
	var mu sync.Mutex
	var held []*conn.Msg
	if _, err := rc.SubscribeFunc("pair", func(m *conn.Msg) {
		mu.Lock()
		held = append(held, m)
		var ready []*conn.Msg
		if len(held) == 2 {
			ready, held = held, nil
		}
		mu.Unlock()
		for _, r := range ready {
			r.Respond(r.Data)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := rc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	for round := range 200 {
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		for i := range 2 {
			wg.Go(func() {
				want := fmt.Sprintf("%d.%d", round, i)
				m, err := nc.Request(ctx, "pair", []byte(want))
				if err == nil && string(m.Data) != want {
					err = fmt.Errorf("got %q, want %q", m.Data, want)
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}

// Over TLS, ending a consumer that waits (ctx cancelled, Unsubscribe)
// while other traffic streams in leaves the connection usable: no
// disconnect, nothing lost on the other subscription.
func TestConsumersOverTLSInterrupted(t *testing.T) {
	certs := natstest.GenerateCerts(t)
	s := natstest.NewServer(t, natstest.JetStream(false), natstest.TLS(certs))
	url := tlsURL(s)
	ev := &testutil.Events{}
	nc := connect(t, url, conn.RootCAs(certs.CAFile), ev.Opt())
	pub := connect(t, url, conn.RootCAs(certs.CAFile))
	keep, err := nc.Subscribe("keep")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	const rounds, perRound = 20, 100
	sent := 0
	sendKeep := func(n int) {
		for range n {
			pub.Publish("keep", fmt.Appendf(nil, "%d", sent))
			sent++
		}
	}
	for r := range rounds {
		subj := fmt.Sprintf("cut.%d", r)
		sub, err := nc.Subscribe(subj)
		if err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancelCause(ctxT(t))
		seen := make(chan int, perRound)
		end := make(chan error, 1)
		go func() {
			n := 0
			for _, err := range sub.Messages(ctx) {
				if err != nil {
					end <- err
					return
				}
				n++
				seen <- n
			}
			end <- nil
		}()
		for i := range perRound {
			pub.Publish(subj, fmt.Appendf(nil, "%d", i))
			sendKeep(1)
		}
		if err := pub.Flush(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		for n := 0; n < perRound; n = <-seen {
		}
		// The consumer now waits for more, reading the socket itself
		// (unless the reader goroutine has it). Interrupt it.
		cause := errors.New("stop")
		if r%2 == 0 {
			cancel(cause)
		} else if err := sub.Unsubscribe(); err != nil {
			t.Fatal(err)
		}
		if err := <-end; (r%2 == 0 && !errors.Is(err, cause)) || (r%2 == 1 && err != nil) {
			t.Fatalf("round %d: the iterator ended with %v", r, err)
		}
		cancel(nil)
		sendKeep(perRound)
		if err := pub.Flush(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range sent {
		m, err := keep.NextMsg(ctxT(t))
		if err != nil || string(m.Data) != fmt.Sprint(i) {
			t.Fatalf("kept message %d: %v %v", i, m, err)
		}
	}
	if n := ev.Count(conn.EventDisconnected); n != 0 {
		t.Fatalf("%d disconnects", n)
	}
}

// Stats counts a response before its Request returns and a message before
// the subscription yields it, whichever goroutine read it: requests here
// alternate with messages, so some responses are read by the requester
// and some by the reader goroutine.
func TestStatsCountBeforeDelivery(t *testing.T) {
	s := coreServer(t)
	echoResponder(t, s.URL(), "echo")
	nc := connect(t, s.URL())
	ctx := ctxT(t)
	sub, err := nc.Subscribe("self")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	base := nc.Stats().InMsgs
	var want uint64
	for i := range 500 {
		if _, err := nc.Request(ctx, "echo", []byte("x")); err != nil {
			t.Fatal(err)
		}
		want++
		if got := nc.Stats().InMsgs - base; got != want {
			t.Fatalf("after response %d: InMsgs %d, want %d", i, got, want)
		}
		if i%2 == 0 {
			continue
		}
		if err := nc.Publish("self", []byte("y")); err != nil {
			t.Fatal(err)
		}
		if _, err := sub.NextMsg(ctx); err != nil {
			t.Fatal(err)
		}
		want++
		if got := nc.Stats().InMsgs - base; got != want {
			t.Fatalf("after message %d: InMsgs %d, want %d", i, got, want)
		}
	}
}

// Request and Flush against a server that never answers fail with
// ErrTimeout (also matching context.DeadlineExceeded) at exactly their
// deadline: RequestTimeout for a ctx without deadline, the ctx's deadline
// otherwise (longer or shorter).
func TestRequestTimeoutExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var answerPings atomic.Bool
		answerPings.Store(true)
		var mu sync.Mutex
		var reqs []string
		srv := startFake(t, inMemory(), withSession(func(c *fakeserver.Client) {
			if handshake(c, nil) != nil {
				return
			}
			serveOps(c, answerPings.Load, func(op *proto.Op) {
				if op.Kind == proto.KindPub && len(op.Reply) > 0 {
					mu.Lock()
					reqs = append(reqs, string(op.Subject))
					mu.Unlock()
				}
			})
		}))
		const d = 3 * time.Second
		defer srv.stop()
		nc := srv.connect(t, conn.RequestTimeout(d), conn.PingInterval(time.Hour), conn.MaxPingsOutstanding(2))
		defer nc.Close()

		check := func(what string, want time.Duration, call func() error) {
			t.Helper()
			start := time.Now()
			err := call()
			if el := time.Since(start); el != want {
				t.Fatalf("%s failed after %v, want exactly %v (err %v)", what, el, want, err)
			}
			if !errors.Is(err, conn.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("%s: %v, want ErrTimeout and context.DeadlineExceeded", what, err)
			}
			if n := nc.Stats().RequestsPending; n != 0 {
				t.Fatalf("%s: %d requests still pending", what, n)
			}
		}
		bg := context.Background()
		check("Request with RequestTimeout", d, func() error {
			_, err := nc.Request(bg, "svc.a", nil)
			return err
		})
		check("Request with a shorter ctx deadline", 1500*time.Millisecond, func() error {
			ctx, cancel := context.WithTimeout(bg, 1500*time.Millisecond)
			defer cancel()
			_, err := nc.Request(ctx, "svc.b", nil)
			return err
		})
		check("Request with a longer ctx deadline", 7*time.Second, func() error {
			ctx, cancel := context.WithTimeout(bg, 7*time.Second)
			defer cancel()
			_, err := nc.Request(ctx, "svc.c", nil)
			return err
		})
		check("second Request (reused waiter)", d, func() error {
			_, err := nc.Request(bg, "svc.e", []byte("x"))
			return err
		})
		answerPings.Store(false)
		check("Flush with RequestTimeout", d, func() error { return nc.Flush(bg) })

		mu.Lock()
		defer mu.Unlock()
		if got := strings.Join(reqs, ","); got != "svc.a,svc.b,svc.c,svc.e" {
			t.Fatalf("server saw requests %s", got)
		}
	})
}

// One timer serves the request timeout of every request whose ctx has no
// deadline: two unanswered requests made a second apart each fail at
// exactly their own deadline (the timer fires for the first and is armed
// again for the second), while requests answered meanwhile, before and
// after the timer fired, get their responses.
func TestRequestTimeoutSweepStaggered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		push := make(chan struct{})
		defer close(push)
		srv := startFake(t, inMemory(), withSession(echoFeed(0, push, "")))
		defer srv.stop()
		const d = 3 * time.Second
		nc := srv.connect(t, conn.RequestTimeout(d), conn.PingInterval(time.Hour))
		defer nc.Close()

		bg := context.Background()
		start := time.Now()
		var wg sync.WaitGroup
		unanswered := func(after time.Duration) {
			wg.Go(func() {
				time.Sleep(after)
				_, err := nc.Request(bg, "silent", nil)
				if el := time.Since(start); el != after+d {
					t.Errorf("request made at %v failed at %v, want %v (err %v)", after, el, after+d, err)
				}
				if !errors.Is(err, conn.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("request made at %v: %v, want ErrTimeout and context.DeadlineExceeded", after, err)
				}
			})
		}
		unanswered(0)
		unanswered(time.Second)
		for _, at := range []time.Duration{2 * time.Second, 3500 * time.Millisecond, 5 * time.Second} {
			time.Sleep(at - time.Since(start))
			m, err := nc.Request(bg, "svc", []byte("x"))
			if err != nil || string(m.Data) != "x" {
				t.Fatalf("answered request at %v: %v, %v", at, m, err)
			}
		}
		wg.Wait()
		st := nc.Stats()
		if st.RequestsPending != 0 || st.RequestTimeouts != 2 || st.Requests != 5 {
			t.Fatalf("pending %d, timeouts %d, requests %d; want 0, 2, 5", st.RequestsPending, st.RequestTimeouts, st.Requests)
		}
	})
}

func TestPendingRequestsFailOnReconnect(t *testing.T) {
	s := coreServer(t)
	ev := &testutil.Events{}
	nc := connect(t, s.URL(), testutil.FastReconnect(), ev.Opt())
	if _, err := nc.Subscribe("f15.silent"); err != nil { // never answers
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	const n = 10
	errs := make(chan error, n)
	for range n {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := nc.Request(ctx, "f15.silent", nil)
			errs <- err
		}()
	}
	eventually(t, "requests pending", func() bool { return nc.Stats().RequestsPending == n })
	forced := time.Now()
	nc.ForceReconnect()
	for i := range n {
		err := recvErr(t, errs, 10*time.Second, fmt.Sprintf("request %d", i))
		if !errors.Is(err, conn.ErrDisconnected) || errors.Is(err, conn.ErrClosed) {
			t.Fatalf("request %d: %v, want ErrDisconnected", i, err)
		}
	}
	if d := time.Since(forced); d > 5*time.Second {
		t.Fatalf("requests released after %v, want promptly (deadline 20s)", d)
	}
	if c := nc.Stats().RequestsPending; c != 0 {
		t.Fatalf("%d requests still pending", c)
	}
	// The request path works again after the reconnect.
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	nc.SubscribeFunc("f15.echo", func(m *conn.Msg) { m.Respond(m.Data) })
	if m, err := nc.Request(ctxT(t), "f15.echo", []byte("again")); err != nil || string(m.Data) != "again" {
		t.Fatalf("request after reconnect: %v %v", m, err)
	}
}

func TestAbandonedRequestsFreed(t *testing.T) {
	s := coreServer(t)
	nc := connect(t, s.URL())
	silent := connect(t, s.URL())
	// A subscriber that never replies keeps no-responders away.
	if _, err := silent.SubscribeFunc("f16", func(*conn.Msg) {}); err != nil {
		t.Fatal(err)
	}
	if err := silent.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	run := func(total int) {
		const workers = 100
		var wg sync.WaitGroup
		var bad atomic.Value
		for w := range workers {
			wg.Go(func() {
				for i := range total / workers {
					d := time.Duration(1+(w+i)%5) * time.Millisecond
					ctx, cancel := context.WithTimeout(context.Background(), d)
					_, err := nc.Request(ctx, "f16", nil)
					cancel()
					if !errors.Is(err, conn.ErrTimeout) {
						bad.Store(fmt.Sprint(err))
					}
				}
			})
		}
		wg.Wait()
		if v := bad.Load(); v != nil {
			t.Fatalf("abandoned request ended with %v, want ErrTimeout", v)
		}
	}
	run(2000) // warm up pools and buffers
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	run(20000)
	if n := nc.Stats().RequestsPending; n != 0 {
		t.Fatalf("%d abandoned requests still in the multiplexer", n)
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap growth after 20k abandoned requests: %d bytes", growth)
	if growth > 1<<20 {
		t.Fatalf("heap grew %d bytes after 20k abandoned requests (> 1 MiB)", growth)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

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
