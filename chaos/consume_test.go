package chaos

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
	"github.com/natsio/natsio/pull"
)

const consumerC1 = "C1"

// ---- C1: durable pull consumer, AckExplicit ----

type c1w struct {
	ph *phase
	js *jsapi.JS

	// Owned by the consume goroutine.
	floor uint64              // every stream sequence ≤ floor was delivered
	above map[uint64]struct{} // delivered sequences above floor

	mu           sync.Mutex
	deliveries   int
	unique       int
	redeliveries []time.Duration // when each redelivery arrived
	maxPerMsg    int
	deliveredAt  []time.Duration // every delivery, in order
	unknownIDs   []string
	ackErrs      int

	lastDelivery atomic.Int64 // unix nanos
	floorA       atomic.Uint64
	recreations  atomic.Int64
	spurious     atomic.Int64 // terminal "consumer deleted" while it existed
	terminals    counter
	pullErrs     counter
	done         chan struct{}

	// The handles' own counters (pull.Stats), summed over every handle
	// the loop used, each added once the loop is done with it.
	statsMu sync.Mutex
	stats   pull.Stats
	handles int
}

// addStats adds the final counters of a handle the loop is done with.
func (c *c1w) addStats(cons *pull.Consumer) {
	if cons == nil {
		return
	}
	st := cons.Stats()
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	c.handles++
	c.stats.Pulls += st.Pulls
	c.stats.Messages += st.Messages
	c.stats.Heartbeats += st.Heartbeats
	c.stats.MissedHeartbeats += st.MissedHeartbeats
	c.stats.NoMessages += st.NoMessages
	c.stats.Expired += st.Expired
	c.stats.Conflicts += st.Conflicts
	c.stats.OtherStatuses += st.OtherStatuses
	c.stats.Resets += st.Resets
}

// statsSum returns the summed counters and how many handles they cover.
func (c *c1w) statsSum() (pull.Stats, int) {
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	return c.stats, c.handles
}

func (c *c1w) config(startSeq uint64) jsapi.ConsumerConfig {
	cfg := jsapi.ConsumerConfig{
		Durable:       consumerC1,
		AckPolicy:     jsapi.AckExplicit,
		AckWait:       c.ph.cfg.ackWait,
		MaxAckPending: 2000,
		DeliverPolicy: jsapi.DeliverAll,
	}
	if startSeq > 1 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jsapi.DeliverByStartSequence, startSeq
	}
	return cfg
}

func (c *c1w) run(ctx context.Context, cons *pull.Consumer) {
	defer close(c.done)
	// The handle in use when the loop ends (cons is reassigned below).
	defer func() { c.addStats(cons) }()
	ph, cfg := c.ph, c.ph.cfg
	onErr := func(err error) {
		cl := classifyPull(err)
		c.pullErrs.add(cl, 1)
		ph.rec.event(ph.name, "C1", "pull error", cl)
	}
	for ctx.Err() == nil {
		var term error
		for m, err := range cons.Messages(ctx, pull.MaxMessages(cfg.c1Batch), pull.Expires(5*time.Second),
			pull.Heartbeat(cfg.c1HB), pull.OnError(onErr)) {
			if err != nil {
				term = err
				break
			}
			c.handle(m)
		}
		if ctx.Err() != nil {
			return
		}
		cl := classifyPull(term)
		c.terminals.add(cl, 1)
		ph.rec.event(ph.name, "C1", "consumer terminal", cl)
		switch {
		case errors.Is(term, pull.ErrConsumerDeleted), errors.Is(term, jsapi.ErrStreamNotFound):
			next := c.recreate(ctx)
			c.addStats(cons)
			if cons = next; cons == nil {
				return
			}
		case errors.Is(term, conn.ErrClosed):
			return
		default:
			sleepOr(200*time.Millisecond, ctx.Done())
		}
	}
}

// recreate makes the consumer exist again, starting after what was
// delivered (so that only the messages delivered but not yet known to be
// acknowledged come again).
func (c *c1w) recreate(ctx context.Context) *pull.Consumer {
	ph := c.ph
	for ctx.Err() == nil {
		actx, end := ph.wd.ctx(ctx, "C1 bind", 3*time.Second)
		var cons *pull.Consumer
		consInfo, err := c.js.Consumer(actx, streamMain, consumerC1)
		if err == nil {
			cons, err = pull.FromInfo(c.js, consInfo)
		}
		end()
		if err == nil {
			// The consume loop ended as if deleted, but the consumer exists.
			c.spurious.Add(1)
			ph.rec.event(ph.name, "C1", "spurious terminal", "consumer still exists")
			return cons
		}
		if errors.Is(err, jsapi.ErrConsumerNotFound) {
			actx, end := ph.wd.ctx(ctx, "C1 create", 3*time.Second)
			consInfo, err = c.js.CreateConsumer(actx, streamMain, c.config(c.floor+1))
			if err == nil {
				cons, err = pull.FromInfo(c.js, consInfo)
			}
			end()
			if err == nil {
				c.recreations.Add(1)
				ph.rec.event(ph.name, "C1", "consumer recreated", "")
				return cons
			}
		}
		sleepOr(250*time.Millisecond, ctx.Done())
	}
	return nil
}

