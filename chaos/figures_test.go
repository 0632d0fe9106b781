package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
)

// The figures of RELIABILITY.md §e, written as JSON and as a table.

type figures struct {
	Run       runFigures      `json:"run"`
	Phases    []*phaseFigures `json:"phases"`
	Watchdog  watchdogFigures `json:"watchdog"`
	Lag       lagFigures      `json:"scheduling_lag"`
	Resources resourceFigures `json:"resources"`
	Checks    []*check        `json:"checks"`
	Pass      bool            `json:"pass"`
	events    []event
}

type runFigures struct {
	Seed         uint64         `json:"seed"`
	Mode         string         `json:"mode"`
	Race         bool           `json:"race"`
	GoMaxProcs   int            `json:"gomaxprocs"`
	DurationS    float64        `json:"duration_s"`
	Config       string         `json:"config"`
	FaultsByType map[string]int `json:"faults_by_type"`
	Restarts     int            `json:"server_restarts"`
	LeaderKills  int            `json:"leader_kills"`
	LameDucks    int            `json:"lame_duck_events"`
	Timeline     []*fault       `json:"fault_timeline"`
	EventsKept   int            `json:"events_kept"`
	EventsOver   int            `json:"events_not_kept"`
	Started      string         `json:"started"`
}

type pubFigures struct {
	Logical      int            `json:"logical_messages"`
	Attempts     int64          `json:"attempts"`
	Retries      int64          `json:"retries"`
	Acked        int64          `json:"acked"`
	AckedDup     int64          `json:"acked_as_duplicate"`
	Unknown      int            `json:"unknown_outcome"`
	Abandoned    int64          `json:"finally_failed"`
	ErrorClasses map[string]int `json:"errors_by_class"`
	Latency      pct            `json:"puback_latency"`
	LatencyFault pct            `json:"puback_latency_during_faults"`
}

