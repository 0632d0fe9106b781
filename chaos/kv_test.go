package chaos

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
)

const (
	bucketKV = "chaoskv"
	probeKey = "probe"
)

// keyState is what K1 knows of one key in the current epoch (a bucket
// deleted and recreated starts a new epoch).
type keyState struct {
	rev     uint64 // revision of the last write known to have landed
	counter int    // its counter
	pending string // value of a write whose outcome is still unknown
}

type watchSeen struct {
	rev uint64
	val string
}

// ---- K1: CAS updates of 100 keys plus a WatchAll ----

type k1w struct {
	ph *phase
	js *jsapi.JS

	// gate: the scheduler pauses the updater around the bucket deletion.
	gateMu sync.Mutex
	paused bool
	resume chan struct{}
	inOp   sync.WaitGroup // the updater's operation in progress

	mu    sync.Mutex
	b     *kv.Bucket
	epoch int
	keys  []keyState
	next  int

	acked, conflicts, ambiguous   atomic.Int64
	landed, notLanded, unresolved atomic.Int64
	staleEpoch                    atomic.Int64
	errs                          counter
	anomsMu                       sync.Mutex
	anoms                         []string
	watchMu                       sync.Mutex
	watchLast                     map[string]watchSeen
	watchSeenN                    atomic.Int64
	watchStarts                   atomic.Int64
	watchOrderErrs                atomic.Int64
	watchTerm                     chan error
	watchTerms                    counter
	probeSeen                     atomic.Uint64
	probes                        series
	probeRes                      []probeResult
	probeFails                    []string
	known                         []string // known client bugs seen by the probes
	upDone, watchDone             chan struct{}
	unexpectedTerminal            atomic.Int64
	expectTerminal                atomic.Bool
}

func keyName(i int) string { return fmt.Sprintf("k%03d", i) }

func kvValue(epoch int, key string, counter int) string {
	return "e" + strconv.Itoa(epoch) + ":" + key + ":" + strconv.Itoa(counter)
}

// parseKV returns the epoch and counter of a K1 value.
func parseKV(v string) (epoch, counter int, ok bool) {
	parts := strings.Split(v, ":")
	if len(parts) != 3 || !strings.HasPrefix(parts[0], "e") {
		return 0, 0, false
	}
	e, err1 := strconv.Atoi(parts[0][1:])
	c, err2 := strconv.Atoi(parts[2])
	return e, c, err1 == nil && err2 == nil
}

func (k *k1w) anomaly(format string, args ...any) {
	k.anomsMu.Lock()
	if len(k.anoms) < 100 {
		k.anoms = append(k.anoms, fmt.Sprintf(format, args...))
	}
	k.anomsMu.Unlock()
}

func (k *k1w) kvConfig() kv.Config {
	return kv.Config{Bucket: bucketKV, Replicas: k.ph.replicas}
}

// newEpoch starts over on a (re)created bucket.
func (k *k1w) newEpoch(b *kv.Bucket) {
	k.mu.Lock()
	k.b = b
	k.epoch++
	k.keys = make([]keyState, k.ph.cfg.keys)
	k.next = 0
	k.mu.Unlock()
}

func (k *k1w) current() (*kv.Bucket, int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.b, k.epoch
}

func (k *k1w) pause() {
	k.gateMu.Lock()
	k.paused = true
	k.resume = make(chan struct{})
	k.gateMu.Unlock()
	k.inOp.Wait() // the operation in progress, if any

}

func (k *k1w) unpause() {
	k.gateMu.Lock()
	if k.paused {
		k.paused = false
		close(k.resume)
	}
	k.gateMu.Unlock()
}

func (k *k1w) updater(stop <-chan struct{}) {
	defer close(k.upDone)
	pace := newPacer(k.ph.cfg.kvRate)
	for !closed(stop) {
		pace.wait()
		k.gateMu.Lock()
		if k.paused {
			ch := k.resume
			k.gateMu.Unlock()
			select {
			case <-ch:
			case <-stop:
				return
			}
			continue
		}
		k.inOp.Add(1) // under gateMu: never after pause set paused
		k.gateMu.Unlock()
		k.step(stop)
		k.inOp.Done()
	}
}

