package conn_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
)

// Shared test helpers (internal/testutil).
var (
	connect    = testutil.Connect
	ctxT       = testutil.Ctx
	eventually = testutil.Eventually
)

func TestPubSubIterator(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	sub, err := nc.Subscribe("orders.*")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	const n = 1000
	for i := range n {
		if err := nc.Publish(fmt.Sprintf("orders.%d", i%7), []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	i := 0
	for m, err := range sub.Messages(ctxT(t)) {
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("orders.%d", i%7); m.Subject != want || string(m.Data) != fmt.Sprint(i) {
			t.Fatalf("msg %d: %s %q", i, m.Subject, m.Data)
		}
		i++
		if i == n {
			break
		}
	}
	// Iterating again resumes where the last loop stopped.
	if err := nc.Publish("orders.x", []byte("again")); err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(ctxT(t))
	if err != nil || string(m.Data) != "again" {
		t.Fatalf("next: %v %v", m, err)
	}
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	for _, err := range sub.Messages(ctxT(t)) {
		t.Fatalf("after unsubscribe got %v", err)
	}
}

func TestMessagesOwnedByReceiver(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	sub, _ := nc.Subscribe("own")
	nc.Flush(ctxT(t))
	var kept []*conn.Msg
	for i := range 3000 {
		nc.Publish("own", []byte(strings.Repeat(string(rune('a'+i%26)), 100)))
	}
	for m, err := range sub.Messages(ctxT(t)) {
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, m)
		if len(kept) == 3000 {
			break
		}
	}
	for i, m := range kept {
		if want := strings.Repeat(string(rune('a'+i%26)), 100); string(m.Data) != want || m.Subject != "own" {
			t.Fatalf("message %d changed after delivery: %q", i, m.Data)
		}
	}
}

func TestHeadersRoundTrip(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	sub, _ := nc.Subscribe("h")
	nc.Flush(ctxT(t))
	var h proto.Header
	h.Add("Nats-TTL", "5s")
	h.Add("X-Multi", "1")
	h.Add("X-Multi", "2")
	if err := nc.PublishMsg("h", "r.1", &h, []byte("body")); err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := m.Header.Lookup("Nats-TTL"); v != "5s" {
		t.Fatalf("Nats-TTL = %q", v)
	}
	if _, ok := m.Header.Lookup("Nats-Ttl"); ok {
		t.Fatal("header keys must match case-sensitively")
	}
	if err := m.Header.Validate(); err != nil {
		t.Fatal(err)
	}
	var vals []string
	for v := range m.Header.Values("X-Multi") {
		vals = append(vals, v)
	}
	if strings.Join(vals, ",") != "1,2" || m.Reply != "r.1" || string(m.Data) != "body" {
		t.Fatalf("got %v reply %q data %q", vals, m.Reply, m.Data)
	}
	// The received header is published again as it was received.
	fwd, _ := nc.Subscribe("h.fwd")
	nc.Flush(ctxT(t))
	if err := nc.PublishMsg("h.fwd", "", &m.Header, m.Data); err != nil {
		t.Fatal(err)
	}
	f, err := fwd.NextMsg(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if f.Header.String() != m.Header.String() || f.Header.String() != "NATS/1.0\r\nNats-TTL: 5s\r\nX-Multi: 1\r\nX-Multi: 2\r\n\r\n" {
		t.Fatalf("forwarded header %q, received %q", f.Header.String(), m.Header.String())
	}
	// Invalid headers are refused before anything is written.
	var bad proto.Header
	bad.Add("Bad Key", "v")
	if err := nc.PublishMsg("h", "", &bad, nil); !errors.Is(err, conn.ErrBadHeader) {
		t.Fatalf("bad header: %v", err)
	}
}

func TestRequestReply(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	_, err := nc.SubscribeFunc("svc.echo", func(m *conn.Msg) {
		m.Respond(append([]byte("echo:"), m.Data...))
	})
	if err != nil {
		t.Fatal(err)
	}
	nc.Flush(ctxT(t))
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			r, err := nc.Request(ctxT(t), "svc.echo", []byte(fmt.Sprint(i)))
			if err != nil {
				t.Error(err)
				return
			}
			if string(r.Data) != "echo:"+fmt.Sprint(i) {
				t.Errorf("reply %q", r.Data)
			}
		})
	}
	wg.Wait()
}

func TestNoResponders(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	start := time.Now()
	_, err := nc.Request(ctxT(t), "nobody.home", nil)
	if !errors.Is(err, conn.ErrNoResponders) {
		t.Fatalf("got %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("no responders should fail at once, not at the deadline")
	}
}

func TestRequestTimeoutsFreeSlots(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	// A responder that never answers keeps no-responders away.
	sub, _ := nc.Subscribe("silent")
	_ = sub
	nc.Flush(ctxT(t))
	for range 200 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		_, err := nc.Request(ctx, "silent", nil)
		cancel()
		if !errors.Is(err, conn.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v", err)
		}
	}
	if n := nc.Stats().RequestsPending; n != 0 {
		t.Fatalf("%d request slots left after timeouts", n)
	}
}

