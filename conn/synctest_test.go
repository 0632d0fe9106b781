package conn_test

// Tier 1 timer tests (RELIABILITY.md d.5): each runs in a testing/synctest
// bubble against the scripted server (internal/fakeserver) on an in-memory
// listener (internal/memnet), so the fake clock advances only when every goroutine is durably blocked
// and the timings asserted here are exact, not "within some slack".

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/memnet"
	"github.com/natsio/natsio/proto"
)

// timedEvent is an event with the fake time it was delivered at, relative to
// the start of the test.
type timedEvent struct {
	conn.Event
	at time.Duration
}

// timedEvents records events with their fake time.
type timedEvents struct {
	start time.Time
	mu    sync.Mutex
	evs   []timedEvent
	ch    chan timedEvent
}

func newTimedEvents(start time.Time) *timedEvents {
	return &timedEvents{start: start, ch: make(chan timedEvent, 1024)}
}

func (r *timedEvents) opt() conn.Option {
	return conn.OnEvent(func(ev conn.Event) {
		e := timedEvent{ev, time.Since(r.start)}
		r.mu.Lock()
		r.evs = append(r.evs, e)
		r.mu.Unlock()
		r.ch <- e
	})
}

func (r *timedEvents) all() []timedEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]timedEvent(nil), r.evs...)
}

// wait returns the next event of kind k (skipping others).
func (r *timedEvents) wait(k conn.EventKind) timedEvent {
	for e := range r.ch {
		if e.Kind == k {
			return e
		}
	}
	panic("unreachable")
}

// goroutinesStartedByConn lists the goroutines started by package conn that are
// still running.
func goroutinesStartedByConn() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		// Only goroutines of a synctest bubble, the caller's: one an
		// earlier test's connection left exiting is not the caller's.
		header, _, _ := strings.Cut(g, "\n")
		if strings.Contains(header, "synctest bubble") && strings.Contains(g, "created by github.com/natsio/natsio/conn.") {
			out = append(out, g)
		}
	}
	return out
}

// ---- a. Stale connection ----

// The pinger ticks every interval I from the moment the connection is up.
// At each tick it declares the connection stale when maxOut PINGs are
// unanswered, else sends a PING; any PONG resets the count. So with a
// server that answers its first k PINGs at once and then goes silent
// (connection open), the PINGs go out at exactly I, 2I, …, (k+N)·I and the
// connection is declared stale at exactly (k+N+1)·I: I×(N+1) after the
// last answered PING. Publishing meanwhile changes nothing: outbound
// traffic is not a sign of life (nats.rs#1593).
func TestSynctestStaleConnectionAtExactBound(t *testing.T) {
	cases := []struct {
		name        string
		interval    time.Duration
		maxOut      int
		answered    int
		publish     bool
		noReconnect bool
	}{
		{name: "silent", interval: time.Second, maxOut: 2},
		{name: "silent-after-5-pongs", interval: 2 * time.Second, maxOut: 3, answered: 5},
		{name: "publishing", interval: time.Second, maxOut: 2, answered: 3, publish: true},
		{name: "publishing-maxout-1", interval: 700 * time.Millisecond, maxOut: 1, publish: true},
		{name: "no-reconnect", interval: 500 * time.Millisecond, maxOut: 1, answered: 2, noReconnect: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				ev := newTimedEvents(start)
				var mu sync.Mutex
				var pings []time.Duration
				pubs := 0
				srv := startFake(t, inMemory(), withSession(func(c *fakeserver.Client) {
					if handshake(c, nil) != nil {
						return
					}
					serveOps(c, func() bool {
						mu.Lock()
						defer mu.Unlock()
						pings = append(pings, time.Since(start))
						return len(pings) <= tc.answered
					}, func(op *proto.Op) {
						if op.Kind == proto.KindPub {
							mu.Lock()
							pubs++
							mu.Unlock()
						}
					})
				}))
				opts := []conn.Option{conn.PingInterval(tc.interval), conn.MaxPingsOutstanding(tc.maxOut), ev.opt()}
				if tc.noReconnect {
					opts = append(opts, conn.NoReconnect())
				}
				defer srv.stop()
				nc := srv.connect(t, opts...)
				defer nc.Close()
				if d := time.Since(start); d != 0 {
					t.Fatalf("handshake took %v of fake time", d)
				}
				// Reconnect attempts are refused; the accepted connection stays.
				_ = srv.mem.Close()

				pubDone := make(chan struct{})
				stopPub := make(chan struct{})
				go func() {
					defer close(pubDone)
					if !tc.publish {
						return
					}
					for {
						select {
						case <-stopPub:
							return
						default:
						}
						if err := nc.Publish("load", []byte("payload")); err != nil {
							return
						}
						time.Sleep(tc.interval / 7)
					}
				}()

				want := time.Duration(tc.answered+tc.maxOut+1) * tc.interval
				d := ev.wait(conn.EventDisconnected)
				if !errors.Is(d.Err, conn.ErrStaleConnection) {
					t.Fatalf("disconnected with %v, want ErrStaleConnection", d.Err)
				}
				if d.at != want {
					t.Fatalf("stale declared at %v, want exactly %v = (%d answered + %d max out + 1) × %v",
						d.at, want, tc.answered, tc.maxOut, tc.interval)
				}
				if tc.noReconnect {
					c := ev.wait(conn.EventClosed)
					if !errors.Is(c.Err, conn.ErrStaleConnection) || c.at != want {
						t.Fatalf("closed at %v with %v, want at %v with ErrStaleConnection", c.at, c.Err, want)
					}
				}
				close(stopPub)
				<-pubDone
				nc.Close()
				srv.stop()

				mu.Lock()
				defer mu.Unlock()
				if len(pings) != tc.answered+tc.maxOut {
					t.Fatalf("server saw %d keepalive PINGs, want %d: %v", len(pings), tc.answered+tc.maxOut, pings)
				}
				for i, at := range pings {
					if w := time.Duration(i+1) * tc.interval; at != w {
						t.Fatalf("PING %d at %v, want exactly %v (all: %v)", i+1, at, w, pings)
					}
				}
				if tc.publish && pubs < int(want/(tc.interval/7))-1 {
					t.Fatalf("only %d publishes reached the server", pubs)
				}
			})
		})
	}
}

