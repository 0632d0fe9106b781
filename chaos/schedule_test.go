package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/ordered"
)

// Fault kinds (RELIABILITY.md §d.3).
const (
	fRestart     = "restart"
	fCut         = "proxy cut"
	fStall       = "stall"
	fThrottle    = "throttle"
	fChunk       = "chunk(1)"
	fLameDuck    = "lame duck"
	fCorrupt     = "corrupt"
	fDelConsumer = "delete consumer"
	fDelKV       = "delete kv stream"
	fKillLeader  = "kill leader"
	fQuorum      = "quorum loss"
	fStepDown    = "step-down"
)

// repeating are the single-server faults drawn again and again.
var repeating = []string{fRestart, fCut, fStall, fThrottle, fChunk, fLameDuck, fCorrupt}

// plannedFault is one entry of the seeded schedule: wait gap after the end
// of the previous fault, then inject kind.
type plannedFault struct {
	kind string
	gap  time.Duration
}

func (c *config) estimate(kind string) time.Duration {
	switch kind {
	case fStall:
		return c.stall
	case fThrottle:
		return c.throttle
	case fChunk:
		return c.chunk
	case fLameDuck:
		return c.lameDuck + 500*time.Millisecond
	case fKillLeader, fQuorum:
		return c.leaderDown + 2*time.Second
	}
	return 300 * time.Millisecond
}

func randDur(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(rng.Int64N(int64(hi-lo)))
}

// planSingle draws the single-server schedule. The short run injects every
// repeating fault once, in a seeded order, with the consumer deletion in
// the middle and the bucket deletion last; the soak draws rounds of every
// fault type in random order for its time budget, deleting the consumer
// once at half time and the bucket once near the end.
func planSingle(c *config, rng *rand.Rand) []plannedFault {
	var kinds []string
	if !c.soak {
		for range c.faultsPerType {
			kinds = append(kinds, repeating...)
		}
		rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
		mid := len(kinds) / 2
		kinds = append(kinds[:mid], append([]string{fDelConsumer}, kinds[mid:]...)...)
		kinds = append(kinds, fDelKV)
		plan := make([]plannedFault, len(kinds))
		for i, k := range kinds {
			plan[i] = plannedFault{kind: k, gap: randDur(rng, c.gapMin, c.gapMax)}
		}
		return plan
	}
	var plan []plannedFault
	var at time.Duration
	delC, delKV := false, false
	// Faults are drawn from shuffled bags of every type, so each round
	// injects every type once in a random order.
	var bag []string
	draw := func() string {
		if len(bag) == 0 {
			bag = append([]string(nil), repeating...)
			rng.Shuffle(len(bag), func(i, j int) { bag[i], bag[j] = bag[j], bag[i] })
		}
		k := bag[0]
		bag = bag[1:]
		return k
	}
	for {
		gap := randDur(rng, c.gapMin, c.gapMax)
		kind := draw()
		switch {
		case !delC && at >= c.single/2:
			kind, delC = fDelConsumer, true
		case !delKV && at >= c.single*85/100:
			kind, delKV = fDelKV, true
		}
		if at+gap+c.estimate(kind) > c.single && delKV && kind != fDelKV && kind != fDelConsumer {
			break
		}
		plan = append(plan, plannedFault{kind: kind, gap: gap})
		at += gap + c.estimate(kind)
	}
	return plan
}

// planCluster draws the cluster schedule: leader kills (restarted after
// leaderDown), once a lost quorum (2 of 3 down), once a step-down.
func planCluster(c *config, rng *rand.Rand) []plannedFault {
	if !c.soak {
		kinds := []string{fKillLeader, fStepDown}
		if c.quorumLoss {
			kinds = []string{fKillLeader, fQuorum, fStepDown}
		}
		var plan []plannedFault
		for _, k := range kinds {
			plan = append(plan, plannedFault{kind: k, gap: randDur(rng, c.clGapMin, c.clGapMax)})
		}
		return plan
	}
	var plan []plannedFault
	var at time.Duration
	quorum, step := !c.quorumLoss, false
	stepAt := c.cluster/4 + time.Duration(rng.Int64N(int64(c.cluster/2)))
	for {
		gap := randDur(rng, c.clGapMin, c.clGapMax)
		kind := fKillLeader
		switch {
		case !quorum && at >= c.cluster/2:
			kind, quorum = fQuorum, true
		case !step && at >= stepAt:
			kind, step = fStepDown, true
		}
		if at+gap+c.estimate(kind) > c.cluster && len(plan) > 0 && quorum && step {
			break
		}
		if at+gap+c.estimate(kind) > c.cluster+c.clGapMax {
			break
		}
		plan = append(plan, plannedFault{kind: kind, gap: gap})
		at += gap + c.estimate(kind)
	}
	return plan
}

