package conn_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
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
