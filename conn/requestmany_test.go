package conn_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/leakcheck"
	"github.com/natsio/natsio/natstest"
)

// responders starts n subscribers of subject on a connection of their own,
// each answering every request with "<prefix><i>", and returns once the
// server knows them.
func responders(t *testing.T, url, subject string, n int) {
	t.Helper()
	rc := connect(t, url)
	// A handler's goroutine starts with its first message: one message
	// without reply starts them all now, so that the goroutine counts of
	// leak checks taken after this see them already running.
	var warm sync.WaitGroup
	warm.Add(n)
	for i := range n {
		if _, err := rc.SubscribeFunc(subject, func(m *conn.Msg) {
			if m.Reply == "" {
				warm.Done()
				return
			}
			m.Respond([]byte(fmt.Sprintf("r%d", i)))
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := rc.Publish(subject, nil); err != nil {
		t.Fatal(err)
	}
	warm.Wait()
}

// serverSubs reports how many subscriptions the server holds for nc.
func serverSubs(t *testing.T, s *natstest.Server, nc *conn.Conn) int {
	t.Helper()
	cz, err := s.Server().Connz(&server.ConnzOptions{CID: nc.ServerInfo().ClientID})
	if err != nil || len(cz.Conns) != 1 {
		t.Fatalf("connz: %v %d", err, len(cz.Conns))
	}
	return int(cz.Conns[0].NumSubs)
}

// collect ranges over seq and returns the payloads and the error yielded.
func collect(seq func(func(*conn.Msg, error) bool)) ([]string, error) {
	var got []string
	for m, err := range seq {
		if err != nil {
			return got, err
		}
		got = append(got, string(m.Data))
	}
	return got, nil
}

// inboxGone asserts that nc is back to want subscriptions, at once here
// and eventually at the server.
func inboxGone(t *testing.T, s *natstest.Server, nc *conn.Conn, want int) {
	t.Helper()
	if n := conn.NumSubs(nc); n != want {
		t.Fatalf("client holds %d subscriptions after the iteration, want %d", n, want)
	}
	eventually(t, "server-side inbox subscription removed", func() bool { return serverSubs(t, s, nc) == want })
}

func TestRequestManyGathersAll(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	responders(t, s.URL(), "svc.many", 3)
	nc := connect(t, s.URL())
	// The total timeout, from ManyTimeout or from ctx's deadline, ends the
	// gathering without error once replies came.
	for _, c := range []struct {
		name string
		seq  func() func(func(*conn.Msg, error) bool)
	}{
		{"ManyTimeout", func() func(func(*conn.Msg, error) bool) {
			return nc.RequestMany(ctxT(t), "svc.many", nil, []byte("q"), conn.ManyTimeout(2*time.Second))
		}},
		{"ctx deadline", func() func(func(*conn.Msg, error) bool) {
			ctx, cancel := context.WithTimeout(ctxT(t), 2*time.Second)
			t.Cleanup(cancel)
			return nc.RequestMany(ctx, "svc.many", nil, []byte("q"))
		}},
	} {
		got, err := collect(c.seq())
		if err != nil {
			t.Fatalf("%s: total timeout after replies must end without error: %v", c.name, err)
		}
		slices.Sort(got)
		if !slices.Equal(got, []string{"r0", "r1", "r2"}) {
			t.Fatalf("%s: replies %q", c.name, got)
		}
		inboxGone(t, s, nc, 0)
	}
}

func TestRequestManyMax(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	responders(t, s.URL(), "svc.max", 3)
	nc := connect(t, s.URL())
	got, err := collect(nc.RequestMany(ctxT(t), "svc.max", nil, nil, conn.ManyMax(2)))
	if err != nil || len(got) != 2 {
		t.Fatalf("got %q, %v; want 2 replies", got, err)
	}
	inboxGone(t, s, nc, 0)
}

func TestRequestManyStall(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	responders(t, s.URL(), "svc.stall", 3)
	nc := connect(t, s.URL())
	// A stall long enough that a loaded machine never spaces two of the
	// three replies that far apart.
	const total, stall = 30 * time.Second, time.Second
	start := time.Now()
	var last time.Time
	n := 0
	for _, err := range nc.RequestMany(ctxT(t), "svc.stall", nil, nil, conn.ManyTimeout(total), conn.ManyStall(stall)) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		last = time.Now()
	}
	end := time.Now()
	if n != 3 {
		t.Fatalf("%d replies, want 3", n)
	}
	if end.Sub(last) < stall {
		t.Fatalf("ended %v after the last reply, before the stall time %v", end.Sub(last), stall)
	}
	if el := end.Sub(start); el > total/5 {
		t.Fatalf("stall did not end the iteration early: %v of a %v total timeout", el, total)
	}
	inboxGone(t, s, nc, 0)
}

func TestRequestManySentinel(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	rc := connect(t, s.URL())
	// One responder streams its answer in order and ends it with an empty
	// message, then sends one more that must not be seen.
	rc.SubscribeFunc("svc.stream", func(m *conn.Msg) {
		for _, p := range []string{"a", "b", "", "after"} {
			m.Respond([]byte(p))
		}
	})
	rc.SubscribeFunc("svc.custom", func(m *conn.Msg) {
		for _, p := range []string{"x", "end", "y"} {
			m.Respond([]byte(p))
		}
	})
	rc.Flush(ctxT(t))
	nc := connect(t, s.URL())
	got, err := collect(nc.RequestMany(ctxT(t), "svc.stream", nil, nil, conn.ManyEmptySentinel()))
	if err != nil || !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("empty sentinel: %q, %v", got, err)
	}
	isEnd := func(m *conn.Msg) bool { return string(m.Data) == "end" }
	got, err = collect(nc.RequestMany(ctxT(t), "svc.custom", nil, nil, conn.ManySentinel(isEnd)))
	if err != nil || !slices.Equal(got, []string{"x"}) {
		t.Fatalf("custom sentinel: %q, %v", got, err)
	}
	inboxGone(t, s, nc, 0)
}

func TestRequestManyNoResponders(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	start := time.Now()
	// The empty sentinel must not hide the (empty) 503 status.
	got, err := collect(nc.RequestMany(ctxT(t), "svc.nobody", nil, nil, conn.ManyEmptySentinel(), conn.ManyTimeout(60*time.Second)))
	if !errors.Is(err, conn.ErrNoResponders) || len(got) != 0 {
		t.Fatalf("got %q, %v; want ErrNoResponders", got, err)
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Fatalf("no responders took %v of a 60s timeout", el)
	}
	inboxGone(t, s, nc, 0)
}

func TestRequestManyTimeoutWithoutReplies(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	rc := connect(t, s.URL())
	rc.SubscribeFunc("svc.mute", func(*conn.Msg) {})
	rc.Flush(ctxT(t))
	// The default total timeout is the connection's request timeout.
	nc := connect(t, s.URL(), conn.RequestTimeout(100*time.Millisecond))
	got, err := collect(nc.RequestMany(context.Background(), "svc.mute", nil, nil))
	if !errors.Is(err, conn.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || len(got) != 0 {
		t.Fatalf("got %q, %v; want ErrTimeout", got, err)
	}
	inboxGone(t, s, nc, 0)
}

func TestRequestManyCtxCancelMidStream(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	responders(t, s.URL(), "svc.cancel", 1)
	nc := connect(t, s.URL())
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	n := 0
	var last error
	for m, err := range nc.RequestMany(ctx, "svc.cancel", nil, nil, conn.ManyTimeout(20*time.Second)) {
		if err != nil {
			last = err
			continue // the iterator must stop by itself after an error
		}
		if n++; n == 1 {
			// Cancelled from another goroutine while the iterator waits
			// (or before it does: either way it must end the same).
			go cancel()
		}
		_ = m
	}
	if n != 1 || !errors.Is(last, context.Canceled) {
		t.Fatalf("%d replies, end %v; want 1 and context.Canceled", n, last)
	}
	inboxGone(t, s, nc, 0)
}

func TestRequestManyBreakUnsubscribes(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	responders(t, s.URL(), "svc.brk", 3)
	before := leakcheck.Snapshot()
	nc := connect(t, s.URL())
	// A subscription of the caller's own stays.
	if _, err := nc.Subscribe("other"); err != nil {
		t.Fatal(err)
	}
	nc.Flush(ctxT(t))
	for m, err := range nc.RequestMany(ctxT(t), "svc.brk", nil, nil) {
		if err != nil || m == nil {
			t.Fatal(err)
		}
		break
	}
	inboxGone(t, s, nc, 1)
	// The connection still works, and nothing of the call runs on.
	if got, err := collect(nc.RequestMany(ctxT(t), "svc.brk", nil, nil, conn.ManyMax(3))); err != nil || len(got) != 3 {
		t.Fatalf("after break: %q, %v", got, err)
	}
	nc.Close()
	leakcheck.Wait(t, before, 10*time.Second)
}

func TestRequestManyCloseEnds(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	responders(t, s.URL(), "svc.close", 1)
	before := leakcheck.Snapshot()
	nc := connect(t, s.URL())
	n := 0
	var last error
	for _, err := range nc.RequestMany(ctxT(t), "svc.close", nil, nil, conn.ManyTimeout(20*time.Second)) {
		if err != nil {
			last = err
			continue
		}
		if n++; n == 1 {
			go nc.Close()
		}
	}
	if n != 1 || !errors.Is(last, conn.ErrClosed) {
		t.Fatalf("%d replies, end %v; want 1 and ErrClosed", n, last)
	}
	if k := conn.NumSubs(nc); k != 0 {
		t.Fatalf("%d subscriptions left", k)
	}
	leakcheck.Wait(t, before, 10*time.Second)
}

func TestRequestManyDisconnectEnds(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	responders(t, s.URL(), "svc.drop", 1)
	nc := connect(t, s.URL(), conn.ReconnectBackoff(time.Millisecond, 10*time.Millisecond), conn.ReconnectJitter(time.Millisecond))
	n := 0
	var last error
	for _, err := range nc.RequestMany(ctxT(t), "svc.drop", nil, nil, conn.ManyTimeout(20*time.Second)) {
		if err != nil {
			last = err
			continue
		}
		if n++; n == 1 {
			nc.ForceReconnect()
		}
	}
	if n != 1 || !errors.Is(last, conn.ErrDisconnected) {
		t.Fatalf("%d replies, end %v; want 1 and ErrDisconnected", n, last)
	}
	if k := conn.NumSubs(nc); k != 0 {
		t.Fatalf("%d subscriptions left", k)
	}
	eventually(t, "reconnected", nc.IsConnected)
	eventually(t, "no inbox at the server", func() bool { return serverSubs(t, s, nc) == 0 })
}

func TestRequestManyInvalid(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	ctx := ctxT(t)
	var noCtx context.Context
	cases := []struct {
		name string
		seq  func(func(*conn.Msg, error) bool)
		want error
	}{
		{"bad subject", nc.RequestMany(ctx, "a..b", nil, nil), conn.ErrBadSubject},
		{"wildcard subject", nc.RequestMany(ctx, "a.*", nil, nil), conn.ErrBadSubject},
		{"max 0", nc.RequestMany(ctx, "a", nil, nil, conn.ManyMax(0)), conn.ErrInvalidOption},
		{"negative stall", nc.RequestMany(ctx, "a", nil, nil, conn.ManyStall(-1)), conn.ErrInvalidOption},
		{"zero timeout", nc.RequestMany(ctx, "a", nil, nil, conn.ManyTimeout(0)), conn.ErrInvalidOption},
		{"nil sentinel", nc.RequestMany(ctx, "a", nil, nil, conn.ManySentinel(nil)), conn.ErrInvalidOption},
		{"nil ctx", nc.RequestMany(noCtx, "a", nil, nil), conn.ErrNilContext},
	}
	for _, c := range cases {
		if got, err := collect(c.seq); !errors.Is(err, c.want) || len(got) != 0 {
			t.Errorf("%s: %q, %v; want %v", c.name, got, err, c.want)
		}
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := collect(nc.RequestMany(done, "a", nil, nil)); !errors.Is(err, context.Canceled) {
		t.Errorf("done ctx: %v", err)
	}
	seq := nc.RequestMany(ctx, "svc.nobody", nil, nil)
	collect(seq)
	if _, err := collect(seq); !errors.Is(err, conn.ErrIteratorUsed) {
		t.Errorf("second range: %v, want ErrIteratorUsed", err)
	}
	if n := conn.NumSubs(nc); n != 0 {
		t.Fatalf("%d subscriptions left", n)
	}
}