func describePlan(plan []plannedFault) string {
	var parts []string
	for _, p := range plan {
		parts = append(parts, fmt.Sprintf("+%.1fs %s", p.gap.Seconds(), p.kind))
	}
	return strings.Join(parts, ", ")
}

// runSchedule injects the planned faults on the test goroutine (server
// restarts may call t.Fatal). After each disruptive fault the KV watch is
// probed: a put made after the fault must be seen.
func (ph *phase) runSchedule(plan []plannedFault, budget time.Duration) {
	start := time.Now()
	for i, pf := range plan {
		if ph.t.Failed() && !ph.cfg.soak {
			ph.t.Logf("%s: test already failing, skipping the rest of the schedule", ph.name)
			return
		}
		mandatory := pf.kind == fDelConsumer || pf.kind == fDelKV || pf.kind == fQuorum || pf.kind == fStepDown
		if ph.cfg.soak && time.Since(start)+pf.gap > budget && !mandatory {
			continue
		}
		time.Sleep(pf.gap)
		f := ph.inject(i, pf.kind)
		if f != nil && f.Disruptive && pf.kind != fDelKV {
			limit, promised := ph.cfg.probeLimit, time.Duration(0)
			if pf.kind == fKillLeader || pf.kind == fQuorum {
				// The watch's consumer may have lived on the dead node:
				// nothing tells the client but missing heartbeats, and the
				// kv watch uses the ordered consumer's default heartbeat
				// (5 s). pull.Messages notices silence within 2¼
				// heartbeats (TestPullHeartbeatBound).
				slack := ph.cfg.probeLimit / 5
				promised = 2*ordered.DefaultHeartbeat + ordered.DefaultHeartbeat/4 + slack
				limit = max(limit, promised)
			}
			ph.k1.probe(fmt.Sprintf("fault #%d %s", f.N, f.Kind), limit, promised)
		}
	}
}