// ---- b. Reconnect backoff ----

// backoffWithoutJitter is the deterministic part of the delay before the f-th
// consecutive attempt to a server (conn's options.backoff): base doubled
// f-1 times, capped at max. A random jitter in [0, jitter) is added.
func backoffWithoutJitter(base, maxW time.Duration, f int) time.Duration {
	d := base
	for i := 1; i < f && d < maxW; i++ {
		d *= 2
	}
	return min(d, maxW)
}

// refusingDialRecorder dials l, recording the fake time of every attempt, and
// refuses every attempt after the first.
type refusingDialRecorder struct {
	l     *memnet.Listener
	start time.Time
	mu    sync.Mutex
	at    []time.Duration
	ch    chan struct{}
}

func (d *refusingDialRecorder) dial(ctx context.Context, network, addr string) (_ net.Conn, err error) {
	d.mu.Lock()
	d.at = append(d.at, time.Since(d.start))
	first := len(d.at) == 1
	d.mu.Unlock()
	defer func() { d.ch <- struct{}{} }()
	if !first {
		return nil, fmt.Errorf("dial %s: %w", addr, syscall.ECONNREFUSED)
	}
	return d.l.Dial(ctx, network, addr)
}

func (d *refusingDialRecorder) times() []time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]time.Duration(nil), d.at...)
}

