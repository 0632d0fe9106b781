package clients

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/natsio/natsio/conn"
)

// AfterLooper: the latency of a subscription message that arrives shortly
// after a loop of requests on the same connection ends. Each operation runs
// AfterLoopRequests requests (responder on another connection), waits a gap
// of 0.5–3 ms (AfterLoopGap), then another connection publishes one message
// to a subscription of the requesting connection; the operation's latency
// is from that publish to the message's arrival: read with NextMsg
// (Mode Next), or by a callback subscription made before the loop, before
// its first message (Mode Callback).
type AfterLooper interface {
	NewAfterLoop(ctx context.Context, cfg Config) (LatencyRunner, error)
}

// AfterLoopRequests is the length of each operation's loop of requests.
const AfterLoopRequests = 200

// AfterLoopGap is the pause between the end of operation i's loop and the
// publish: spread over 0.5–3 ms, the same sequence for every client.
func AfterLoopGap(i int) time.Duration {
	return 500*time.Microsecond + time.Duration(i*7919%2500)*time.Microsecond
}

// natsioAfterLoop is natsio's requester and responder (NewRequest) and a
// third connection that publishes the late message.
// afterLoopOps are one client's calls for runAfterLoop.
type afterLoopOps struct {
	flush, request, publish func() error
	// subscribe makes an operation's callback subscription (Callback
	// mode), which sends each arrival's time to got; it returns its
	// unsubscribe.
	subscribe func(got chan<- time.Time) (unsubscribe func() error, err error)
	// next waits for the late message (Next mode).
	next func() error
}

// runAfterLoop runs len(lat) operations: a callback subscription made
// before the loop (Callback mode), AfterLoopRequests requests, the gap,
// the late publish, and the wait for its arrival, whose latency goes in
// lat.
func runAfterLoop(lat []time.Duration, mode Mode, ops afterLoopOps) error {
	if len(lat) == 0 {
		return errShortLatency
	}
	got := make(chan time.Time, 1)
	for i := range lat {
		var unsubscribe func() error
		if mode != Next {
			// A handler that has had no message yet.
			var err error
			if unsubscribe, err = ops.subscribe(got); err != nil {
				return err
			}
		}
		if err := ops.flush(); err != nil {
			return err
		}
		for j := range AfterLoopRequests {
			if err := ops.request(); err != nil {
				return fmt.Errorf("op %d, request %d: %w", i, j, err)
			}
		}
		time.Sleep(AfterLoopGap(i))
		t0 := time.Now()
		if err := ops.publish(); err != nil {
			return err
		}
		if mode == Next {
			if err := ops.next(); err != nil {
				return fmt.Errorf("op %d: %w", i, err)
			}
			lat[i] = time.Since(t0)
			continue
		}
		select {
		case t := <-got:
			lat[i] = t.Sub(t0)
		case <-time.After(5 * time.Second):
			return fmt.Errorf("op %d: no message", i)
		}
		if err := unsubscribe(); err != nil {
			return err
		}
	}
	return nil
}

type natsioAfterLoop struct {
	*natsioReq
	mode Mode
	pub  *conn.Conn
}

func (Natsio) NewAfterLoop(ctx context.Context, cfg Config) (LatencyRunner, error) {
	lr, err := Natsio{}.NewRequest(ctx, cfg)
	if err != nil {
		return nil, err
	}
	r := &natsioAfterLoop{natsioReq: lr.(*natsioReq), mode: cfg.Mode}
	if r.pub, err = natsioConnect(ctx, cfg.URL, "bench-late-publisher"); err != nil {
		r.natsioReq.Close()
		return nil, err
	}
	return r, nil
}

func (r *natsioAfterLoop) Run(lat []time.Duration) error {
	ctx := context.Background()
	late := r.subject + ".late"
	var sub *conn.Subscription
	ops := afterLoopOps{
		flush:   func() error { return natsioFlush(r.req) },
		request: func() error { _, err := r.req.Request(ctx, r.subject, r.data); return err },
		publish: func() error { return r.pub.Publish(late, r.data) },
		subscribe: func(got chan<- time.Time) (func() error, error) {
			s, err := r.req.SubscribeFunc(late, func(*conn.Msg) { got <- time.Now() })
			if err != nil {
				return nil, err
			}
			return s.Unsubscribe, nil
		},
		next: func() error {
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			_, err := sub.NextMsg(wctx)
			return err
		},
	}
	if r.mode == Next {
		var err error
		if sub, err = r.req.Subscribe(late); err != nil {
			return err
		}
		defer func() { _ = sub.Unsubscribe() }()
	}
	return runAfterLoop(lat, r.mode, ops)
}

func (r *natsioAfterLoop) Close() error {
	return errors.Join(r.pub.Close(), r.natsioReq.Close())
}

// natsgoAfterLoop is nats.go's requester and responder (NewRequest) and a
// third connection that publishes the late message.
type natsgoAfterLoop struct {
	*natsgoReq
	mode Mode
	pub  *nats.Conn
}

func (NatsGo) NewAfterLoop(ctx context.Context, cfg Config) (LatencyRunner, error) {
	lr, err := NatsGo{}.NewRequest(ctx, cfg)
	if err != nil {
		return nil, err
	}
	r := &natsgoAfterLoop{natsgoReq: lr.(*natsgoReq), mode: cfg.Mode}
	if r.pub, err = natsgoConnect(cfg.URL, "bench-late-publisher"); err != nil {
		r.natsgoReq.Close()
		return nil, err
	}
	return r, nil
}

func (r *natsgoAfterLoop) Run(lat []time.Duration) error {
	late := r.subject + ".late"
	var sub *nats.Subscription
	ops := afterLoopOps{
		flush:   func() error { return r.req.FlushTimeout(flushTimeout) },
		request: func() error { _, err := r.req.Request(r.subject, r.data, 5*time.Second); return err },
		publish: func() error { return r.pub.Publish(late, r.data) },
		subscribe: func(got chan<- time.Time) (func() error, error) {
			s, err := r.req.Subscribe(late, func(*nats.Msg) { got <- time.Now() })
			if err != nil {
				return nil, err
			}
			return s.Unsubscribe, nil
		},
		next: func() error { _, err := sub.NextMsg(5 * time.Second); return err },
	}
	if r.mode == Next {
		var err error
		if sub, err = r.req.SubscribeSync(late); err != nil {
			return err
		}
		defer func() { _ = sub.Unsubscribe() }()
	}
	return runAfterLoop(lat, r.mode, ops)
}

func (r *natsgoAfterLoop) Close() error {
	r.pub.Close()
	return r.natsgoReq.Close()
}
