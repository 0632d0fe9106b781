package chaos

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/natsio/natsio/conn"
)

const subjEcho = "chaos.echo"

// ---- R1: echo service plus requesters, 50 in flight ----

type r1w struct {
	ph  *phase
	req *conn.Conn
	svc *conn.Conn

	total, ok, timeout, noResp, disc, closed, other atomic.Int64
	served                                          atomic.Int64
	over                                            series       // returns after the deadline, net of lag
	maxOver                                         atomic.Int64 // net of lag
	maxRaw                                          atomic.Int64
	lat                                             series // successful round trips
	otherErrs                                       counter
	worstMu                                         sync.Mutex
	worst                                           []latSample // the largest overruns, with when they ended
	wg                                              sync.WaitGroup
}

func (r *r1w) serve() (*conn.Subscription, error) {
	return r.svc.SubscribeFunc(subjEcho, func(m *conn.Msg) {
		r.served.Add(1)
		_ = m.Respond(m.Data)
	})
}

func (r *r1w) start(stop <-chan struct{}) {
	cfg := r.ph.cfg
	payload := make([]byte, 32)
	for i := range cfg.requesters {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			rng := rand.New(rand.NewPCG(cfg.seed, uint64(i)))
			for !closed(stop) {
				r.one(payload)
				// Jittered pause so that the 50 requesters do not move in
				// lock step.
				d := cfg.reqEvery/2 + time.Duration(rng.Int64N(int64(cfg.reqEvery)))
				if !sleepOr(d, stop) {
					return
				}
			}
		}()
	}
}

func (r *r1w) one(payload []byte) {
	ph := r.ph
	ctx, cancel := context.WithTimeout(context.Background(), ph.cfg.reqTimeout)
	defer cancel()
	dl, _ := ctx.Deadline()
	end := ph.wd.begin("R1 Request", dl)
	start, lag0 := time.Now(), ph.wd.lag.total()
	_, err := r.req.Request(ctx, subjEcho, payload)
	now := time.Now()
	end()
	r.total.Add(1)
	raw := now.Sub(dl)
	if int64(raw) > r.maxRaw.Load() {
		r.maxRaw.Store(int64(raw))
	}
	if over := raw - (ph.wd.lag.total() - lag0); over > 0 {
		r.over.add(over)
		if int64(over) > r.maxOver.Load() {
			r.maxOver.Store(int64(over))
		}
		if over > 20*time.Millisecond {
			r.worstMu.Lock()
			if len(r.worst) < 200 {
				r.worst = append(r.worst, latSample{at: ph.rec.now(), d: over})
			}
			r.worstMu.Unlock()
		}
	}
	switch {
	case err == nil:
		r.ok.Add(1)
		r.lat.add(now.Sub(start))
	case errors.Is(err, conn.ErrNoResponders):
		r.noResp.Add(1)
	case errors.Is(err, conn.ErrDisconnected):
		r.disc.Add(1)
	case errors.Is(err, conn.ErrClosed):
		r.closed.Add(1)
	case errors.Is(err, conn.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		r.timeout.Add(1)
	default:
		r.other.Add(1)
		r.otherErrs.add(classify(err), 1)
	}
	if err != nil {
		ph.rec.eventLimited(ph.name, "R1", "request error", classify(err))
	}
}
