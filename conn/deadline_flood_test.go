package conn_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
)

// work is a loop body's work on a message, slower than the flood delivers
// them: the subscription's queue never runs dry.
func work(m *conn.Msg) {
	sum := sha256.Sum256(m.Data)
	for range 20 {
		sum = sha256.Sum256(sum[:])
	}
	sink.Add(uint64(sum[0]))
}

var sink atomic.Uint64

// Every blocking call and loop of a connection ends by its context's
// deadline while messages keep arriving from another connection faster
// than the loop body handles them: a Messages loop, a loop of NextMsg
// calls, RequestMany with replies flooding in, and Request. Each ends with an error matching both
// conn.ErrTimeout and context.DeadlineExceeded, while the flood still
// runs (it stops on its own only after floodFor). The time from the
// deadline to the return is logged.
func TestDeadlineEndsLoopsUnderFlood(t *testing.T) {
	const (
		deadline = 200 * time.Millisecond
		floodFor = 10 * time.Second
	)
	s := natstest.NewServer(t, natstest.JetStream(false))
	for _, call := range []string{"messages", "nextmsg", "requestmany", "request"} {
		t.Run(call, func(t *testing.T) {
			nc := connect(t, s.URL())
			flooder := connect(t, s.URL())
			var flooding atomic.Bool
			flooding.Store(true)
			stop := make(chan struct{})
			floodDone := make(chan struct{})
			flood := func(subject string) {
				defer close(floodDone)
				defer flooding.Store(false)
				end := time.Now().Add(floodFor)
				data := make([]byte, 64)
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if i%256 == 0 && time.Now().After(end) {
						return
					}
					_ = flooder.Publish(subject, data)
				}
			}
			defer func() {
				close(stop)
				<-floodDone
			}()

			var err error
			var start, dl time.Time
			switch call {
			case "messages", "nextmsg":
				sub, serr := nc.Subscribe("flood")
				if serr != nil {
					t.Fatal(serr)
				}
				if err := nc.Flush(ctxT(t)); err != nil {
					t.Fatal(err)
				}
				go flood("flood")
				// Wait until messages flow, then start the loop.
				if _, err := sub.NextMsg(ctxT(t)); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				defer cancel()
				start = time.Now()
				dl, _ = ctx.Deadline()
				if call == "messages" {
					for m, e := range sub.Messages(ctx) {
						if e != nil {
							err = e
							continue
						}
						work(m)
					}
				} else {
					for {
						var m *conn.Msg
						if m, err = sub.NextMsg(ctx); err != nil {
							break
						}
						work(m)
					}
				}
			case "requestmany":
				rc := connect(t, s.URL())
				if _, err := rc.SubscribeFunc("svc", func(m *conn.Msg) { go flood(m.Reply) }); err != nil {
					t.Fatal(err)
				}
				if err := rc.Flush(ctxT(t)); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				defer cancel()
				start = time.Now()
				dl, _ = ctx.Deadline()
				n := 0
				for m, e := range nc.RequestMany(ctx, "svc", nil, nil) {
					if e != nil {
						err = e
						continue
					}
					work(m)
					n++
				}
				if err == nil && n > 0 {
					// Ended by its deadline after replies: RequestMany's
					// documented end is then no error.
					err = context.DeadlineExceeded
				}
			case "request":
				// A subscriber that never answers, and a flood to a
				// subscription of the requesting connection.
				rc := connect(t, s.URL())
				if _, err := rc.Subscribe("silent"); err != nil {
					t.Fatal(err)
				}
				if err := rc.Flush(ctxT(t)); err != nil {
					t.Fatal(err)
				}
				if _, err := nc.Subscribe("flood"); err != nil {
					t.Fatal(err)
				}
				if err := nc.Flush(ctxT(t)); err != nil {
					t.Fatal(err)
				}
				go flood("flood")
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				defer cancel()
				start = time.Now()
				dl, _ = ctx.Deadline()
				_, err = nc.Request(ctx, "silent", nil)
			}
			returned := time.Now()
			if !flooding.Load() {
				t.Fatalf("%s returned only after the flood stopped (%v after its start)", call, returned.Sub(start))
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("%s ended with %v, want context.DeadlineExceeded", call, err)
			}
			if call != "requestmany" && !errors.Is(err, conn.ErrTimeout) {
				t.Fatalf("%s ended with %v, want conn.ErrTimeout too", call, err)
			}
			t.Logf("%s: returned %v after its deadline (deadline %v)", call, returned.Sub(dl), deadline)
		})
	}
}
