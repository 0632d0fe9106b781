package conn_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/memnet"
	"github.com/natsio/natsio/internal/testutil"
)

// outageDialer dials l except while the server is down, [down, up) in
// fake time since start, when it refuses like a closed port. It records
// every attempt.
type outageDialer struct {
	l        *memnet.Listener
	start    time.Time
	down, up time.Duration
	mu       sync.Mutex
	at       []time.Duration
}

func (d *outageDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	now := time.Since(d.start)
	d.mu.Lock()
	d.at = append(d.at, now)
	d.mu.Unlock()
	if now >= d.down && now < d.up {
		return nil, fmt.Errorf("dial %s: %w", addr, syscall.ECONNREFUSED)
	}
	return d.l.Dial(ctx, network, addr)
}

func (d *outageDialer) times() []time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]time.Duration(nil), d.at...)
}

// runOutage runs clients (default options) against a server that drops
// every connection at lossAt and is down for outage. It returns, per
// client, the fake time of its reconnection and its dial attempts.
func runOutage(t *testing.T, clients int, outage time.Duration) (back time.Duration, reconnected []time.Duration, dials [][]time.Duration) {
	const lossAt = time.Second
	start := time.Now()
	back = lossAt + outage
	srv := startFake(t, inMemory(), withSession(func(c *fakeserver.Client) {
		if handshake(c, nil) != nil {
			return
		}
		if time.Since(start) < lossAt {
			time.Sleep(lossAt - time.Since(start))
			return // the server goes down: the connection closes
		}
		serveOps(c, nil, nil)
	}))
	defer srv.stop()
	var ncs []*conn.Conn
	var evs []*timedEvents
	var dialers []*outageDialer
	for range clients {
		ev := newTimedEvents(start)
		d := &outageDialer{l: srv.mem, start: start, down: lossAt, up: back}
		nc, err := srv.tryConnect(t, context.Background(), conn.Dialer(d.dial), ev.opt(), conn.PingInterval(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		ncs, evs, dialers = append(ncs, nc), append(evs, ev), append(dialers, d)
	}
	for i, ev := range evs {
		r := ev.wait(conn.EventReconnected)
		reconnected = append(reconnected, r.at)
		dials = append(dials, dialers[i].times())
	}
	for _, nc := range ncs {
		nc.Close()
	}
	srv.stop()
	return back, reconnected, dials
}

// With the default options a client is connected again at most
// ReconnectWait + jitter (2.5 s) after its server is back, however long the
// outage lasted: a server that cannot be reached is retried at a steady
// pace, not with a wait that grew during the outage.
func TestReconnectSoonAfterOutage(t *testing.T) {
	const bound = 2500 * time.Millisecond // DefaultReconnectWait + DefaultReconnectJitter
	for _, outage := range []time.Duration{5 * time.Second, 20 * time.Second, 45 * time.Second} {
		t.Run(outage.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				back, rec, dials := runOutage(t, 1, outage)
				late := rec[0] - back
				if late < 0 || late > bound {
					t.Fatalf("outage of %v: reconnected %v after the server was back, want at most %v\ndials: %v",
						outage, late, bound, dials[0])
				}
				// Attempts while the server was down came no faster than
				// ReconnectWait apart.
				at := dials[0]
				for i := 2; i < len(at); i++ {
					if gap := at[i] - at[i-1]; gap < conn.DefaultReconnectWait {
						t.Fatalf("attempts %v apart: %v", gap, at)
					}
				}
				t.Logf("outage %v: back after %v, %d attempts", outage, late, len(at)-1)
			})
		})
	}
}

// Many clients losing one server do not all come back at the same instant:
// the jitter spreads them.
func TestReconnectStormSpreads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const clients = 20
		back, rec, _ := runOutage(t, clients, 20*time.Second)
		lo, hi := rec[0], rec[0]
		distinct := map[time.Duration]bool{}
		for _, at := range rec {
			lo, hi = min(lo, at), max(hi, at)
			distinct[at] = true
			if at-back > 2500*time.Millisecond {
				t.Fatalf("a client came back %v after the server", at-back)
			}
		}
		if len(distinct) < clients/2 || hi-lo < conn.DefaultReconnectJitter/5 {
			t.Fatalf("%d clients came back at %d distinct instants spread over %v: %v", clients, len(distinct), hi-lo, rec)
		}
	})
}