// After the connection is lost the lost server is retried after
// backoff(1); each failed attempt f (f = 1, 2, …, counted since the last
// successful connection) schedules the next one backoff(f) later, where
// backoff(f) = min(base·2^(f-1), max) + rand[0, jitter). So the gaps are
// backoff(1), backoff(1), backoff(2), backoff(3), …: the loss itself is
// not counted as a failure, and the delay first doubles after the
// second failed attempt. Checked over 20 attempts, well into the cap.
func TestSynctestReconnectBackoffBounds(t *testing.T) {
	const attempts = 20
	lossAt := 3 * time.Second

	// run connects, has the server drop the connection at lossAt, waits
	// for `attempts` reconnect attempts (all refused) and returns the
	// fake times of the loss and of the attempts.
	run := func(t *testing.T, opts ...conn.Option) (loss time.Duration, tries []time.Duration) {
		start := time.Now()
		ev := newTimedEvents(start)
		srv := startFake(t, inMemory(), withSession(func(c *fakeserver.Client) {
			if handshake(c, nil) != nil {
				return
			}
			time.Sleep(lossAt)
			c.Close()
		}))
		defer srv.stop()
		rec := &refusingDialRecorder{l: srv.mem, start: start, ch: make(chan struct{}, attempts+2)}
		nc, err := srv.tryConnect(t, context.Background(),
			append([]conn.Option{conn.Dialer(rec.dial), ev.opt(), conn.PingInterval(time.Hour), conn.MaxPingsOutstanding(2)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		for range attempts + 1 { // the first connection, then the attempts
			<-rec.ch
		}
		nc.Close()
		srv.stop()
		d := ev.wait(conn.EventDisconnected)
		if d.at != lossAt {
			t.Fatalf("disconnect reported at %v, want exactly %v", d.at, lossAt)
		}
		all := rec.times()
		if all[0] != 0 {
			t.Fatalf("first dial at %v", all[0])
		}
		return d.at, all[1:]
	}

	t.Run("exponential-with-jitter", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			base, maxW, jitter := time.Second, 20*time.Second, 250*time.Millisecond
			loss, tries := run(t, conn.ReconnectBackoff(base, maxW), conn.ReconnectJitter(jitter))
			prev := loss
			var extras []time.Duration
			for i, at := range tries {
				failures := i + 1 // attempt i+1 follows the loss (i == 0) or i failed attempts
				det := backoffWithoutJitter(base, maxW, failures)
				gap := at - prev
				if gap < det || gap >= det+jitter {
					t.Fatalf("attempt %d came %v after the previous event, want in [%v, %v) (failures %d)\nall: %v",
						i+1, gap, det, det+jitter, failures, tries)
				}
				extras = append(extras, gap-det)
				prev = at
			}
			distinct := map[time.Duration]bool{}
			for _, e := range extras {
				distinct[e] = true
			}
			if len(distinct) < 2 {
				t.Fatalf("jitter never varied: %v", extras)
			}
			t.Logf("attempts (fake time): %v", tries)
		})
	})

	t.Run("no-jitter-exact", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			base, maxW := 500*time.Millisecond, 10*time.Second
			loss, tries := run(t, conn.ReconnectBackoff(base, maxW), conn.ReconnectJitter(0))
			prev := loss
			for i, at := range tries {
				if want := backoffWithoutJitter(base, maxW, i+1); at-prev != want {
					t.Fatalf("attempt %d after %v, want exactly %v\nall: %v", i+1, at-prev, want, tries)
				}
				prev = at
			}
		})
	})

	t.Run("custom-delay", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			var args []int
			f := func(n int) time.Duration {
				mu.Lock()
				args = append(args, n)
				mu.Unlock()
				return time.Duration(n) * 700 * time.Millisecond
			}
			loss, tries := run(t, conn.ReconnectDelay(f))
			prev := loss
			for i, at := range tries {
				if want := time.Duration(i+1) * 700 * time.Millisecond; at-prev != want {
					t.Fatalf("attempt %d after %v, want exactly %v\nall: %v", i+1, at-prev, want, tries)
				}
				prev = at
			}
			mu.Lock()
			defer mu.Unlock()
			// Called with the number of the attempt it delays: 1 at the
			// loss, then 2, 3, … after each failure.
			for i, n := range args[:attempts] {
				if n != i+1 {
					t.Fatalf("ReconnectDelay called with %v, want 1, 2, 3, …", args)
				}
			}
		})
	})

	// MaxReconnects(n): the server is dropped after n failed attempts; the
	// connection then closes with ErrNoServers at the instant of the last
	// failure.
	t.Run("max-reconnects", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			const n = 3
			start := time.Now()
			ev := newTimedEvents(start)
			srv := startFake(t, inMemory(), withSession(func(c *fakeserver.Client) {
				if handshake(c, nil) == nil {
					time.Sleep(lossAt)
				}
			}))
			defer srv.stop()
			rec := &refusingDialRecorder{l: srv.mem, start: start, ch: make(chan struct{}, 16)}
			nc, err := srv.tryConnect(t, context.Background(), conn.Dialer(rec.dial), ev.opt(),
				conn.MaxReconnects(n), conn.ReconnectDelay(func(int) time.Duration { return time.Second }))
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			c := ev.wait(conn.EventClosed)
			tries := rec.times()[1:]
			if len(tries) != n {
				t.Fatalf("%d reconnect attempts, want %d: %v", len(tries), n, tries)
			}
			if want := lossAt + n*time.Second; c.at != want || tries[n-1] != want {
				t.Fatalf("closed at %v after last attempt at %v, want both at %v", c.at, tries[n-1], want)
			}
			if !errors.Is(c.Err, conn.ErrNoServers) {
				t.Fatalf("closed with %v", c.Err)
			}
			nc.Close()
			srv.stop()
		})
	})
}

// ---- c. Request timeout ----