func (k *k1w) step(stop <-chan struct{}) {
	ph := k.ph
	k.mu.Lock()
	b, epoch := k.b, k.epoch
	i := k.next
	k.next = (k.next + 1) % len(k.keys)
	st := k.keys[i] // the updater is the only writer of keys
	k.mu.Unlock()

	key := keyName(i)
	val := kvValue(epoch, key, st.counter+1)
	ctx, end := ph.wd.ctx(context.Background(), "K1 Update", ph.cfg.p1Timeout)
	var rev uint64
	var err error
	if st.rev == 0 {
		rev, err = b.Create(ctx, key, []byte(val))
	} else {
		rev, err = b.Update(ctx, key, []byte(val), st.rev)
	}
	end()
	if err == nil {
		k.acked.Add(1)
		st.rev, st.counter, st.pending = rev, st.counter+1, ""
		k.store(i, st)
		return
	}
	cl := classify(err)
	if errors.Is(err, kv.ErrRevisionMismatch) || errors.Is(err, kv.ErrKeyExists) {
		k.conflicts.Add(1)
		cl = "cas conflict"
	} else {
		k.ambiguous.Add(1)
	}
	k.errs.add(cl, 1)
	ph.rec.eventLimited(ph.name, "K1", "kv error", cl)
	st.pending = val
	st = k.resolve(b, epoch, key, st, stop)
	k.store(i, st)
}

func (k *k1w) store(i int, st keyState) {
	k.mu.Lock()
	if i < len(k.keys) {
		k.keys[i] = st
	}
	k.mu.Unlock()
}

// resolve finds out, by reading the key, whether the write of st.pending
// landed. A single writer per key and compare-and-set make the history
// linear: the key holds either the pending value or the last known one.
func (k *k1w) resolve(b *kv.Bucket, epoch int, key string, st keyState, stop <-chan struct{}) keyState {
	ph := k.ph
	for try := 0; try < 30 && !closed(stop); try++ {
		ctx, end := ph.wd.ctx(context.Background(), "K1 Get", ph.cfg.p1Timeout)
		e, err := b.Get(ctx, key)
		end()
		if err == nil {
			v := string(e.Value)
			ev, ec, ok := parseKV(v)
			switch {
			case v == st.pending:
				k.landed.Add(1)
				return keyState{rev: e.Revision, counter: st.counter + 1}
			case st.rev != 0 && e.Revision == st.rev:
				k.notLanded.Add(1)
				return st // may still land: the next attempt sorts it out
			case ok && ev < epoch:
				// A write of the previous bucket landed in this one.
				k.staleEpoch.Add(1)
				return keyState{rev: e.Revision, counter: st.counter, pending: st.pending}
			default:
				k.anomaly("K1 %s: read %q rev %d, expected rev %d (counter %d) or pending %q", key, v, e.Revision, st.rev, st.counter, st.pending)
				if ok {
					return keyState{rev: e.Revision, counter: ec}
				}
				return keyState{rev: e.Revision, counter: st.counter}
			}
		}
		if errors.Is(err, kv.ErrKeyNotFound) && st.rev == 0 {
			k.notLanded.Add(1)
			return st
		}
		sleepOr(100*time.Millisecond, stop)
	}
	k.unresolved.Add(1)
	return st
}