// A server that turns the client away (here: -ERR 'maximum connections
// exceeded' after CONNECT) is not hammered: each refusal doubles the wait,
// from ReconnectWait to DefaultMaxReconnectWait, plus the jitter.
func TestRefusingServerBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const lossAt = time.Second
		const attempts = 8
		start := time.Now()
		var mu sync.Mutex
		var tries []time.Duration
		got := make(chan struct{}, attempts+4)
		srv := startFake(t, inMemory(), withSession(func(c *fakeserver.Client) {
			if time.Since(start) == 0 {
				if handshake(c, nil) == nil {
					time.Sleep(lossAt)
				}
				return
			}
			mu.Lock()
			tries = append(tries, time.Since(start))
			mu.Unlock()
			_ = c.SendInfo(nil)
			if _, err := c.ExpectConnect(c.Context()); err == nil {
				_ = c.SendErr("maximum connections exceeded")
			}
			got <- struct{}{}
		}))
		defer srv.stop()
		ev := newTimedEvents(start)
		nc := srv.connect(t, ev.opt(), conn.PingInterval(time.Hour))
		defer nc.Close()
		for range attempts {
			<-got
		}
		nc.Close()
		srv.stop()
		mu.Lock()
		defer mu.Unlock()
		// The first attempt follows the loss by ReconnectWait; after the
		// k-th refusal the wait is ReconnectWait·2^(k-1), capped.
		prev := lossAt
		for i, at := range tries[:attempts] {
			det := conn.DefaultReconnectWait
			for k := 1; k < i; k++ {
				det = min(2*det, conn.DefaultMaxReconnectWait)
			}
			if gap := at - prev; gap < det || gap >= det+conn.DefaultReconnectJitter {
				t.Fatalf("attempt %d came %v after the previous one, want in [%v, %v)\nall: %v",
					i+1, gap, det, det+conn.DefaultReconnectJitter, tries)
			}
			prev = at
		}
		if last := tries[attempts-1] - tries[attempts-2]; last < conn.DefaultMaxReconnectWait {
			t.Fatalf("the wait reached only %v: %v", last, tries)
		}
	})
}

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
func TestReconnectBackoffBounds(t *testing.T) {
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

func TestReconnectDelayAttemptNumbers(t *testing.T) {
	s := coreServer(t)
	var mu sync.Mutex
	var attempts []int
	delay := conn.ReconnectDelay(func(a int) time.Duration {
		mu.Lock()
		attempts = append(attempts, a)
		mu.Unlock()
		return 5 * time.Millisecond
	})
	ev := &testutil.Events{}
	nc := connect(t, s.URL(), delay, ev.Opt())
	snapshot := func() []int {
		mu.Lock()
		defer mu.Unlock()
		return append([]int(nil), attempts...)
	}
	s.Shutdown()
	eventually(t, "reconnect attempts", func() bool { return len(snapshot()) >= 6 })
	got := snapshot()
	t.Logf("delay consulted with %v", got)
	if got[0] != 1 {
		t.Fatalf("first attempt number %d, want 1", got[0])
	}
	for i := 1; i < len(got); i++ {
		if got[i] != got[i-1] && got[i] != got[i-1]+1 {
			t.Fatalf("attempt numbers %v do not increase by one", got)
		}
	}
	if got[len(got)-1] < 4 {
		t.Fatalf("attempt numbers %v do not increase", got)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	// A success resets the count.
	mu.Lock()
	attempts = nil
	mu.Unlock()
	nc.ForceReconnect()
	eventually(t, "second reconnect", func() bool { return ev.Count(conn.EventReconnected) == 2 })
	if got := snapshot(); len(got) == 0 || got[0] != 1 {
		t.Fatalf("after a successful reconnect the delay was consulted with %v, want a fresh 1", got)
	}
}

func TestDelayBetweenAttemptsToSameServer(t *testing.T) {
	s := coreServer(t)
	const wait = 30 * time.Millisecond
	const downURL = "nats://down.invalid:4222"
	type dialRec struct {
		addr   string
		at     time.Time
		delays int
	}
	var mu sync.Mutex
	var dials []dialRec
	delays := 0
	var down atomic.Bool
	dialer := conn.Dialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dials = append(dials, dialRec{addr, time.Now(), delays})
		mu.Unlock()
		if down.Load() || addr == "down.invalid:4222" {
			return nil, errors.New("connection refused (test)")
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	})
	delay := conn.ReconnectDelay(func(int) time.Duration {
		mu.Lock()
		delays++
		mu.Unlock()
		return wait
	})
	ev := &testutil.Events{}
	nc := connect(t, s.URL()+","+downURL, conn.DontRandomize(), dialer, delay, ev.Opt())
	mu.Lock()
	dials = nil
	mu.Unlock()
	down.Store(true)
	nc.ForceReconnect()
	perAddr := func() map[string][]dialRec {
		mu.Lock()
		defer mu.Unlock()
		m := map[string][]dialRec{}
		for _, d := range dials {
			m[d.addr] = append(m[d.addr], d)
		}
		return m
	}
	eventually(t, "attempts to both servers", func() bool {
		m := perAddr()
		return len(m) == 2 && len(m[testutil.HostPort(s.URL())]) >= 4 && len(m["down.invalid:4222"]) >= 4
	})
	for addr, ds := range perAddr() {
		for i := 1; i < len(ds); i++ {
			if ds[i].delays == ds[i-1].delays {
				t.Fatalf("%s dialed twice without consulting the delay function", addr)
			}
			if gap := ds[i].at.Sub(ds[i-1].at); gap < wait {
				t.Fatalf("%s dialed again after %v, delay is %v", addr, gap, wait)
			}
		}
	}
	down.Store(false)
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}