// Request and Flush against a server that never answers fail with
// ErrTimeout (also matching context.DeadlineExceeded) at exactly their
// deadline: RequestTimeout for a ctx without deadline, the ctx's deadline
// otherwise (longer or shorter).
func TestSynctestRequestTimeoutExact(t *testing.T) {
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

// ---- d. Drain timeout ----

// Drain with a handler wedged on a message returns at exactly the drain
// timeout (DrainTimeout for a ctx without deadline, else ctx's deadline)
// with a timeout error — there is no ErrDrainTimeout sentinel: the error
// matches conn.ErrTimeout and context.DeadlineExceeded — and the
// connection is closed by then.
func TestSynctestDrainTimeout(t *testing.T) {
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

// ---- e. Nothing fires after Close ----

// After Close no goroutine of the connection is left, and ten minutes of
// fake time later nothing has happened: no byte or dial reached the
// server, no event followed EventClosed.
func TestSynctestNoTimerAfterClose(t *testing.T) {
	t.Run("connected", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			ev := newTimedEvents(start)
			type srvEnd struct {
				ops   int // operations the client sent
				pings []time.Duration
			}
			srvDone := make(chan srvEnd, 4)
			srv := startFake(t, inMemory(), withSession(func(c *fakeserver.Client) {
				if handshake(c, nil) != nil {
					return
				}
				var pings []time.Duration
				serveOps(c, nil, func(op *proto.Op) {
					if op.Kind == proto.KindPing {
						pings = append(pings, time.Since(start))
					}
				})
				srvDone <- srvEnd{len(c.Ops()), pings}
			}))
			defer srv.stop()
			var dials atomic.Int32 // every attempt, successful or not
			dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				return srv.mem.Dial(ctx, network, addr)
			}
			nc, err := srv.tryConnect(t, context.Background(), conn.Dialer(dial), ev.opt(),
				conn.PingInterval(time.Second), conn.MaxPingsOutstanding(2), conn.RequestTimeout(time.Minute),
				conn.ReconnectBackoff(time.Second, 5*time.Second), conn.ReconnectJitter(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			sub, err := nc.Subscribe("s")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := nc.SubscribeFunc("h", func(*conn.Msg) {}); err != nil {
				t.Fatal(err)
			}
			reqErr := make(chan error, 1)
			go func() {
				_, err := nc.Request(context.Background(), "nobody", nil)
				reqErr <- err
			}()
			nextErr := make(chan error, 1)
			go func() {
				_, err := sub.NextMsg(context.Background())
				nextErr <- err
			}()
			time.Sleep(2500 * time.Millisecond) // two keepalives answered
			nc.Close()
			if err := <-reqErr; !errors.Is(err, conn.ErrClosed) {
				t.Fatalf("pending Request: %v", err)
			}
			if err := <-nextErr; !errors.Is(err, conn.ErrClosed) {
				t.Fatalf("pending NextMsg: %v", err)
			}
			end := <-srvDone // the server end has seen EOF
			if len(end.pings) != 2 || end.pings[0] != time.Second || end.pings[1] != 2*time.Second {
				t.Fatalf("keepalive PINGs at %v, want [1s 2s]", end.pings)
			}
			synctest.Wait()
			if g := goroutinesStartedByConn(); len(g) != 0 {
				t.Fatalf("%d conn goroutines left after Close:\n%s", len(g), strings.Join(g, "\n\n"))
			}
			// The listener stays open: a late dial would be accepted.
			nDials, nev := dials.Load(), len(ev.all())
			time.Sleep(10 * time.Minute)
			synctest.Wait()
			if dials.Load() != nDials || srv.mem.Dials() != 1 || len(ev.all()) != nev {
				t.Fatalf("after Close: dial attempts %d→%d, accepted %d, events %d→%d",
					nDials, dials.Load(), srv.mem.Dials(), nev, len(ev.all()))
			}
			select {
			case e := <-srvDone:
				t.Fatalf("a connection after Close carried %d operations", e.ops)
			default:
			}
			evs := ev.all()
			if last := evs[len(evs)-1]; last.Kind != conn.EventClosed || last.at != 2500*time.Millisecond {
				t.Fatalf("last event %v at %v, want closed at 2.5s: %v", last.Kind, last.at, evs)
			}
		})
	})

	// Closed in the middle of a reconnect backoff: the pending attempt
	// never happens.
	t.Run("reconnecting", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			ev := newTimedEvents(start)
			srv := startFake(t, inMemory(), withSession(func(c *fakeserver.Client) {
				if handshake(c, nil) == nil {
					time.Sleep(time.Second)
				}
			}))
			defer srv.stop()
			rec := &refusingDialRecorder{l: srv.mem, start: start, ch: make(chan struct{}, 64)}
			nc, err := srv.tryConnect(t, context.Background(), conn.Dialer(rec.dial), ev.opt(),
				conn.ReconnectBackoff(2*time.Second, 8*time.Second), conn.ReconnectJitter(0), conn.PingInterval(time.Second), conn.MaxPingsOutstanding(1))
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			// Lost at 1 s; attempts at 3 s (after 2 s) and 7 s (after 4 s):
			// closed at 6 s, in between.
			time.Sleep(6 * time.Second)
			if got := rec.times(); len(got) != 2 || got[1] != 3*time.Second {
				t.Fatalf("dials at %v, want [0s 3s]", got)
			}
			nc.Close()
			srv.stop()
			synctest.Wait()
			if g := goroutinesStartedByConn(); len(g) != 0 {
				t.Fatalf("%d conn goroutines left after Close:\n%s", len(g), strings.Join(g, "\n\n"))
			}
			nev := len(ev.all())
			time.Sleep(10 * time.Minute)
			synctest.Wait()
			if got := rec.times(); len(got) != 2 {
				t.Fatalf("dials after Close: %v", got)
			}
			evs := ev.all()
			if len(evs) != nev || evs[len(evs)-1].Kind != conn.EventClosed || evs[len(evs)-1].at != 6*time.Second {
				t.Fatalf("events after Close: %v", evs)
			}
		})
	})
}

