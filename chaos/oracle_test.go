package chaos

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/pull"
)

// check is one oracle property (RELIABILITY.md §d.4) judged on one phase or
// on the whole run.
type check struct {
	N      int      `json:"n"`
	Name   string   `json:"name"`
	Phase  string   `json:"phase"`
	Pass   bool     `json:"pass"`
	Detail string   `json:"detail"`
	Anoms  []string `json:"anomalies,omitempty"`
}

func (c *check) fail(format string, args ...any) {
	c.Pass = false
	if len(c.Anoms) < 50 {
		c.Anoms = append(c.Anoms, fmt.Sprintf(format, args...))
	}
}

func newCheck(n int, name, phase string) *check {
	return &check{N: n, Name: name, Phase: phase, Pass: true}
}

// window is an interval of recorder time.
type window struct{ from, to time.Duration }

func (w window) has(t time.Duration) bool { return t >= w.from && t <= w.to }

// judge runs the per-phase checks 1-8 and returns them with the IDs worth a
// timeline.
func (ph *phase) judge() ([]*check, []string) {
	cfg, fs := ph.cfg, ph.final
	var badIDs []string
	addBad := func(id string) {
		if len(badIDs) < 10 && !slices.Contains(badIDs, id) {
			badIDs = append(badIDs, id)
		}
	}

	// Fill in what the final stream holds.
	phantoms := 0
	var phantomIDs []string
	for seq, id := range fs.ids {
		src, n, ok := parseID(id)
		trk := ph.track(src)
		if !ok || trk == nil || !trk.with(n, func(r *pubRec) {
			r.stored++
			r.storedSeq = seq
		}) {
			phantoms++
			if len(phantomIDs) < 10 {
				phantomIDs = append(phantomIDs, fmt.Sprintf("seq %d id %q", seq, id))
			}
		}
	}

	// 1. No loss.
	c1 := newCheck(1, "no loss of acked messages", ph.name)
	// 2. No duplicates.
	c2 := newCheck(2, "no duplicates in the stream", ph.name)
	// 3. At-least-once, redeliveries near faults.
	c3 := newCheck(3, "at-least-once, redeliveries near faults", ph.name)
	var acked, stored, storedNotAcked, unknown, dups, missing, c1Missing int
	for _, trk := range []*pubTrack{ph.p1.trk, ph.p2.trk} {
		trk.mu.Lock()
		for i := range trk.recs {
			r := &trk.recs[i]
			id := trk.id(i + 1)
			if r.state == pubPending {
				r.state = pubAbandoned // never finished: unknown outcome
			}
			if r.state == pubAbandoned && r.unsure {
				unknown++
			}
			if r.stored > 0 {
				stored++
			}
			if r.stored > 1 {
				dups++
				c2.fail("%s stored %d times", id, r.stored)
				addBad(id)
			}
			if r.state != pubAcked {
				if r.stored > 0 {
					storedNotAcked++
					if !r.unsure {
						c2.fail("%s stored although every attempt failed before it could be sent (last: %s)", id, r.lastErr)
						addBad(id)
					}
				}
				continue
			}
			acked++
			if r.stored == 0 {
				missing++
				c1.fail("%s acked (seq %d at %s) but not in the stream", id, r.seq, fmtDur(r.ackAt))
				addBad(id)
			} else if r.stored == 1 && r.storedSeq != r.seq {
				c1.fail("%s acked with seq %d but stored at seq %d", id, r.seq, r.storedSeq)
				addBad(id)
			}
			if r.c1 == 0 {
				c1Missing++
				c3.fail("%s acked but never delivered to C1", id)
				addBad(id)
			}
		}
		trk.mu.Unlock()
	}
	if fs.readErr != nil {
		c1.fail("final replay ended with %v", fs.readErr)
	}
	for _, a := range fs.seqAnoms {
		c1.fail("final read: %s", a)
	}
	for _, a := range fs.spotBad {
		c1.fail("direct get spot check: %s", a)
	}
	if phantoms > 0 {
		c2.fail("%d messages in the stream with an ID never published, e.g. %v", phantoms, phantomIDs)
	}
	if storedNotAcked > unknown {
		c2.fail("stored−acked = %d exceeds the unknown-outcome count %d", storedNotAcked, unknown)
	}
	c1.Detail = fmt.Sprintf("acked %d, missing %d; stream holds %d messages (read back by ordered replay, %d Direct Get spot checks)",
		acked, missing, len(fs.ids), fs.spotN)
	c2.Detail = fmt.Sprintf("duplicates %d; stored−acked %d ≤ unknown outcome %d; phantoms %d", dups, storedNotAcked, unknown, phantoms)

	// Redeliveries: each must fall in the at-least-once window of a fault
	// or of a status event of C1's connection.
	var wins []window
	after := cfg.ackWait + time.Second + cfg.redelivSlack
	for _, f := range ph.rec.phaseFaults(ph.name) {
		wins = append(wins, window{f.Start - time.Second, f.End + after})
	}
	for _, e := range ph.rec.snapshotEvents(ph.name) {
		if e.Source == "c1" || e.Source == "C1" {
			wins = append(wins, window{e.At - time.Second, e.At + after})
		}
	}
	ph.c1.mu.Lock()
	redeliv := slices.Clone(ph.c1.redeliveries)
	deliveries, unknownC1 := ph.c1.deliveries, slices.Clone(ph.c1.unknownIDs)
	ph.c1.mu.Unlock()
	outside := 0
	var outsideAt []string
	for _, at := range redeliv {
		in := false
		for _, w := range wins {
			if w.has(at) {
				in = true
				break
			}
		}
		if !in {
			outside++
			if len(outsideAt) < 10 {
				outsideAt = append(outsideAt, fmtDur(at))
			}
		}
	}
	limit := max(10, deliveries/200)
	if outside > limit {
		c3.fail("%d redeliveries outside any fault window (allowed %d), at %v", outside, limit, outsideAt)
	}
	if len(unknownC1) > 0 {
		c3.fail("C1 received unknown IDs: %v", unknownC1)
	}
	if n := ph.c1.spurious.Load(); n > 0 {
		c3.fail("C1's consume loop ended %d times with 'consumer deleted' while the consumer existed", n)
	}
	// A terminal error of C1 is expected only from the consumer deletion.
	delWins := []window{}
	for _, f := range ph.rec.phaseFaults(ph.name) {
		if f.Kind == fDelConsumer {
			delWins = append(delWins, window{f.Start, f.End + time.Second})
		}
	}
	c1evs := []event{}
	for _, e := range ph.rec.snapshotEvents(ph.name) {
		if e.Source == "C1" {
			c1evs = append(c1evs, e)
		}
	}
	for i, e := range c1evs {
		if e.Kind != "consumer terminal" {
			continue
		}
		ok := false
		for _, w := range delWins {
			ok = ok || w.has(e.At)
		}
		if ok {
			continue
		}
		// Not caused by the deletion fault. What the recreation found
		// decides: the consumer still existed (a client bug, counted as
		// spurious above), or the server really had no such consumer.
		next := ""
		for _, n := range c1evs[i+1:] {
			if n.Kind == "consumer recreated" || n.Kind == "spurious terminal" {
				next = n.Kind
				break
			}
		}
		switch next {
		case "consumer recreated":
			ph.known = append(ph.known, fmt.Sprintf("nats-server had lost durable consumer C1 at %s (it was recreated under the same name right after "+
				"its deletion and did not survive the next restart; TestKnownServerBugRecreatedConsumerLost): C1's loop ended with %q, "+
				"correctly, and C1 recreated the consumer after what it had received", fmtDur(e.At), e.Detail))
		case "spurious terminal":
		default:
			c3.fail("C1 consume loop ended at %s with %s, not caused by a deletion, and was not recreated; events around it:\n%s",
				fmtDur(e.At), e.Detail, ph.rec.around(ph.name, e.At, 3*time.Second))
		}
	}
	rate := 0.0
	if deliveries > 0 {
		rate = 100 * float64(len(redeliv)) / float64(deliveries)
	}
	c3.Detail = fmt.Sprintf("C1 missed %d acked IDs; %d redeliveries (%.3f%% of %d deliveries), %d outside fault windows (limit %d)",
		c1Missing, len(redeliv), rate, deliveries, outside, limit)

	// 4. Ordered.
	c4 := newCheck(4, "ordered consumer: no gap, no duplicate", ph.name)
	ph.c2.mu.Lock()
	c2c := struct {
		count, gaps, dups, unknownIDs int
		last                          uint64
	}{ph.c2.count, ph.c2.gaps, ph.c2.dups, ph.c2.unknownIDs, ph.c2.last}
	anoms := slices.Clone(ph.c2.anoms)
	terms := slices.Clone(ph.c2.terminals)
	ph.c2.mu.Unlock()
	for _, a := range anoms {
		c4.fail("C2 %s", a)
	}
	if uint64(c2c.count) != fs.info.State.Msgs || c2c.last != fs.info.State.LastSeq {
		c4.fail("C2 yielded %d messages up to seq %d; the stream holds %d up to %d", c2c.count, c2c.last, fs.info.State.Msgs, fs.info.State.LastSeq)
	}
	if c2c.unknownIDs > 0 {
		c4.fail("C2 yielded %d messages with unknown IDs", c2c.unknownIDs)
	}
	for _, tm := range terms {
		c4.fail("C2 ended with a terminal error: %s", tm)
	}
	resets := ph.c2.resets.snapshot()
	if n := resets[resetNoReason]; n > 0 {
		c4.fail("C2 was recreated %d times and ordered.OnReset was not told why (TestOrderedResetReasonHeartbeat)", n)
	}
	c4.Detail = fmt.Sprintf("C2 yielded %d (stream %d), gaps %d, duplicates %d, resets %v", c2c.count, fs.info.State.Msgs, c2c.gaps, c2c.dups, resets)

	// 5. Batches.
	c5 := newCheck(5, "atomic batches all-or-nothing, fast batches keep what was acknowledged", ph.name)
	b := ph.b1
	b.mu.Lock()
	attempts := make(map[string]uint8, len(b.attempts))
	for k, v := range b.attempts {
		attempts[k] = v
	}
	b.mu.Unlock()
	partial, complete := 0, 0
	for id, idx := range fs.batches {
		st, known := attempts[id]
		slices.Sort(idx)
		whole := len(idx) == cfg.batchSize
		for i, v := range idx {
			whole = whole && v == i
		}
		switch {
		case !known:
			c5.fail("batch %q in the stream was never published", id)
		case !whole:
			partial++
			c5.fail("batch %q stored partially: indexes %v", id, idx)
		default:
			complete++
		}
		if known && st == batchNotCommited {
			c5.fail("batch %q stored although it failed before its commit was sent", id)
		}
	}
	for id, st := range attempts {
		if st == batchCommitted && len(fs.batches[id]) == 0 {
			c5.fail("batch %q committed but not in the stream", id)
		}
	}
	if n := b.badAcks.Load(); n > 0 {
		c5.fail("%d commit acks named another batch or size", n)
	}
	// A replay that ends before the stream does would pass for lost
	// batches: compare what it read with what the stream says it holds
	// (nothing is published after the snapshot).
	replayed := 0
	for _, idx := range fs.batches {
		replayed += len(idx)
	}
	held := "stream info unavailable"
	if fs.batchInfo != nil {
		st := fs.batchInfo.State
		held = fmt.Sprintf("stream holds %d (last sequence %d)", st.Msgs, st.LastSeq)
		if uint64(replayed) != st.Msgs {
			c5.fail("batch replay read %d messages, the %s", replayed, held)
		}
	}
	c5.Detail = fmt.Sprintf("atomic attempts %d: committed %d, commit outcome unknown %d, failed before commit %d; stored complete %d, partial %d; replayed %d messages, %s",
		len(attempts), b.committed.Load(), b.ambiguous.Load(), b.failed.Load(), complete, partial, replayed, held)
	c5.Detail += "; " + checkFast(c5, ph.f1, fs)

	// 6. KV.
	c6 := newCheck(6, "KV: no lost update, ordered and live watch", ph.name)
	k := ph.k1
	k.mu.Lock()
	keys := slices.Clone(k.keys)
	epoch := k.epoch
	k.mu.Unlock()
	lost := 0
	for i, st := range keys {
		key := keyName(i)
		e := fs.kvFinal[key]
		want := kvValue(epoch, key, st.counter)
		switch {
		case st.rev == 0 && e == nil:
		case e == nil:
			lost++
			c6.fail("K1 %s: last acked %q (rev %d) but the key is gone", key, want, st.rev)
		case string(e.Value) == want && e.Revision == st.rev:
		case st.pending != "" && string(e.Value) == st.pending:
		default:
			lost++
			c6.fail("K1 %s: final %q rev %d, last acked %q rev %d (pending %q)", key, e.Value, e.Revision, want, st.rev, st.pending)
		}
		if e != nil {
			k.watchMu.Lock()
			ws := k.watchLast[key]
			k.watchMu.Unlock()
			if ws.rev != e.Revision || ws.val != string(e.Value) {
				c6.fail("K1 watch: last seen for %s rev %d %q, final rev %d %q", key, ws.rev, ws.val, e.Revision, e.Value)
			}
		}
	}
	ph.kvLost = lost
	for _, a := range fs.kvErrs {
		c6.fail("final read: %s", a)
	}
	k.anomsMu.Lock()
	for _, a := range k.anoms {
		c6.fail("%s", a)
	}
	k.anomsMu.Unlock()
	for _, a := range k.probeFails {
		c6.fail("watch probe %s", a)
	}
	probes := percentiles(k.probes.snapshot())
	c6.Detail = fmt.Sprintf("epoch %d, %d keys; acked %d, CAS conflicts %d, ambiguous %d (landed %d, not landed %d, unresolved %d); lost %d; watch saw %d entries; %d probes, max %.0f ms",
		epoch, len(keys), k.acked.Load(), k.conflicts.Load(), k.ambiguous.Load(), k.landed.Load(), k.notLanded.Load(), k.unresolved.Load(), lost,
		k.watchSeenN.Load(), probes.N, probes.Max)

	// 7. No hang (the watchdog is judged for the whole run; here: requests,
	// stall detection and publish futures).
	c7 := newCheck(7, "no hang: bounded calls, stall detection", ph.name)
	if over := time.Duration(ph.r1.maxOver.Load()); over > cfg.reqOverrunLimit {
		c7.fail("a Request returned %v after its deadline (limit %v)", over.Round(time.Millisecond), cfg.reqOverrunLimit)
	}
	bound := cfg.stallBound() + cfg.stallSlack
	for _, d := range ph.stall {
		switch {
		case !d.Detected:
			c7.fail("stall (fault #%d) not detected by %s", d.Fault, d.Conn)
		case time.Duration(d.AfterMS*float64(time.Millisecond)) > bound:
			c7.fail("stall (fault #%d) detected by %s after %.0f ms (bound %v)", d.Fault, d.Conn, d.AfterMS, bound)
		}
	}
	if n := ph.p2.waitOverrun.Load(); n > 0 {
		c7.fail("%d publish futures were still open past their ack timeout + 1 s", n)
	}
	if cr, rs := ph.p2.created.Load(), ph.p2.resolved.Load(); cr != rs {
		c7.fail("P2 futures created %d, resolved %d", cr, rs)
	}
	c7.Detail = fmt.Sprintf("max request overrun %v (limit %v); %d stall detections, bound %v",
		time.Duration(ph.r1.maxOver.Load()).Round(time.Millisecond), cfg.reqOverrunLimit, len(ph.stall), bound)

	// 8. Surfaced, not silent.
	c8 := newCheck(8, "every fault and drop surfaced", ph.name)
	evs := ph.rec.snapshotEvents(ph.name)
	for _, f := range ph.rec.phaseFaults(ph.name) {
		n, expected := 0, 0
		for _, e := range evs {
			if e.Source == "harness" || e.Source == "watchdog" || e.At < f.Start-100*time.Millisecond || e.At > f.End+5*time.Second {
				continue
			}
			n++
			if f.Expect != "" && e.Kind == f.Expect {
				expected++
			}
		}
		f.Events = n
		if !f.Disruptive {
			continue
		}
		if f.Kind == fCorrupt && !strings.Contains(f.Detail, "injected=true") {
			continue // nothing was injected (no traffic)
		}
		if n == 0 {
			c8.fail("fault #%d %s produced no status event", f.N, f.Kind)
		} else if f.Expect != "" && expected == 0 {
			c8.fail("fault #%d %s produced no %q event (%d others)", f.N, f.Kind, f.Expect, n)
		}
	}
	for _, c := range ph.conns {
		slow, disc := 0, 0
		for _, e := range evs {
			if e.Source != c.name {
				continue
			}
			switch e.Kind {
			case conn.EventSlowConsumer.String():
				slow++
			case conn.EventDisconnected.String(), conn.EventClosed.String():
				disc++
			}
		}
		if c.stats.Dropped > 0 && slow == 0 {
			c8.fail("%s dropped %d messages without a slow-consumer event", c.name, c.stats.Dropped)
		}
		if c.stats.LostBytes > 0 && disc == 0 {
			c8.fail("%s lost %d bytes without a disconnect event", c.name, c.stats.LostBytes)
		}
	}
	// The connections' own counters (conn.Stats, read after Close, which
	// delivers every queued event before it returns) agree with the events
	// they raised, when none was dropped.
	compared := 0
	for _, c := range ph.conns {
		st := c.closed
		if st.EventsDropped > 0 {
			continue
		}
		compared++
		count := func(k conn.EventKind) uint64 { return uint64(ph.rec.count(ph.name, c.name, k.String())) }
		if d := count(conn.EventDisconnected); st.Disconnects != d {
			c8.fail("%s: Stats.Disconnects %d, %d disconnected events", c.name, st.Disconnects, d)
		}
		if se := count(conn.EventServerError); st.ServerErrors != se {
			c8.fail("%s: Stats.ServerErrors %d, %d server-error events", c.name, st.ServerErrors, se)
		}
		if pe := count(conn.EventProtocolError); st.ProtocolErrors+st.BadHeaders != pe {
			c8.fail("%s: Stats.ProtocolErrors %d + BadHeaders %d, %d protocol-error events", c.name, st.ProtocolErrors, st.BadHeaders, pe)
		}
	}
	// The window's own counters (pubwin.Stats) agree with the outcomes its
	// futures gave the publisher, once every future was waited for.
	winAgree := "not compared (futures left)"
	if ws := ph.p2.winStats; closed(ph.p2.waitDone) && ph.p2.pendingAfter == 0 {
		winAgree = fmt.Sprintf("window counters compared: %d published, %d acked, %d failed, %d timed out, %d lost",
			ws.Published, ws.Acked, ws.Failed, ws.TimedOut, ws.Lost)
		if ws.Pending != 0 || ws.Acked+ws.Failed+ws.TimedOut+ws.Lost != ws.Published {
			c8.fail("window counters: %d published, %d pending, ended %d acked + %d failed + %d timed out + %d lost",
				ws.Published, ws.Pending, ws.Acked, ws.Failed, ws.TimedOut, ws.Lost)
		}
		if ok, to, lost := ph.p2.resOK.Load(), ph.p2.resTO.Load(), ph.p2.resLost.Load(); ws.Acked != uint64(ok) || ws.TimedOut != uint64(to) || ws.Lost != uint64(lost) {
			c8.fail("window counters %d acked, %d timed out, %d lost; the futures said %d, %d, %d", ws.Acked, ws.TimedOut, ws.Lost, ok, to, lost)
		}
	}
	// The C1 handles' counters (pull.Stats) agree with what the consume
	// loop saw: every message a Messages iteration took was yielded to it
	// (C1 leaves a loop only on a terminal error, yielded after the
	// queued messages, or on its ctx, before taking more), and every
	// missed-heartbeat reset was reported to OnError.
	c1Agree := "not compared (C1 still running)"
	if closed(ph.c1.done) {
		cs, handles := ph.c1.statsSum()
		ph.c1.mu.Lock()
		deliveries := ph.c1.deliveries
		ph.c1.mu.Unlock()
		missed := ph.c1.pullErrs.snapshot()[classifyPull(pull.ErrNoHeartbeat)]
		c1Agree = fmt.Sprintf("C1 counters compared over %d handles: %d messages, %d pulls, %d missed heartbeats, %d resets",
			handles, cs.Messages, cs.Pulls, cs.MissedHeartbeats, cs.Resets)
		if cs.Messages != uint64(deliveries) {
			c8.fail("C1: pull.Stats.Messages %d, the loop handled %d", cs.Messages, deliveries)
		}
		if cs.MissedHeartbeats != uint64(missed) {
			c8.fail("C1: pull.Stats.MissedHeartbeats %d, %d reported to OnError", cs.MissedHeartbeats, missed)
		}
		if cs.Resets < cs.MissedHeartbeats {
			c8.fail("C1: %d resets for %d missed heartbeats", cs.Resets, cs.MissedHeartbeats)
		}
	}
	// The requesting connection's request counters agree with the outcomes
	// R1's requesters saw. A request counts once published, so one refused
	// before that (a full reconnect buffer, a ctx that ran out first)
	// counts in R1's totals only.
	reqAgree := "not compared"
	for _, c := range ph.conns {
		if c.nc != ph.r1.req {
			continue
		}
		st := c.closed
		total, ok, to, nr, disc := ph.r1.total.Load(), ph.r1.ok.Load(), ph.r1.timeout.Load(), ph.r1.noResp.Load(), ph.r1.disc.Load()
		reqAgree = fmt.Sprintf("request counters compared: %d requests (%d made), %d timeouts, %d no responders",
			st.Requests, total, st.RequestTimeouts, st.NoResponders)
		if st.Requests > uint64(total) || st.RequestTimeouts > uint64(to) || st.NoResponders != uint64(nr) ||
			st.Requests < uint64(ok+nr+disc)+st.RequestTimeouts || st.RequestsPending != 0 {
			c8.fail("request counters %d requests, %d timeouts, %d no responders, %d pending; R1 made %d: %d ok, %d timed out, %d no responders, %d disconnected",
				st.Requests, st.RequestTimeouts, st.NoResponders, st.RequestsPending, total, ok, to, nr, disc)
		}
	}
	c8.Detail = fmt.Sprintf("%d faults, %d status events; connection counters compared for %d of %d connections; %s; %s; %s",
		len(ph.rec.phaseFaults(ph.name)), len(evs), compared, len(ph.conns), winAgree, c1Agree, reqAgree)

	return []*check{c1, c2, c3, c4, c5, c6, c7, c8}, badIDs
}

