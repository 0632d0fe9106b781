package pull

import (
	"context"

	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

// Fetch subscriptions.
//
// A Fetch reads its pull's messages from a subscription of its own. Making
// one for every Fetch costs a SUB, an UNSUB, a reply subject the server has
// never routed to, and the allocations of a subscription: in a loop of
// one-message Fetches (BenchmarkFetch1, the shape of a worker calling Next)
// keeping it makes a call cost 10 allocations instead of 18, 739 bytes
// instead of 2110, and 139 µs instead of 173 (medians of 6 alternating
// runs). For Fetch(500) the cost is spread over 500 messages and no
// difference stands out of the noise. So a
// Fetch whose pull is over —
// the server can send nothing more to its subject — leaves its subscription
// to the next Fetch of the same Consumer. A pull is over after a 404 or 408
// status, or once it got its whole batch when it set no MaxBytes (with
// MaxBytes the server may still add a "409 Batch Completed"). Any other
// end (ctx done, an error, a heartbeat missed, messages left unread)
// unsubscribes, as a late message must never reach another Fetch.
//
// One subscription is kept per Consumer (concurrent Fetches make their
// own), and it is unsubscribed after fetchSubIdle without a Fetch, so a
// Consumer handle that is dropped leaves nothing behind for long.
//
// Every Fetch writes
// its pull itself (conn.WriteNow). The acknowledgements of the messages it
// returns wait for the next write (jsapi.SubscribeBatches with lazyAcks): in a loop they
// travel with the next Fetch's pull, ahead of it in the same write, so the
// server has them before it serves that pull, whatever MaxAckPending is;
// outside a loop they go within conn.LazyDelay.

// fetchSubIdle is how long a kept fetch subscription waits for the next
// Fetch before it is unsubscribed.
var fetchSubIdle = 5 * time.Second

// takeFetchSub returns the kept fetch subscription, or a new one sized for
// a batch of n.
func (c *Consumer) takeFetchSub(n int) (*jsapi.Batches, error) {
	c.mu.Lock()
	sub := c.idleSub
	c.idleSub = nil
	c.mu.Unlock()
	if sub == nil || !sub.Subscription().IsValid() {
		var err error
		sub, err = jsapi.SubscribeBatches(c.nc, c.nc.NewInbox(), n+1, true, false)
		if err != nil {
			return nil, err
		}
	}
	return sub, nil
}

// putFetchSub ends a Fetch's use of sub: kept for the next Fetch when over
// is true (its pull can send nothing more) and nothing is left queued,
// withdrawn otherwise: while ctx lasts, the pull that may still be live at
// the server is ended there before the Fetch returns (withdraw), so it
// takes no later message.
func (c *Consumer) putFetchSub(ctx context.Context, b *jsapi.Batches, over bool) {
	sub := b.Subscription()
	if over {
		if queued, _ := sub.Pending(); queued == 0 && sub.IsValid() {
			c.mu.Lock()
			if c.idleSub == nil {
				c.idleSub = b
				if c.idleTimer == nil {
					c.idleTimer = time.AfterFunc(fetchSubIdle, c.expireFetchSub)
				} else {
					c.idleTimer.Reset(fetchSubIdle)
				}
				c.mu.Unlock()
				return
			}
			c.mu.Unlock()
		}
	}
	if ctx.Err() != nil {
		_ = sub.Unsubscribe() // ended by ctx: no round trip
		return
	}
	withdraw(ctx, c.js, sub)
}

// withdraw ends sub and the pulls that reply to it: UNSUB, then a round
// trip to the server, so that the server has removed the interest when it
// returns. nats-server checks a waiting pull's reply subject for interest
// before it delivers a message to it and drops the pull when there is
// none, so no message published after withdraw returns is taken by those
// pulls (one server, or a cluster once the unsubscription has reached the
// consumer leader's server; with a gateway or leaf node the server keeps
// such a pull for a short while). A connection that is down needs no
// round trip: the server dropped the interest with the link. It waits at
// most the API timeout, and no longer than ctx.
func withdraw(ctx context.Context, js *jsapi.JS, sub *conn.Subscription) {
	_ = sub.Unsubscribe()
	nc := js.Conn()
	if !nc.IsConnected() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, js.Timeout())
	defer cancel()
	_ = nc.Flush(ctx)
}

// expireFetchSub unsubscribes the kept fetch subscription (the idle timer).
func (c *Consumer) expireFetchSub() {
	c.mu.Lock()
	sub := c.idleSub
	c.idleSub = nil
	c.mu.Unlock()
	if sub != nil {
		_ = sub.Subscription().Unsubscribe()
	}
}