func (c *c1w) handle(m *jsapi.Msg) {
	ph := c.ph
	at := ph.rec.now()
	c.lastDelivery.Store(time.Now().UnixNano())
	md, err := m.Metadata()
	if err == nil {
		c.advance(md.StreamSeq)
	}
	id := m.Header.Get(jsapi.HeaderMsgID)
	var count uint16
	ok := false
	if src, n, valid := parseID(id); valid {
		if trk := ph.track(src); trk != nil {
			ok = trk.with(n, func(r *pubRec) {
				r.c1++
				count = r.c1
				if r.c1 == 1 {
					r.c1First = at
				}
				r.c1Last = at
			})
		}
	}
	c.mu.Lock()
	c.deliveries++
	c.deliveredAt = append(c.deliveredAt, at)
	switch {
	case !ok:
		if len(c.unknownIDs) < 100 {
			c.unknownIDs = append(c.unknownIDs, id)
		}
	case count == 1:
		c.unique++
	default:
		c.redeliveries = append(c.redeliveries, at)
		c.maxPerMsg = max(c.maxPerMsg, int(count))
	}
	c.mu.Unlock()
	if err := m.Ack(); err != nil {
		c.mu.Lock()
		c.ackErrs++
		c.mu.Unlock()
	}
}

func (c *c1w) advance(seq uint64) {
	if seq <= c.floor {
		return
	}
	if c.above == nil {
		c.above = map[uint64]struct{}{}
	}
	c.above[seq] = struct{}{}
	for {
		if _, ok := c.above[c.floor+1]; !ok {
			c.floorA.Store(c.floor)
			return
		}
		delete(c.above, c.floor+1)
		c.floor++
	}
}

// classifyPull names the pull consumer conditions.
func classifyPull(err error) string {
	switch {
	case err == nil:
		return "none"
	case errors.Is(err, pull.ErrNoHeartbeat):
		return "missed heartbeats"
	case errors.Is(err, pull.ErrLeadershipChange):
		return "leadership change"
	case errors.Is(err, pull.ErrConsumerDeleted):
		return "consumer deleted"
	case errors.Is(err, pull.ErrRequestExpired):
		return "408 expired"
	case errors.Is(err, pull.ErrMaxWaiting):
		return "409 max waiting"
	case errors.Is(err, pull.ErrBadPull):
		return "bad pull"
	case errors.Is(err, jsapi.ErrStreamNotFound):
		return "stream not found"
	}
	var se *jsapi.StatusError
	if errors.As(err, &se) {
		return "status " + itoa(se.Code) + " " + se.Description
	}
	return classify(err)
}

// resetNoReason classifies ordered resets after missed heartbeats, which
// arrive without pull.ErrNoHeartbeat.
const resetNoReason = "missed heartbeats (reason not reported)"

// ---- C2: ordered consumer over the whole stream ----

type c2w struct {
	ph   *phase
	js   *jsapi.JS
	oc   *ordered.Consumer
	opts []ordered.Opt // of its reads

	mu         sync.Mutex
	last       uint64
	count      int
	gaps       int
	dups       int
	anoms      []string
	unknownIDs int
	terminals  []string
	resets     counter

	lastDelivery atomic.Int64
	lastSeq      atomic.Uint64
	done         chan struct{}
}

func (c *c2w) run(ctx context.Context) {
	defer close(c.done)
	ph := c.ph
	for ctx.Err() == nil {
		for m, err := range c.oc.Messages(ctx, c.opts...) {
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				// Ordered consumer errors are terminal; only a deleted
				// stream or a closed connection should end it.
				cl := classify(err)
				c.mu.Lock()
				c.terminals = append(c.terminals, cl)
				c.mu.Unlock()
				ph.rec.event(ph.name, "C2", "ordered terminal", cl)
				if errors.Is(err, conn.ErrClosed) {
					return
				}
				sleepOr(200*time.Millisecond, ctx.Done())
				break
			}
			c.handle(m)
		}
	}
}

func (c *c2w) onReset(reason error) {
	r := "other"
	switch {
	case reason == nil:
		r = "none"
	case strings.Contains(reason.Error(), "gap"):
		r = "sequence gap"
	case errors.Is(reason, pull.ErrNoHeartbeat):
		r = "missed heartbeats"
	case errors.Is(reason, pull.ErrConsumerDeleted):
		r = "consumer gone"
	case errors.Is(reason, jsapi.ErrStreamNotFound):
		r = "stream not found"
	case errors.Is(reason, pull.ErrNoHeartbeat):
		r = "missed heartbeats"
	case strings.Contains(reason.Error(), "recreate consumer"):
		// A recreation whose reason did not come through
		// (TestOrderedResetReasonHeartbeat guards against it).
		r = resetNoReason
	default:
		r = classify(reason)
	}
	c.resets.add(r, 1)
	c.ph.rec.event(c.ph.name, "C2", "ordered reset", r)
}

func (c *c2w) handle(m *jsapi.Msg) {
	c.lastDelivery.Store(time.Now().UnixNano())
	md, err := m.Metadata()
	id := m.Header.Get(jsapi.HeaderMsgID)
	known := false
	if src, n, ok := parseID(id); ok {
		if trk := c.ph.track(src); trk != nil {
			known = trk.with(n, func(*pubRec) {})
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !known {
		c.unknownIDs++
	}
	if err != nil {
		c.anoms = append(c.anoms, "metadata: "+err.Error())
		return
	}
	seq := md.StreamSeq
	switch {
	case seq == c.last+1:
	case seq <= c.last:
		c.dups++
		if len(c.anoms) < 20 {
			c.anoms = append(c.anoms, "duplicate: stream seq "+u64(seq)+" after "+u64(c.last))
		}
	default:
		c.gaps++
		if len(c.anoms) < 20 {
			c.anoms = append(c.anoms, "gap: stream seq "+u64(seq)+" after "+u64(c.last))
		}
	}
	if seq > c.last {
		c.last = seq
		c.lastSeq.Store(seq)
	}
	c.count++
}