func (k *k1w) watcher(ctx context.Context) {
	defer close(k.watchDone)
	ph := k.ph
	for ctx.Err() == nil {
		b, epoch := k.current()
		k.watchStarts.Add(1)
		k.watchMu.Lock()
		k.watchLast = map[string]watchSeen{}
		k.watchMu.Unlock()
		k.probeSeen.Store(0)
		perKey := map[string]uint64{}
		var lastRev uint64
		var term error
		for e, err := range b.WatchAll(ctx) {
			if err != nil {
				term = err
				break
			}
			if e == nil {
				continue // end of the initial values
			}
			if e.Revision <= lastRev {
				k.watchOrderErrs.Add(1)
				k.anomaly("K1 watch: revision %d after %d", e.Revision, lastRev)
			}
			if e.Revision <= perKey[e.Key] {
				k.watchOrderErrs.Add(1)
				k.anomaly("K1 watch: key %s revision %d after %d", e.Key, e.Revision, perKey[e.Key])
			}
			lastRev = max(lastRev, e.Revision)
			perKey[e.Key] = max(perKey[e.Key], e.Revision)
			k.watchSeenN.Add(1)
			k.watchMu.Lock()
			k.watchLast[e.Key] = watchSeen{rev: e.Revision, val: string(e.Value)}
			k.watchMu.Unlock()
			if e.Key == probeKey {
				k.probeSeen.Store(e.Revision)
			}
		}
		if ctx.Err() != nil {
			return
		}
		cl := classify(term)
		if errors.Is(term, kv.ErrBucketNotFound) {
			cl = "bucket not found"
		}
		k.watchTerms.add(cl, 1)
		ph.rec.event(ph.name, "K1", "watch terminal", cl)
		if !k.expectTerminal.Load() {
			k.unexpectedTerminal.Add(1)
			k.anomaly("K1 watch ended with %v (%s) without a bucket deletion", term, cl)
		}
		select {
		case k.watchTerm <- term:
		default:
		}
		if errors.Is(term, conn.ErrClosed) {
			return
		}
		// Wait for the next epoch (the bucket recreated), or retry the
		// watch after a pause if the bucket was not deleted.
		for ctx.Err() == nil {
			if _, e := k.current(); e != epoch || !k.expectTerminal.Load() {
				break
			}
			sleepOr(20*time.Millisecond, ctx.Done())
		}
	}
}

// probeResult is one watch liveness probe.
type probeResult struct {
	After   string  `json:"after"`
	NetMS   float64 `json:"net_ms"`
	LimitMS float64 `json:"limit_ms"`
}

// probe puts the probe key and measures how long the watch takes to see it.
// Beyond limit the check fails; beyond promised (< limit) a known client bug
// is reported.
func (k *k1w) probe(after string, limit, promised time.Duration) {
	ph := k.ph
	b, _ := k.current()
	deadline := time.Now().Add(15 * time.Second)
	var rev uint64
	for {
		ctx, end := ph.wd.ctx(context.Background(), "K1 probe Put", ph.cfg.p1Timeout)
		r, err := b.Put(ctx, probeKey, []byte(after))
		end()
		if err == nil {
			rev = r
			break
		}
		if time.Now().After(deadline) {
			k.probeFails = append(k.probeFails, fmt.Sprintf("after %s: put failed for 15 s: %v", after, err))
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	start, lag0 := time.Now(), ph.wd.lag.total()
	net := func() time.Duration { return time.Since(start) - (ph.wd.lag.total() - lag0) }
	for net() < limit+5*time.Second && k.probeSeen.Load() < rev {
		time.Sleep(5 * time.Millisecond)
	}
	d := net()
	k.probes.add(d)
	k.probeRes = append(k.probeRes, probeResult{After: after, NetMS: ms(d), LimitMS: ms(limit)})
	if k.probeSeen.Load() < rev {
		k.probeFails = append(k.probeFails, fmt.Sprintf("after %s: put rev %d not seen by the watch within %v", after, rev, limit+5*time.Second))
	} else if d > limit {
		k.probeFails = append(k.probeFails, fmt.Sprintf("after %s: put seen by the watch after %v (limit %v)", after, d.Round(time.Millisecond), limit))
	} else if promised > 0 && d > promised {
		k.probeFails = append(k.probeFails, fmt.Sprintf("after %s: put seen by the watch after %v, beyond two heartbeats + slack (%v)",
			after, d.Round(time.Millisecond), promised))
	}
}