func (ph *phase) inject(i int, kind string) *fault {
	cfg, rec, p := ph.cfg, ph.rec, ph.proxy
	switch kind {
	case fRestart:
		f := rec.beginFault(ph.name, kind, "server shutdown + restart, same port and store", true, "disconnected")
		end := ph.wd.begin("Server.Restart", time.Now().Add(30*time.Second))
		if err := ph.srv.Restart(); err != nil {
			ph.t.Fatal(err)
		}
		end()
		rec.endFault(f, "")
		return f

	case fCut:
		f := rec.beginFault(ph.name, kind, fmt.Sprintf("RST on %d proxied connections", p.Conns()), true, "disconnected")
		p.CutAll()
		rec.endFault(f, "")
		return f

	case fStall:
		f := rec.beginFault(ph.name, kind, fmt.Sprintf("black hole both ways for %v", cfg.stall), true, "disconnected")
		connected := map[string]bool{}
		for _, c := range ph.conns {
			if c.proxied && c.nc.IsConnected() {
				connected[c.name] = true
			}
		}
		p.Stall(faultproxy.Up, true)
		p.Stall(faultproxy.Down, true)
		time.Sleep(cfg.stall)
		p.Stall(faultproxy.Up, false)
		p.Stall(faultproxy.Down, false)
		rec.endFault(f, "")
		ph.measureStall(f, connected)
		return f

	case fThrottle:
		f := rec.beginFault(ph.name, kind, fmt.Sprintf("%d B/s each way for %v", cfg.throttleRate, cfg.throttle), false, "")
		p.Throttle(faultproxy.Up, cfg.throttleRate)
		p.Throttle(faultproxy.Down, cfg.throttleRate)
		time.Sleep(cfg.throttle)
		p.Throttle(faultproxy.Up, 0)
		p.Throttle(faultproxy.Down, 0)
		rec.endFault(f, "")
		return f

	case fChunk:
		f := rec.beginFault(ph.name, kind, fmt.Sprintf("one-byte writes both ways for %v", cfg.chunk), false, "")
		p.Chunk(faultproxy.Up, 1)
		p.Chunk(faultproxy.Down, 1)
		time.Sleep(cfg.chunk)
		p.Chunk(faultproxy.Up, 0)
		p.Chunk(faultproxy.Down, 0)
		rec.endFault(f, "")
		return f

	case fLameDuck:
		f := rec.beginFault(ph.name, kind, fmt.Sprintf("lame duck %v, then restart", cfg.lameDuck), true, "lame duck")
		end := ph.wd.begin("Server.LameDuck", time.Now().Add(cfg.lameDuck+15*time.Second))
		<-ph.srv.LameDuck()
		end()
		end = ph.wd.begin("Server.Restart", time.Now().Add(30*time.Second))
		if err := ph.srv.Restart(); err != nil {
			ph.t.Fatal(err)
		}
		end()
		rec.endFault(f, "")
		return f

	case fCorrupt:
		f := rec.beginFault(ph.name, kind, "GARBAGE op injected before a server op", true, "protocol error")
		var fired atomic.Bool
		p.Corrupt(faultproxy.Down, func(b []byte) []byte {
			if fired.Load() || !opStart(b) || !fired.CompareAndSwap(false, true) {
				return b
			}
			return append([]byte("GARBAGE-CHAOS\r\n"), b...)
		})
		deadline := time.Now().Add(3 * time.Second)
		for !fired.Load() && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		p.Corrupt(faultproxy.Down, nil)
		rec.endFault(f, fmt.Sprintf("injected=%v", fired.Load()))
		return f

	case fDelConsumer:
		f := rec.beginFault(ph.name, kind, "DeleteConsumer C1 under its consume loop", true, "consumer terminal")
		before := ph.c1.recreations.Load()
		err := ph.adminDo("delete consumer", 10*time.Second, func(ctx context.Context) error {
			return ph.ajs.DeleteConsumer(ctx, streamMain, consumerC1)
		})
		deadline := time.Now().Add(20 * time.Second)
		for ph.c1.recreations.Load() == before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		rec.endFault(f, fmt.Sprintf("delete err=%v; recreated=%v", err, ph.c1.recreations.Load() > before))
		return f

	case fDelKV:
		f := rec.beginFault(ph.name, kind, "DeleteBucket under the watch, expect a terminal error, recreate", true, "watch terminal")
		k := ph.k1
		k.expectTerminal.Store(true)
		k.pause()
		for len(k.watchTerm) > 0 {
			<-k.watchTerm
		}
		starts := k.watchStarts.Load()
		err := ph.adminDo("delete bucket", 10*time.Second, func(ctx context.Context) error {
			return kv.DeleteBucket(ctx, ph.ajs, bucketKV)
		})
		var term error
		select {
		case term = <-k.watchTerm:
		case <-time.After(15 * time.Second):
		}
		if !errors.Is(term, kv.ErrBucketNotFound) {
			k.anomaly("K1 watch after bucket deletion ended with %v, want ErrBucketNotFound", term)
		}
		cerr := ph.adminDo("recreate bucket", 20*time.Second, func(ctx context.Context) error {
			_, err := kv.CreateBucket(ctx, ph.ajs, k.kvConfig())
			return err
		})
		var b *kv.Bucket
		berr := ph.adminDo("rebind bucket", 20*time.Second, func(ctx context.Context) (err error) {
			b, err = kv.Bind(ctx, k.js, bucketKV)
			return err
		})
		if berr == nil {
			k.newEpoch(b)
		}
		deadline := time.Now().Add(10 * time.Second)
		for k.watchStarts.Load() == starts && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		k.expectTerminal.Store(false)
		k.unpause()
		rec.endFault(f, fmt.Sprintf("delete err=%v; watch ended with %q; recreate err=%v; bind err=%v", err, classifyKV(term), cerr, berr))
		return f

	case fKillLeader:
		i, name := ph.streamLeader()
		f := rec.beginFault(ph.name, kind, "shutdown of stream leader "+name, true, "")
		ph.cl.Kill(i)
		downAt := rec.now()
		time.Sleep(cfg.leaderDown)
		rs := time.Now()
		end := ph.wd.begin("Cluster.Restart", time.Now().Add(60*time.Second))
		if err := ph.cl.Restart(i); err != nil {
			ph.t.Fatal(err)
		}
		end()
		_, nl := ph.streamLeader()
		rec.endFault(f, "restarted; new leader "+nl)
		ph.leaderKill = append(ph.leaderKill, leaderKill{Fault: f.N, Server: name, RestartTook: ms(time.Since(rs)), NewLeader: nl,
			downAt: downAt, DownAfterMS: ms(downAt - f.Start)})
		return f

	case fQuorum:
		i, name := ph.streamLeader()
		j := (i + 1) % len(ph.cl.Nodes())
		f := rec.beginFault(ph.name, kind, fmt.Sprintf("shutdown of 2 of 3: leader %s and %s", name, ph.serverName(j)), true, "")
		ph.cl.Kill(i)
		ph.cl.Kill(j)
		downAt := rec.now()
		time.Sleep(cfg.leaderDown)
		end := ph.wd.begin("Cluster.Restart x2", time.Now().Add(120*time.Second))
		if err := ph.cl.Restart(i); err != nil {
			ph.t.Fatal(err)
		}
		if err := ph.cl.Restart(j); err != nil {
			ph.t.Fatal(err)
		}
		end()
		_, nl := ph.streamLeader()
		rec.endFault(f, "restarted; new leader "+nl)
		ph.leaderKill = append(ph.leaderKill, leaderKill{Fault: f.N, Server: name, NewLeader: nl,
			downAt: downAt, DownAfterMS: ms(downAt - f.Start)})
		return f

	case fStepDown:
		_, name := ph.streamLeader()
		f := rec.beginFault(ph.name, kind, "stream leader step-down (no kill) from "+name, false, "")
		err := ph.adminDo("step-down", 10*time.Second, func(ctx context.Context) error {
			_, err := ph.admin.Request(ctx, "$JS.API.STREAM.LEADER.STEPDOWN."+streamMain, nil)
			return err
		})
		deadline := time.Now().Add(10 * time.Second)
		nl := name
		for nl == name && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			_, nl = ph.streamLeader()
		}
		rec.endFault(f, fmt.Sprintf("err=%v; new leader %s", err, nl))
		return f
	}
	ph.t.Fatalf("unknown fault %q", kind)
	return nil
}