func TestQueueGroup(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	var mu sync.Mutex
	counts := map[int]int{}
	total := 0
	done := make(chan struct{})
	for w := range 3 {
		_, err := nc.QueueSubscribeFunc("work", "workers", func(m *conn.Msg) {
			mu.Lock()
			defer mu.Unlock()
			counts[w]++
			total++
			if total == 300 {
				close(done)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	nc.Flush(ctxT(t))
	for range 300 {
		nc.Publish("work", []byte("x"))
	}
	select {
	case <-done:
	case <-ctxT(t).Done():
		t.Fatal("not all messages arrived")
	}
	nc.Flush(ctxT(t))
	mu.Lock()
	defer mu.Unlock()
	if total != 300 || len(counts) < 2 {
		t.Fatalf("total %d spread %v", total, counts)
	}
}

func TestAutoUnsubscribe(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	sub, _ := nc.Subscribe("auto")
	if err := sub.AutoUnsubscribe(5); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		nc.Publish("auto", []byte("x"))
	}
	n := 0
	for _, err := range sub.Messages(ctxT(t)) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 5 {
		t.Fatalf("got %d messages, want 5", n)
	}
}

// A count the server cannot read (ten digits or more, which it takes as
// "unsubscribe now") is refused before anything is sent, and the
// subscription keeps receiving; RequestMany with such a max counts on the
// client only.
func TestAutoUnsubscribeCountTheServerCannotRead(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	sub, _ := nc.Subscribe("big")
	if err := sub.AutoUnsubscribe(conn.MaxAutoUnsubscribe + 1); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("AutoUnsubscribe(%d): %v, want ErrInvalidOption", conn.MaxAutoUnsubscribe+1, err)
	}
	if err := nc.Publish("big", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.NextMsg(ctxT(t)); err != nil {
		t.Fatalf("the subscription stopped receiving: %v", err)
	}

	responder, _ := nc.SubscribeFunc("many", func(m *conn.Msg) {
		for range 2 {
			nc.Publish(m.Reply, []byte("r"))
		}
	})
	defer responder.Unsubscribe()
	ctx, cancel := context.WithTimeout(ctxT(t), 5*time.Second)
	defer cancel()
	n := 0
	for _, err := range nc.RequestMany(ctx, "many", nil, nil, conn.ManyMax(2_000_000_000), conn.ManyStall(time.Second)) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("RequestMany with max 2e9: %d replies, want 2", n)
	}
}

func TestValidationBeforeWrite(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false), natstest.MaxPayload(1024))
	nc := connect(t, s.URL())
	before := nc.Stats().OutBytes
	for _, subj := range []string{"", "a b", "a..b", "a.*", "a.>", ".a", "a.", "a\r\nPUB x 1"} {
		if err := nc.Publish(subj, []byte("x")); !errors.Is(err, conn.ErrBadSubject) {
			t.Errorf("publish %q: %v", subj, err)
		}
	}
	if err := nc.Publish("ok", make([]byte, 1025)); !errors.Is(err, conn.ErrMaxPayload) {
		t.Errorf("oversized: %v", err)
	}
	if _, err := nc.Subscribe("a.>.b"); !errors.Is(err, conn.ErrBadSubject) {
		t.Errorf("subscribe: %v", err)
	}
	if _, err := nc.QueueSubscribe("a", "q q"); !errors.Is(err, conn.ErrBadQueue) {
		t.Errorf("queue: %v", err)
	}
	if err := nc.PublishMsg("ok", "bad reply", nil, nil); !errors.Is(err, conn.ErrBadSubject) {
		t.Errorf("reply: %v", err)
	}
	if got := nc.Stats().OutBytes; got != before {
		t.Fatalf("rejected publishes wrote %d bytes", got-before)
	}
	// The connection is still healthy.
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

func TestCloseEndsEverything(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	base := runtime.NumGoroutine()
	nc := connect(t, s.URL())
	sub, _ := nc.Subscribe("x")
	nc.SubscribeFunc("y", func(*conn.Msg) {})
	nc.Subscribe("z")
	errc := make(chan error, 1)
	go func() {
		for _, err := range sub.Messages(context.Background()) {
			errc <- err
			return
		}
	}()
	// A request in flight is released by Close.
	reqErr := make(chan error, 1)
	nc.Subscribe("silent")
	nc.Flush(ctxT(t))
	go func() {
		_, err := nc.Request(context.Background(), "silent", nil)
		reqErr <- err
	}()
	eventually(t, "request pending", func() bool { return nc.Stats().RequestsPending == 1 })
	nc.Close()
	if err := <-errc; !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("iterator ended with %v", err)
	}
	if err := <-reqErr; !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("request ended with %v", err)
	}
	if err := nc.Publish("x", nil); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("publish after close: %v", err)
	}
	eventually(t, "goroutines to return", func() bool { return runtime.NumGoroutine() <= base })
}