// ---- f. Connect timeout ----

// ConnectTimeout bounds a whole attempt — dial, INFO, CONNECT, first PONG
// — and Connect fails at exactly that instant (ErrTimeout within
// ErrNoServers); a ctx deadline bounds the whole call, and each server of
// the list gets its own ConnectTimeout.
func TestSynctestConnectTimeoutCoversHandshake(t *testing.T) {
	const timeout = 3 * time.Second
	silent := func(c *fakeserver.Client) { serveOps(c, nil, nil) } // reads, never writes
	noPong := func(c *fakeserver.Client) {
		if err := c.SendInfo(nil); err != nil {
			return
		}
		serveOps(c, func() bool { return false }, nil)
	}
	cases := []struct {
		name    string
		handler func(*fakeserver.Client)
		dial    bool // the dial itself hangs
		url     string
		ctx     time.Duration
		want    time.Duration
	}{
		{name: "no-info", handler: silent, want: timeout},
		{name: "no-pong", handler: noPong, want: timeout},
		{name: "dial-hangs", dial: true, want: timeout},
		{name: "ctx-shorter", handler: silent, ctx: time.Second, want: time.Second},
		{name: "two-servers", handler: noPong, url: "nats://a:1,nats://b:2", want: 2 * timeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := tc.handler
				if h == nil {
					h = silent
				}
				srv := startFake(t, inMemory(), withSession(h))
				defer srv.stop()
				dial := srv.mem.Dial
				if tc.dial {
					dial = func(ctx context.Context, _, _ string) (net.Conn, error) {
						<-ctx.Done()
						return nil, ctx.Err()
					}
				}
				url := fakeURL
				if tc.url != "" {
					url = tc.url
				}
				ctx := context.Background()
				if tc.ctx > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.ctx)
					defer cancel()
				}
				start := time.Now()
				nc, err := conn.Connect(ctx, url, conn.Dialer(dial), conn.ConnectTimeout(timeout), conn.DontRandomize())
				el := time.Since(start)
				if err == nil {
					nc.Close()
					t.Fatal("Connect succeeded")
				}
				if el != tc.want {
					t.Fatalf("Connect failed after %v, want exactly %v: %v", el, tc.want, err)
				}
				if !errors.Is(err, conn.ErrNoServers) {
					t.Fatalf("Connect: %v, want ErrNoServers", err)
				}
				if !errors.Is(err, conn.ErrTimeout) {
					t.Fatalf("Connect: %v, want ErrTimeout", err)
				}
				srv.stop() // the handlers saw the client close its end
				synctest.Wait()
				if g := goroutinesStartedByConn(); len(g) != 0 {
					t.Fatalf("%d conn goroutines left:\n%s", len(g), strings.Join(g, "\n\n"))
				}
			})
		})
	}
}

// ---- Delivery after a loop of requests ----

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
func TestSynctestMessageAfterRequestLoop(t *testing.T) {
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