func classifyKV(err error) string {
	if errors.Is(err, kv.ErrBucketNotFound) {
		return "bucket not found"
	}
	if err == nil {
		return "none"
	}
	return classify(err)
}

// opStart reports whether b starts with a server protocol operation, so
// that bytes injected before it land between two operations (never inside a
// payload, which no client could detect).
func opStart(b []byte) bool {
	for _, p := range [][]byte{[]byte("MSG "), []byte("HMSG "), []byte("PING\r\n"), []byte("PONG\r\n"), []byte("+OK\r\n")} {
		if bytes.HasPrefix(b, p) {
			return true
		}
	}
	return false
}

func (ph *phase) serverName(i int) string {
	if srv := ph.cl.Nodes()[i].Server(); srv != nil {
		return srv.Name()
	}
	return fmt.Sprintf("#%d", i)
}

// streamLeader returns the index and name of the main stream's leader,
// waiting for one.
func (ph *phase) streamLeader() (int, string) {
	end := ph.wd.begin("WaitStreamLeader", time.Now().Add(30*time.Second))
	l, err := ph.cl.WaitStreamLeader(streamMain)
	if err != nil {
		ph.t.Fatal(err)
	}
	end()
	for i, s := range ph.cl.Nodes() {
		if s == l {
			return i, ph.serverName(i)
		}
	}
	return 0, "?"
}

// measureStall finds, for each proxied connection that was up when the
// stall began, when it declared the link dead.
func (ph *phase) measureStall(f *fault, connected map[string]bool) {
	// Events are delivered asynchronously; give them a moment.
	time.Sleep(100 * time.Millisecond)
	evs := ph.rec.snapshotEvents(ph.name)
	for _, c := range ph.conns {
		if !connected[c.name] {
			continue
		}
		d := stallDetect{Conn: c.name, Fault: f.N}
		for _, e := range evs {
			if e.Source == c.name && e.Kind == conn.EventDisconnected.String() && e.At >= f.Start && e.At <= f.End+time.Second {
				d.Detected, d.Reason = true, e.Detail
				d.RawMS = ms(e.At - f.Start)
				d.AfterMS = ms(e.At - f.Start - (e.Lag - f.lagStart))
				break
			}
		}
		ph.stall = append(ph.stall, d)
	}
}