func TestDrain(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	pub := connect(t, s.URL())
	var mu sync.Mutex
	got := 0
	nc.SubscribeFunc("d", func(*conn.Msg) { mu.Lock(); got++; mu.Unlock() })
	nc.Flush(ctxT(t))
	for range 500 {
		pub.Publish("d", []byte("x"))
	}
	pub.Flush(ctxT(t))
	if err := nc.Drain(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if !nc.IsClosed() {
		t.Fatal("not closed after drain")
	}
	mu.Lock()
	defer mu.Unlock()
	if got != 500 {
		t.Fatalf("drain delivered %d of 500", got)
	}
}

func TestReconnectResubscribe(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	events := make(chan conn.Event, 64)
	nc := connect(t, s.URL(), conn.ReconnectBackoff(10*time.Millisecond, 50*time.Millisecond), conn.ReconnectJitter(5*time.Millisecond),
		conn.OnEvent(func(e conn.Event) { events <- e }))
	sub, _ := nc.Subscribe("rs")
	qsub, _ := nc.QueueSubscribe("rq", "g")
	auto, _ := nc.Subscribe("ra")
	auto.AutoUnsubscribe(3)
	nc.Publish("ra", []byte("1"))
	nc.Flush(ctxT(t))
	eventually(t, "first auto message", func() bool { return auto.Delivered() == 1 })

	reconnected := make(chan struct{}, 1)
	nc.OnReconnect(func() { reconnected <- struct{}{} })
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	<-reconnected
	for _, subj := range []string{"rs", "rq", "ra", "ra", "ra", "ra"} {
		nc.Publish(subj, []byte("after"))
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	for _, sb := range []*conn.Subscription{sub, qsub} {
		if m, err := sb.NextMsg(ctxT(t)); err != nil || string(m.Data) != "after" {
			t.Fatalf("%s after restart: %v %v", sb.Subject, m, err)
		}
	}
	n := 0
	for _, err := range auto.Messages(ctxT(t)) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("auto-unsubscribe across reconnect delivered %d, want 3", n)
	}
	kinds := map[conn.EventKind]bool{}
	for len(events) > 0 {
		kinds[(<-events).Kind] = true
	}
	if !kinds[conn.EventDisconnected] || !kinds[conn.EventReconnected] {
		t.Fatalf("events seen: %v", kinds)
	}
}

func TestReconnectBufferOverflow(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL(), conn.ReconnectBuffer(4096),
		conn.ReconnectBackoff(time.Hour, time.Hour), conn.ReconnectJitter(0))
	s.Shutdown()
	eventually(t, "disconnect", func() bool { return !nc.IsConnected() })
	var err error
	n := 0
	for ; n < 1000; n++ {
		if err = nc.Publish("buf", make([]byte, 100)); err != nil {
			break
		}
	}
	if !errors.Is(err, conn.ErrReconnectBuffer) || n == 0 || n > 40 {
		t.Fatalf("after %d publishes: %v", n, err)
	}
	if err := nc.Flush(ctxT(t)); !errors.Is(err, conn.ErrDisconnected) {
		t.Fatalf("flush while disconnected: %v", err)
	}
}

// Messages larger than the read buffer, and messages split across reads,
// arrive whole, headers included.
func TestLargeAndSplitMessages(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	sub, _ := nc.Subscribe("big")
	nc.Flush(ctxT(t))
	var h proto.Header
	h.Add("K", "v")
	sizes := []int{300 << 10, 10 << 10, 9999, 1, 0, 70 << 10}
	for i := range 40 {
		sz := sizes[i%len(sizes)] + i
		data := make([]byte, sz)
		for j := range data {
			data[j] = byte(i + j)
		}
		if err := nc.PublishMsg("big", "", &h, data); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 40 {
		m, err := sub.NextMsg(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		sz := sizes[i%len(sizes)] + i
		if len(m.Data) != sz || m.Header.Get("K") != "v" {
			t.Fatalf("msg %d: %d bytes (want %d), header %q", i, len(m.Data), sz, m.Header)
		}
		for j, b := range m.Data {
			if b != byte(i+j) {
				t.Fatalf("msg %d byte %d corrupt", i, j)
			}
		}
	}
}

func coreServer(t *testing.T) *natstest.Server {
	return natstest.NewServer(t, natstest.JetStream(false))
}

// recvErr waits for one error from ch, failing after d.
func recvErr(t *testing.T, ch <-chan error, d time.Duration, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
		return nil
	}
}