type phaseFigures struct {
	Name      string  `json:"name"`
	DurationS float64 `json:"duration_s"`
	Publish   struct {
		P1                 pubFigures `json:"p1_sync"`
		P2                 pubFigures `json:"p2_async"`
		StreamMessages     uint64     `json:"stream_messages"`
		StoredMinusAcked   int        `json:"stored_minus_acked"`
		UnknownOutcome     int        `json:"unknown_outcome"`
		DuplicatesInStream int        `json:"duplicates_in_stream"`
		MissingAcked       int        `json:"missing_acked"`
	} `json:"publish"`
	Window struct {
		Configured      int   `json:"configured"`
		MaxInFlight     int64 `json:"max_in_flight"`
		Stalled         int64 `json:"too_many_stalled"`
		Created         int64 `json:"futures_created"`
		ResolvedOK      int64 `json:"resolved_ok"`
		ResolvedErr     int64 `json:"resolved_err"`
		ResolvedTimeout int64 `json:"resolved_timeout"`
		ResolvedLost    int64 `json:"resolved_ack_lost"`
		PendingAfter    int   `json:"pending_after"`
		WaitOverrun     int64 `json:"futures_past_ack_timeout"`
	} `json:"async_window"`
	Connection struct {
		DisconnectsByCause map[string]int `json:"disconnects_by_cause"`
		Reconnects         uint64         `json:"reconnects"`
		ReconnectTime      pct            `json:"time_to_reconnect"`
		StallBoundMS       float64        `json:"stall_bound_ms"`
		StallDetect        []stallDetect  `json:"stall_detection"`
		StallDetectMaxMS   float64        `json:"stall_detection_max_ms"`
		ProtocolErrors     int            `json:"protocol_errors"`
		LameDuckEvents     int            `json:"lame_duck_events"`
		SlowConsumerEvents int            `json:"slow_consumer_events"`
		Dropped            uint64         `json:"dropped_msgs"`
		LostBytes          uint64         `json:"lost_bytes"`
		EventsDropped      uint64         `json:"events_dropped"`
		ReconnectBufErrs   int            `json:"reconnect_buffer_exceeded"`
		CloseMaxMS         float64        `json:"close_max_ms"`
	} `json:"connection"`
	Consume struct {
		Delivered     int            `json:"delivered"`
		Unique        int            `json:"unique"`
		MissingAcked  int            `json:"missing_acked"`
		Redeliveries  int            `json:"redeliveries"`
		RedeliveryPct float64        `json:"redelivery_pct"`
		MaxPerMsg     int            `json:"max_deliveries_per_msg"`
		LongestGapMS  float64        `json:"longest_delivery_gap_ms"`
		Recovery      pct            `json:"recovery_after_fault"`
		PullErrors    map[string]int `json:"pull_conditions"`
		Terminals     map[string]int `json:"terminal_errors"`
		Recreations   int64          `json:"consumer_recreations"`
		AckErrors     int            `json:"ack_errors"`
	} `json:"consume"`
	Ordered struct {
		Yielded   int            `json:"yielded"`
		Gaps      int            `json:"gaps_seen_by_user"`
		Dups      int            `json:"duplicates_seen_by_user"`
		Resets    map[string]int `json:"resets_by_reason"`
		ResetsAll uint64         `json:"resets"`
	} `json:"ordered"`
	Requests struct {
		Total        int64          `json:"total"`
		OK           int64          `json:"ok"`
		Timeout      int64          `json:"timeout"`
		NoResponders int64          `json:"no_responders"`
		Disconnected int64          `json:"disconnected"`
		Closed       int64          `json:"closed"`
		Other        map[string]int `json:"other"`
		MaxOverrunMS float64        `json:"max_overrun_past_deadline_net_ms"`
		MaxRawMS     float64        `json:"max_overrun_past_deadline_raw_ms"`
		Late         []string       `json:"returns_over_20ms_past_deadline,omitempty"`
		Overrun      pct            `json:"overrun_past_deadline"`
		Latency      pct            `json:"latency_ok"`
		Served       int64          `json:"served"`
	} `json:"requests"`
	KV struct {
		Keys         int            `json:"keys"`
		Epochs       int            `json:"epochs"`
		Acked        int64          `json:"updates_acked"`
		Conflicts    int64          `json:"cas_conflicts"`
		Ambiguous    int64          `json:"ambiguous"`
		Landed       int64          `json:"ambiguous_landed"`
		NotLanded    int64          `json:"ambiguous_not_landed"`
		Unresolved   int64          `json:"unresolved"`
		StaleEpoch   int64          `json:"previous_bucket_writes"`
		WatchSeen    int64          `json:"watch_entries_seen"`
		WatchStarts  int64          `json:"watch_starts"`
		WatchTerms   map[string]int `json:"watch_terminals"`
		Probes       pct            `json:"watch_probe_after_fault"`
		ProbeList    []probeResult  `json:"watch_probes"`
		LostUpdates  int            `json:"lost_updates"`
		ErrorClasses map[string]int `json:"errors_by_class"`
	} `json:"kv"`
	Batch struct {
		Logical     int64          `json:"logical_batches"`
		Attempts    int            `json:"attempts"`
		Committed   int64          `json:"committed"`
		Ambiguous   int64          `json:"commit_outcome_unknown"`
		Failed      int64          `json:"failed_before_commit"`
		StoredWhole int            `json:"stored_complete"`
		Partial     int            `json:"stored_partial"`
		Errors      map[string]int `json:"errors_by_class"`
	} `json:"batch"`
	LeaderKills []leaderKill `json:"leader_kills,omitempty"`
	Conns       []connFig    `json:"conns"`
	KnownBugs   []string     `json:"known_bugs_seen,omitempty"`
}

type connFig struct {
	Name       string     `json:"name"`
	Proxied    bool       `json:"proxied"`
	Stats      conn.Stats `json:"stats"`
	CloseMS    float64    `json:"close_ms"`
	CloseError string     `json:"close_error,omitempty"`
}

