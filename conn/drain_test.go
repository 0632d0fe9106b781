package conn_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/proto"
)

// Drain with a handler wedged on a message returns at exactly the drain
// timeout (DrainTimeout for a ctx without deadline, else ctx's deadline)
// with a timeout error — there is no ErrDrainTimeout sentinel: the error
// matches conn.ErrTimeout and context.DeadlineExceeded — and the
// connection is closed by then.
func TestDrainTimeout(t *testing.T) {
	cases := []struct {
		name     string
		wedged   bool
		ctxLimit time.Duration // 0: no deadline
		want     time.Duration
	}{
		{name: "drain-timeout", wedged: true, want: 4 * time.Second},
		{name: "ctx-deadline", wedged: true, ctxLimit: 1500 * time.Millisecond, want: 1500 * time.Millisecond},
		{name: "not-wedged", want: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := startFake(t, inMemory(), withSession(func(c *fakeserver.Client) {
					if handshake(c, nil) != nil {
						return
					}
					serveOps(c, nil, func(op *proto.Op) {
						if op.Kind == proto.KindSub && string(op.Subject) == "work" {
							_ = c.SendMsg("work", op.SID, "", []byte("job"))
						}
					})
				}))
				defer srv.stop()
				nc := srv.connect(t, conn.DrainTimeout(4*time.Second), conn.PingInterval(time.Hour), conn.MaxPingsOutstanding(2))
				defer nc.Close()
				got := make(chan struct{}, 1)
				release := make(chan struct{})
				var releaseOnce sync.Once
				unwedge := func() { releaseOnce.Do(func() { close(release) }) }
				defer unwedge()
				handlerDone := make(chan struct{})
				var once sync.Once
				_, err := nc.SubscribeFunc("work", func(*conn.Msg) {
					got <- struct{}{}
					if tc.wedged {
						<-release
					}
					once.Do(func() { close(handlerDone) })
				})
				if err != nil {
					t.Fatal(err)
				}
				<-got
				ctx := context.Background()
				if tc.ctxLimit > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.ctxLimit)
					defer cancel()
				}
				start := time.Now()
				err = nc.Drain(ctx)
				if el := time.Since(start); el != tc.want {
					t.Fatalf("Drain returned after %v, want exactly %v (err %v)", el, tc.want, err)
				}
				if tc.wedged {
					if !errors.Is(err, conn.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
						t.Fatalf("Drain: %v, want ErrTimeout and context.DeadlineExceeded", err)
					}
				} else if err != nil {
					t.Fatalf("Drain: %v", err)
				}
				if !nc.IsClosed() {
					t.Fatal("connection not closed after Drain")
				}
				unwedge()
				<-handlerDone
				srv.stop()
			})
		})
	}
}

func TestDrainWhileDisconnected(t *testing.T) {
	s := coreServer(t)
	ev := &testutil.Events{}
	nc := connect(t, s.URL(), conn.ReconnectBackoff(time.Hour, time.Hour), conn.ReconnectJitter(0), ev.Opt())
	sub, _ := nc.Subscribe("f24")
	nc.SubscribeFunc("f24.h", func(*conn.Msg) {})
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	iterDone := make(chan error, 1)
	go func() {
		for _, err := range sub.Messages(context.Background()) {
			if err != nil {
				iterDone <- err
				return
			}
		}
		iterDone <- nil
	}()
	s.Shutdown()
	eventually(t, "disconnect", func() bool { return !nc.IsConnected() })

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	err := nc.Drain(ctx)
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Drain took %v with a 2s context", d)
	}
	t.Logf("Drain while disconnected returned %v", err)
	if !nc.IsClosed() {
		t.Fatal("not closed after Drain")
	}
	select {
	case <-nc.Closed():
	default:
		t.Fatal("Closed() channel open after Drain")
	}
	if n := ev.Count(conn.EventClosed); n != 1 {
		t.Fatalf("%d Closed events, want 1", n)
	}
	nc.Close()
	if err := nc.Drain(ctxT(t)); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("Drain after close: %v", err)
	}
	if n := ev.Count(conn.EventClosed); n != 1 {
		t.Fatalf("%d Closed events after Close and Drain again, want 1", n)
	}
	if err := recvErr(t, iterDone, 5*time.Second, "iterator"); err != nil && !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("iterator ended with %v", err)
	}
}

// TestCloseDuringDrain: Close racing a Drain; both return and the Closed
// event fires exactly once.
func TestCloseDuringDrain(t *testing.T) {
	s := coreServer(t)
	ev := &testutil.Events{}
	nc := connect(t, s.URL(), ev.Opt())
	pub := connect(t, s.URL())
	for i := range 5 {
		nc.SubscribeFunc(fmt.Sprintf("f24.c%d", i), func(*conn.Msg) {})
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		pub.Publish(fmt.Sprintf("f24.c%d", i%5), []byte("x"))
	}
	drained := make(chan error, 1)
	closed := make(chan error, 1)
	go func() { drained <- nc.Drain(ctxT(t)) }()
	go func() { closed <- nc.Close() }()
	recvErr(t, closed, 10*time.Second, "Close during Drain")
	err := recvErr(t, drained, 10*time.Second, "Drain during Close")
	t.Logf("Drain returned %v", err)
	if !nc.IsClosed() {
		t.Fatal("not closed")
	}
	if n := ev.Count(conn.EventClosed); n != 1 {
		t.Fatalf("%d Closed events, want 1", n)
	}
}

// TestDrainWhileDisconnectedReportsUnsent: publishes buffered while
// disconnected cannot be flushed by a Drain that does not wait for the
// reconnect; Drain must not report that as a clean success.
func TestDrainWhileDisconnectedReportsUnsent(t *testing.T) {
	s := coreServer(t)
	nc := connect(t, s.URL(), conn.ReconnectBackoff(time.Hour, time.Hour), conn.ReconnectJitter(0))
	s.Shutdown()
	eventually(t, "disconnect", func() bool { return !nc.IsConnected() })
	if err := nc.Publish("f24", []byte("buffered")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := nc.Drain(ctx); err == nil {
		t.Fatal("Drain returned nil after discarding a buffered publish")
	}
}

// TestDrainWedgedHandler: a handler that never returns; Drain with a
// short context must end by its deadline with a timeout error.
func TestDrainWedgedHandler(t *testing.T) {
	s := coreServer(t)
	nc := connect(t, s.URL())
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // runs before nc.Close
	entered := make(chan struct{}, 1)
	if _, err := nc.SubscribeFunc("f24.w", func(*conn.Msg) {
		entered <- struct{}{}
		<-release
	}); err != nil {
		t.Fatal(err)
	}
	nc.Flush(ctxT(t))
	nc.Publish("f24.w", nil)
	select {
	case <-entered:
	case <-ctxT(t).Done():
		t.Fatal("handler never started")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- nc.Drain(ctx) }()
	err := recvErr(t, done, 5*time.Second, "Drain with a 200ms context and a wedged handler")
	if err == nil || !(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, conn.ErrTimeout)) {
		t.Fatalf("Drain returned %v, want a timeout error", err)
	}
}