// idTimeline describes everything known about one logical message.
func (ph *phase) idTimeline(id string) string {
	src, n, ok := parseID(id)
	trk := ph.track(src)
	if !ok || trk == nil {
		return id + ": unknown"
	}
	var out string
	trk.with(n, func(r *pubRec) {
		state := map[uint8]string{pubPending: "pending", pubAcked: "acked", pubAbandoned: "abandoned"}[r.state]
		out = fmt.Sprintf("%s: first attempt %s, %d attempts, last error %q, unsure %v, %s", id, fmtDur(r.first), r.attempts, r.lastErr, r.unsure, state)
		if r.state == pubAcked {
			out += fmt.Sprintf(" at %s seq %d duplicate %v", fmtDur(r.ackAt), r.seq, r.dup)
		}
		out += fmt.Sprintf("; C1 deliveries %d", r.c1)
		if r.c1 > 0 {
			out += fmt.Sprintf(" (first %s, last %s)", fmtDur(r.c1First), fmtDur(r.c1Last))
		}
		out += fmt.Sprintf("; stored %d", r.stored)
		if r.stored > 0 {
			out += fmt.Sprintf(" (seq %d)", r.storedSeq)
		}
	})
	return out
}

// checkFast adds to c the failures of the fast batches (F1) and returns
// its summary: a message the server acknowledged is stored, a committed
// batch whole, nothing twice, and what is stored of a batch is a prefix of
// it (gap mode fail).
func checkFast(c *check, w *f1w, fs *finalState) string {
	recs := w.snapshot()
	if fs.fastErr != "" {
		c.fail("fast-batch replay: %s", fs.fastErr)
	}
	whole, cut, none := 0, 0, 0
	for id, idx := range fs.fast {
		r, known := recs[id]
		if !known {
			// A batch still running when the run stopped is not recorded.
			if !closed(w.done) {
				continue
			}
			c.fail("fast batch %q in the stream was never published", id)
			continue
		}
		seen := make(map[int]bool, len(idx))
		for _, v := range idx {
			if seen[v] {
				c.fail("fast batch %q: message %d stored twice", id, v)
			}
			seen[v] = true
		}
		for i := range len(seen) {
			if !seen[i] {
				c.fail("fast batch %q: stored %v is not a prefix of the batch", id, idx)
				break
			}
		}
		if len(seen) > r.sent {
			c.fail("fast batch %q: %d messages stored, %d sent", id, len(seen), r.sent)
		}
	}
	for id, r := range recs {
		n := uint64(len(fs.fast[id]))
		switch {
		case r.committed && n != fastSize:
			c.fail("fast batch %q committed with %d messages stored, want %d", id, n, fastSize)
		case n < r.acked:
			c.fail("fast batch %q: the server acknowledged %d messages, %d stored", id, r.acked, n)
		}
		switch {
		case n == fastSize:
			whole++
		case n == 0:
			none++
		default:
			cut++
		}
	}
	if n := w.badAcks.Load(); n > 0 {
		c.fail("%d fast commit acks named another batch or size", n)
	}
	if len(recs) >= 10 && w.committed.Load() == 0 {
		c.fail("none of %d fast batches committed", len(recs))
	}
	return fmt.Sprintf("fast batches %d: committed %d, failed %d (%v); stored whole %d, cut short %d, nothing %d",
		len(recs), w.committed.Load(), w.failed.Load(), w.errs.snapshot(), whole, cut, none)
}