type resourceFigures struct {
	GoroutinesBaseline int     `json:"module_goroutines_baseline"`
	GoroutinesFinal    int     `json:"module_goroutines_final"`
	FDsBaseline        int     `json:"fds_baseline"`
	FDsFinal           int     `json:"fds_final"`
	HeapWarmMiB        float64 `json:"heap_inuse_after_warmup_mib"`
	HeapPeakMiB        float64 `json:"heap_inuse_peak_mib"`
	HeapEndMiB         float64 `json:"heap_inuse_end_mib"`
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// figures gathers the phase's figures; judge must have run.
func (ph *phase) figures() *phaseFigures {
	cfg, fs := ph.cfg, ph.final
	f := &phaseFigures{Name: ph.name, DurationS: (ph.rec.now() - ph.began).Seconds()}
	faults := ph.rec.phaseFaults(ph.name)
	inFault := func(at time.Duration) bool {
		for _, fl := range faults {
			if at >= fl.Start && at <= fl.End+time.Second {
				return true
			}
		}
		return false
	}
	pubFig := func(w *pubStats, trk *pubTrack) pubFigures {
		pf := pubFigures{Logical: trk.len(), Attempts: w.attempts.Load(), Retries: w.retries.Load(), Acked: w.acked.Load(),
			AckedDup: w.dupAcks.Load(), Abandoned: w.abandoned.Load(), ErrorClasses: w.errs.snapshot()}
		trk.mu.Lock()
		for _, r := range trk.recs {
			if r.state != pubAcked && r.unsure {
				pf.Unknown++
			}
		}
		trk.mu.Unlock()
		w.latMu.Lock()
		var all, during []time.Duration
		for _, s := range w.lat {
			all = append(all, s.d)
			if inFault(s.at) {
				during = append(during, s.d)
			}
		}
		w.latMu.Unlock()
		pf.Latency, pf.LatencyFault = percentiles(all), percentiles(during)
		return pf
	}
	f.Publish.P1 = pubFig(&ph.p1.st, ph.p1.trk)
	f.Publish.P2 = pubFig(&ph.p2.st, ph.p2.trk)
	f.Publish.UnknownOutcome = f.Publish.P1.Unknown + f.Publish.P2.Unknown
	if fs.info != nil {
		f.Publish.StreamMessages = fs.info.State.Msgs
	}
	for _, trk := range []*pubTrack{ph.p1.trk, ph.p2.trk} {
		trk.mu.Lock()
		for _, r := range trk.recs {
			if r.stored > 1 {
				f.Publish.DuplicatesInStream += int(r.stored) - 1
			}
			if r.stored > 0 && r.state != pubAcked {
				f.Publish.StoredMinusAcked++
			}
			if r.state == pubAcked && r.stored == 0 {
				f.Publish.MissingAcked++
			}
			if r.state == pubAcked && r.c1 == 0 {
				f.Consume.MissingAcked++
			}
		}
		trk.mu.Unlock()
	}

	w := &f.Window
	w.Configured, w.MaxInFlight, w.Stalled = cfg.window, ph.p2.maxInflight.Load(), ph.p2.stalled.Load()
	w.Created, w.ResolvedOK, w.ResolvedErr = ph.p2.created.Load(), ph.p2.resOK.Load(), ph.p2.resErr.Load()
	w.ResolvedTimeout, w.ResolvedLost, w.PendingAfter = ph.p2.resTO.Load(), ph.p2.resLost.Load(), ph.p2.pendingAfter
	w.WaitOverrun = ph.p2.waitOverrun.Load()

	// Connections.
	cn := &f.Connection
	cn.DisconnectsByCause = map[string]int{}
	cn.StallBoundMS = ms(cfg.stallBound())
	cn.StallDetect = ph.stall
	for _, d := range ph.stall {
		cn.StallDetectMaxMS = max(cn.StallDetectMaxMS, d.AfterMS)
	}
	evs := ph.rec.snapshotEvents(ph.name)
	downAt := map[string]time.Duration{}
	var reconn []time.Duration
	for _, e := range evs {
		switch e.Kind {
		case conn.EventDisconnected.String():
			cn.DisconnectsByCause[e.Detail]++
			if _, ok := downAt[e.Source]; !ok {
				downAt[e.Source] = e.At
			}
		case conn.EventReconnected.String():
			if d, ok := downAt[e.Source]; ok {
				reconn = append(reconn, e.At-d)
				delete(downAt, e.Source)
			}
		case conn.EventProtocolError.String():
			cn.ProtocolErrors++
		case conn.EventLameDuck.String():
			cn.LameDuckEvents++
		case conn.EventSlowConsumer.String():
			cn.SlowConsumerEvents++
		}
	}
	cn.ReconnectTime = percentiles(reconn)
	for _, c := range ph.conns {
		cn.Reconnects += c.stats.Reconnects
		cn.Dropped += c.stats.Dropped
		cn.LostBytes += c.stats.LostBytes
		cn.EventsDropped += c.stats.EventsDropped
		cn.CloseMaxMS = max(cn.CloseMaxMS, ms(c.closeDur))
		cf := connFig{Name: c.name, Proxied: c.proxied, Stats: c.stats, CloseMS: ms(c.closeDur)}
		if c.closeErr != nil {
			cf.CloseError = c.closeErr.Error()
		}
		f.Conns = append(f.Conns, cf)
	}
	for k, v := range ph.p1.st.errs.snapshot() {
		if strings.Contains(k, "reconnect buffer") {
			cn.ReconnectBufErrs += v
		}
	}
	for k, v := range ph.p2.st.errs.snapshot() {
		if strings.Contains(k, "reconnect buffer") {
			cn.ReconnectBufErrs += v
		}
	}

	// Consume.
	c := &f.Consume
	ph.c1.mu.Lock()
	c.Delivered, c.Unique, c.Redeliveries, c.MaxPerMsg = ph.c1.deliveries, ph.c1.unique, len(ph.c1.redeliveries), ph.c1.maxPerMsg
	c.AckErrors = ph.c1.ackErrs
	deliv := slices.Clone(ph.c1.deliveredAt)
	ph.c1.mu.Unlock()
	if c.Delivered > 0 {
		c.RedeliveryPct = 100 * float64(c.Redeliveries) / float64(c.Delivered)
	}
	c.MaxPerMsg = max(c.MaxPerMsg, min(c.Unique, 1))
	c.PullErrors, c.Terminals, c.Recreations = ph.c1.pullErrs.snapshot(), ph.c1.terminals.snapshot(), ph.c1.recreations.Load()
	deliv = sortDurations(deliv)
	prev := ph.faultsFrom
	for _, at := range deliv {
		if at < ph.faultsFrom || at > ph.pubStopAt {
			continue
		}
		c.LongestGapMS = max(c.LongestGapMS, ms(at-prev))
		prev = at
	}
	var rec []time.Duration
	for _, fl := range faults {
		if !fl.Disruptive {
			continue
		}
		if at := firstAtOrAfter(deliv, fl.End); at >= 0 && fl.End < ph.pubStopAt {
			rec = append(rec, at-fl.End)
		}
	}
	c.Recovery = percentiles(rec)

	// Ordered.
	ph.c2.mu.Lock()
	f.Ordered.Yielded, f.Ordered.Gaps, f.Ordered.Dups = ph.c2.count, ph.c2.gaps, ph.c2.dups
	ph.c2.mu.Unlock()
	f.Ordered.Resets, f.Ordered.ResetsAll = ph.c2.resets.snapshot(), ph.c2.oc.Resets()

	// Requests.
	r := &f.Requests
	r1 := ph.r1
	r.Total, r.OK, r.Timeout, r.NoResponders = r1.total.Load(), r1.ok.Load(), r1.timeout.Load(), r1.noResp.Load()
	r.Disconnected, r.Closed, r.Other, r.Served = r1.disc.Load(), r1.closed.Load(), r1.otherErrs.snapshot(), r1.served.Load()
	r.MaxOverrunMS, r.Overrun, r.Latency = ms(time.Duration(r1.maxOver.Load())), percentiles(r1.over.snapshot()), percentiles(r1.lat.snapshot())
	r.MaxRawMS = ms(time.Duration(r1.maxRaw.Load()))
	r1.worstMu.Lock()
	for _, s := range r1.worst {
		r.Late = append(r.Late, fmt.Sprintf("%s +%.0fms %s", fmtDur(s.at), ms(s.d), ph.faultAt(s.at)))
	}
	r1.worstMu.Unlock()

	// KV.
	k, kf := ph.k1, &f.KV
	k.mu.Lock()
	kf.Keys, kf.Epochs = len(k.keys), k.epoch
	k.mu.Unlock()
	kf.Acked, kf.Conflicts, kf.Ambiguous = k.acked.Load(), k.conflicts.Load(), k.ambiguous.Load()
	kf.Landed, kf.NotLanded, kf.Unresolved, kf.StaleEpoch = k.landed.Load(), k.notLanded.Load(), k.unresolved.Load(), k.staleEpoch.Load()
	kf.WatchSeen, kf.WatchStarts, kf.WatchTerms = k.watchSeenN.Load(), k.watchStarts.Load(), k.watchTerms.snapshot()
	kf.Probes, kf.ErrorClasses = percentiles(k.probes.snapshot()), k.errs.snapshot()
	kf.LostUpdates = ph.kvLost
	kf.ProbeList = k.probeRes
	f.KnownBugs = append(append([]string(nil), ph.known...), k.known...)

	// Batches.
	b, bf := ph.b1, &f.Batch
	b.mu.Lock()
	bf.Attempts = len(b.attempts)
	b.mu.Unlock()
	bf.Logical, bf.Committed, bf.Ambiguous, bf.Failed, bf.Errors = b.logical.Load(), b.committed.Load(), b.ambiguous.Load(), b.failed.Load(), b.errs.snapshot()
	for _, idx := range fs.batches {
		if len(idx) == cfg.batchSize {
			bf.StoredWhole++
		} else {
			bf.Partial++
		}
	}

	// Leader kills: time from the leader being down (Shutdown returned) to
	// the first PubAck of a sync publish sent after that.
	ph.p1.st.latMu.Lock()
	lat := slices.Clone(ph.p1.st.lat)
	ph.p1.st.latMu.Unlock()
	for i := range ph.leaderKill {
		lk := &ph.leaderKill[i]
		best := time.Duration(-1)
		for _, s := range lat {
			if s.at >= lk.downAt && (best < 0 || s.at+s.d < best) {
				best = s.at + s.d
			}
		}
		if best >= 0 {
			lk.FirstAckMS = ms(best - lk.downAt)
		}
	}
	f.LeaderKills = ph.leaderKill
	return f
}

// faultAt names the faults active around t (from 1 s before to 1 s after).
func (ph *phase) faultAt(t time.Duration) string {
	var v []string
	for _, f := range ph.rec.phaseFaults(ph.name) {
		if t >= f.Start-time.Second && t <= f.End+time.Second {
			v = append(v, fmt.Sprintf("#%d %s", f.N, f.Kind))
		}
	}
	if len(v) == 0 {
		return "(no fault)"
	}
	return "(" + strings.Join(v, ", ") + ")"
}

func (fg *figures) fillRun(cfg *config, rec *recorder) {
	r := &fg.Run
	r.Seed, r.Race, r.Config = cfg.seed, cfg.race, cfg.String()
	r.Mode = "short"
	if cfg.soak {
		r.Mode = fmt.Sprintf("soak %ds", cfg.seconds)
	}
	r.DurationS = rec.now().Seconds()
	r.FaultsByType = map[string]int{}
	r.Timeline = rec.phaseFaults("")
	for _, f := range r.Timeline {
		r.FaultsByType[f.Kind]++
		switch f.Kind {
		case fRestart, fLameDuck:
			r.Restarts++
		case fKillLeader:
			r.LeaderKills++
		case fQuorum:
			r.LeaderKills++
		}
	}
	for _, p := range fg.Phases {
		r.LameDucks += p.Connection.LameDuckEvents
	}
	rec.mu.Lock()
	r.EventsKept, r.EventsOver = len(rec.events), rec.evDropped
	rec.mu.Unlock()
	fg.events = rec.snapshotEvents("")
	r.Started = rec.start.UTC().Format(time.RFC3339)
}

// write stores the figures as JSON in $CHAOS_OUT (a .json file, or a
// directory) or in the test's temporary directory.
func (fg *figures) write(t *testing.T) string {
	out := os.Getenv("CHAOS_OUT")
	path := filepath.Join(t.TempDir(), "chaos-figures.json")
	if out != "" {
		if strings.HasSuffix(out, ".json") {
			path = out
			_ = os.MkdirAll(filepath.Dir(out), 0o755)
		} else {
			_ = os.MkdirAll(out, 0o755)
			path = filepath.Join(out, "chaos-figures.json")
		}
	}
	b, err := json.MarshalIndent(fg, "", "  ")
	if err != nil {
		t.Errorf("figures: %v", err)
		return ""
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Errorf("figures: %v", err)
		return ""
	}
	// The event log goes next to it.
	if b, err := json.Marshal(fg.events); err == nil {
		_ = os.WriteFile(strings.TrimSuffix(path, ".json")+"-events.json", b, 0o644)
	}
	return path
}

// table renders the summary table.
func (fg *figures) table() string {
	var b strings.Builder
	row := func(group, name string, vals ...any) {
		fmt.Fprintf(&b, "| %-10s | %-44s |", group, name)
		for _, v := range vals {
			fmt.Fprintf(&b, " %-22v |", v)
		}
		b.WriteString("\n")
	}
	header := []any{}
	for _, p := range fg.Phases {
		header = append(header, p.Name)
	}
	row("group", "figure", header...)
	fmt.Fprintf(&b, "|%s|%s|%s\n", strings.Repeat("-", 12), strings.Repeat("-", 46), strings.Repeat(strings.Repeat("-", 24)+"|", len(fg.Phases)))
	each := func(group, name string, f func(p *phaseFigures) any) {
		vals := []any{}
		for _, p := range fg.Phases {
			vals = append(vals, f(p))
		}
		row(group, name, vals...)
	}
	l := func(p pct) string { return fmt.Sprintf("%.1f/%.1f/%.1f", p.P50, p.P99, p.Max) }
	each("run", "duration s", func(p *phaseFigures) any { return fmt.Sprintf("%.1f", p.DurationS) })
	each("publish", "P1 logical / acked / dup-acked", func(p *phaseFigures) any {
		return fmt.Sprintf("%d/%d/%d", p.Publish.P1.Logical, p.Publish.P1.Acked, p.Publish.P1.AckedDup)
	})
	each("publish", "P1 attempts / retries", func(p *phaseFigures) any {
		return fmt.Sprintf("%d/%d", p.Publish.P1.Attempts, p.Publish.P1.Retries)
	})
	each("publish", "P2 logical / acked / dup-acked", func(p *phaseFigures) any {
		return fmt.Sprintf("%d/%d/%d", p.Publish.P2.Logical, p.Publish.P2.Acked, p.Publish.P2.AckedDup)
	})
	each("publish", "P2 attempts / retries", func(p *phaseFigures) any {
		return fmt.Sprintf("%d/%d", p.Publish.P2.Attempts, p.Publish.P2.Retries)
	})
	each("publish", "stream msgs", func(p *phaseFigures) any { return p.Publish.StreamMessages })
	each("publish", "missing acked (must be 0)", func(p *phaseFigures) any { return p.Publish.MissingAcked })
	each("publish", "duplicates in stream (must be 0)", func(p *phaseFigures) any { return p.Publish.DuplicatesInStream })
	each("publish", "stored−acked ≤ unknown outcome", func(p *phaseFigures) any {
		return fmt.Sprintf("%d ≤ %d", p.Publish.StoredMinusAcked, p.Publish.UnknownOutcome)
	})
	each("publish", "P1 PubAck ms p50/p99/max", func(p *phaseFigures) any { return l(p.Publish.P1.Latency) })
	each("publish", "P1 PubAck ms during faults", func(p *phaseFigures) any { return l(p.Publish.P1.LatencyFault) })
	each("window", "window / max in flight", func(p *phaseFigures) any {
		return fmt.Sprintf("%d/%d", p.Window.Configured, p.Window.MaxInFlight)
	})
	each("window", "futures created = ok+err+timeout+lost", func(p *phaseFigures) any {
		w := p.Window
		return fmt.Sprintf("%d=%d+%d+%d+%d", w.Created, w.ResolvedOK, w.ResolvedErr, w.ResolvedTimeout, w.ResolvedLost)
	})
	each("window", "TooManyStalled / pending after", func(p *phaseFigures) any {
		return fmt.Sprintf("%d/%d", p.Window.Stalled, p.Window.PendingAfter)
	})
	each("conn", "disconnects", func(p *phaseFigures) any {
		n := 0
		for _, v := range p.Connection.DisconnectsByCause {
			n += v
		}
		return n
	})
	each("conn", "reconnect ms p50/p99/max", func(p *phaseFigures) any { return l(p.Connection.ReconnectTime) })
	each("conn", "stall detection max ms (bound)", func(p *phaseFigures) any {
		return fmt.Sprintf("%.0f (%.0f)", p.Connection.StallDetectMaxMS, p.Connection.StallBoundMS)
	})
	each("conn", "protocol errors / lame duck events", func(p *phaseFigures) any {
		return fmt.Sprintf("%d/%d", p.Connection.ProtocolErrors, p.Connection.LameDuckEvents)
	})
	each("conn", "dropped / lost bytes / events dropped", func(p *phaseFigures) any {
		return fmt.Sprintf("%d/%d/%d", p.Connection.Dropped, p.Connection.LostBytes, p.Connection.EventsDropped)
	})
	each("consume", "C1 delivered / unique", func(p *phaseFigures) any {
		return fmt.Sprintf("%d/%d", p.Consume.Delivered, p.Consume.Unique)
	})
	each("consume", "C1 missing acked (must be 0)", func(p *phaseFigures) any { return p.Consume.MissingAcked })
	each("consume", "C1 redeliveries (%) / max per msg", func(p *phaseFigures) any {
		return fmt.Sprintf("%d (%.2f%%)/%d", p.Consume.Redeliveries, p.Consume.RedeliveryPct, p.Consume.MaxPerMsg)
	})
	each("consume", "longest delivery gap ms", func(p *phaseFigures) any { return fmt.Sprintf("%.0f", p.Consume.LongestGapMS) })
	each("consume", "recovery after fault ms p50/max", func(p *phaseFigures) any {
		return fmt.Sprintf("%.0f/%.0f", p.Consume.Recovery.P50, p.Consume.Recovery.Max)
	})
	each("consume", "missed heartbeats / recreations", func(p *phaseFigures) any {
		return fmt.Sprintf("%d/%d", p.Consume.PullErrors["missed heartbeats"], p.Consume.Recreations)
	})
	each("ordered", "C2 yielded / gaps / dups", func(p *phaseFigures) any {
		return fmt.Sprintf("%d/%d/%d", p.Ordered.Yielded, p.Ordered.Gaps, p.Ordered.Dups)
	})
	each("ordered", "C2 resets", func(p *phaseFigures) any { return p.Ordered.ResetsAll })
	each("requests", "total / ok / timeout", func(p *phaseFigures) any {
		return fmt.Sprintf("%d/%d/%d", p.Requests.Total, p.Requests.OK, p.Requests.Timeout)
	})
	each("requests", "no responders / disconnected", func(p *phaseFigures) any {
		return fmt.Sprintf("%d/%d", p.Requests.NoResponders, p.Requests.Disconnected)
	})
	each("requests", "max overrun past deadline ms net (raw)", func(p *phaseFigures) any {
		return fmt.Sprintf("%.1f (%.1f)", p.Requests.MaxOverrunMS, p.Requests.MaxRawMS)
	})
	each("kv", "acked / ambiguous (landed)", func(p *phaseFigures) any {
		return fmt.Sprintf("%d/%d (%d)", p.KV.Acked, p.KV.Ambiguous, p.KV.Landed)
	})
	each("kv", "lost updates / watch entries", func(p *phaseFigures) any {
		return fmt.Sprintf("%d/%d", p.KV.LostUpdates, p.KV.WatchSeen)
	})
	each("kv", "watch probe ms p50/max", func(p *phaseFigures) any {
		return fmt.Sprintf("%.0f/%.0f (n=%d)", p.KV.Probes.P50, p.KV.Probes.Max, p.KV.Probes.N)
	})
	each("batch", "committed / unknown / failed", func(p *phaseFigures) any {
		return fmt.Sprintf("%d/%d/%d", p.Batch.Committed, p.Batch.Ambiguous, p.Batch.Failed)
	})
	each("batch", "stored whole / partial (must be 0)", func(p *phaseFigures) any {
		return fmt.Sprintf("%d/%d", p.Batch.StoredWhole, p.Batch.Partial)
	})
	each("cluster", "leader kill → first PubAck ms", func(p *phaseFigures) any {
		var v []string
		for _, k := range p.LeaderKills {
			v = append(v, fmt.Sprintf("%.0f", k.FirstAckMS))
		}
		if len(v) == 0 {
			return "-"
		}
		return strings.Join(v, ",")
	})
	fmt.Fprintf(&b, "\nrun: %s, seed %d, %.1f s, faults %v\n", fg.Run.Mode, fg.Run.Seed, fg.Run.DurationS, fg.Run.FaultsByType)
	rs := fg.Resources
	fmt.Fprintf(&b, "resources: module goroutines %d → %d; fds %d → %d; heap in use %.1f MiB after warm-up, peak %.1f, end %.1f\n",
		rs.GoroutinesBaseline, rs.GoroutinesFinal, rs.FDsBaseline, rs.FDsFinal, rs.HeapWarmMiB, rs.HeapPeakMiB, rs.HeapEndMiB)
	fmt.Fprintf(&b, "watchdog: %d calls watched, fired %d, worst return past deadline %.1f ms net of lag, %.1f ms raw (%s)\n",
		fg.Watchdog.Calls, len(fg.Watchdog.Fired), fg.Watchdog.MaxOverrunMS, fg.Watchdog.MaxRawMS, fg.Watchdog.MaxOverrunOf)
	fmt.Fprintf(&b, "scheduling lag: %.0f ms in total, %d wake-ups later than 50 ms, worst %.0f ms %v\n",
		fg.Lag.TotalMS, fg.Lag.Freezes, fg.Lag.MaxLagMS, fg.Lag.Worst)
	for _, p := range fg.Phases {
		for _, k := range p.KnownBugs {
			fmt.Fprintf(&b, "known bug (%s): %s\n", p.Name, k)
		}
	}
	b.WriteString("\noracle:\n")
	for _, c := range fg.Checks {
		res := "PASS"
		if !c.Pass {
			res = "FAIL"
		}
		fmt.Fprintf(&b, "  %2d %-4s %-8s %-42s %s\n", c.N, res, c.Phase, c.Name, c.Detail)
	}
	return b.String()
}
