package chaos

import (
	"context"
	"errors"
	"iter"
	"math/rand/v2"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/faultproxy"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/ordered"
	"github.com/natsio/natsio/pubwin"
	"github.com/natsio/natsio/pull"
)

// namedConn is one client connection of a phase.
type namedConn struct {
	name     string
	nc       *conn.Conn
	proxied  bool
	stats    conn.Stats // at the end of the phase
	closed   conn.Stats // after Close: every event delivered, none to come
	closeErr error
	closeDur time.Duration
}

// liveSet holds the phases still running, so that a failing test's cleanup
// can stop them. A phase leaves it once judged, so that its records and its
// closed connections can be collected before the heap check.
type liveSet struct {
	mu     sync.Mutex
	phases map[*phase]bool
}

func (l *liveSet) add(ph *phase) {
	l.mu.Lock()
	if l.phases == nil {
		l.phases = map[*phase]bool{}
	}
	l.phases[ph] = true
	l.mu.Unlock()
}

func (l *liveSet) remove(ph *phase) {
	l.mu.Lock()
	delete(l.phases, ph)
	l.mu.Unlock()
}

// stopAll stops every live phase: workloads, windows, connections.
func (l *liveSet) stopAll() {
	l.mu.Lock()
	phases := make([]*phase, 0, len(l.phases))
	for ph := range l.phases {
		phases = append(phases, ph)
	}
	l.phases = nil
	l.mu.Unlock()
	for _, ph := range phases {
		ph.stopAll()
		if ph.p2 != nil && ph.p2.win != nil {
			_ = ph.p2.win.Close()
		}
		for _, c := range ph.conns {
			_ = c.nc.Close()
		}
	}
}

// phase is one environment (a single server behind the fault proxy, or a
// 3-node cluster) with every workload running against it.
type phase struct {
	name string
	t    *testing.T
	cfg  *config
	rec  *recorder
	wd   *watchdog
	rng  *rand.Rand

	srv       *natstest.Server
	proxy     *faultproxy.Proxy
	cl        *natstest.Cluster
	replicas  int
	clientURL string // what the workloads dial
	adminURL  string // the harness's own connections: never through the proxy

	conns []*namedConn
	admin *conn.Conn
	ajs   *jsapi.JS

	p1 *p1w
	p2 *p2w
	c1 *c1w
	c2 *c2w
	r1 *r1w
	k1 *k1w
	b1 *b1w
	f1 *f1w

	maxAcked atomic.Uint64 // highest stream sequence acknowledged by P1/P2

	stopPub    chan struct{}
	abandon    chan struct{}
	consCtx    context.Context
	consCancel context.CancelFunc

	began      time.Duration // phase start (recorder time)
	faultsFrom time.Duration // end of the warm-up
	pubStopAt  time.Duration
	quiesced   time.Duration
	stall      []stallDetect
	final      *finalState
	leaderKill []leaderKill
	torn       bool
	kvLost     int
	known      []string // known bugs (client or server) seen, reported without failing
}

type stallDetect struct {
	Conn     string  `json:"conn"`
	Fault    int     `json:"fault"`
	Detected bool    `json:"detected"`
	Reason   string  `json:"reason"`
	AfterMS  float64 `json:"after_ms"` // net of scheduling lag
	RawMS    float64 `json:"raw_ms"`
}

type leaderKill struct {
	Fault       int     `json:"fault"`
	Server      string  `json:"server"`
	FirstAckMS  float64 `json:"first_puback_after_kill_ms"`
	RestartTook float64 `json:"restart_ms"`
	DownAfterMS float64 `json:"leader_down_after_ms"` // Shutdown returned
	downAt      time.Duration
	NewLeader   string `json:"new_leader"`
}

func (ph *phase) track(src string) *pubTrack {
	switch src {
	case "p1":
		return ph.p1.trk
	case "p2":
		return ph.p2.trk
	}
	return nil
}

func (ph *phase) noteAck(seq uint64) {
	for {
		cur := ph.maxAcked.Load()
		if seq <= cur || ph.maxAcked.CompareAndSwap(cur, seq) {
			return
		}
	}
}

func hostPort(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Host
}

// ---- environments ----

func newSinglePhase(t *testing.T, cfg *config, rec *recorder, wd *watchdog, live *liveSet) *phase {
	ph := &phase{name: "single", t: t, cfg: cfg, rec: rec, wd: wd, replicas: 1,
		rng: rand.New(rand.NewPCG(cfg.seed, 1))}
	live.add(ph)
	ph.began = rec.now()
	ph.srv = natstest.NewServer(t, natstest.LameDuckDuration(cfg.lameDuck, 200*time.Millisecond))
	p, err := faultproxy.New(hostPort(ph.srv.URL()))
	if err != nil {
		t.Fatalf("fault proxy: %v", err)
	}
	ph.proxy = p
	t.Cleanup(func() { p.Close() })
	ph.clientURL, ph.adminURL = p.URL(), ph.srv.URL()
	rec.event(ph.name, "harness", "phase start", "server "+ph.srv.URL()+" proxy "+p.URL())
	return ph
}

func newClusterPhase(t *testing.T, cfg *config, rec *recorder, wd *watchdog, live *liveSet) *phase {
	ph := &phase{name: "cluster", t: t, cfg: cfg, rec: rec, wd: wd, replicas: 3,
		rng: rand.New(rand.NewPCG(cfg.seed, 2))}
	live.add(ph)
	ph.began = rec.now()
	end := wd.begin("StartCluster", time.Now().Add(60*time.Second))
	ph.cl = natstest.NewCluster(t, 3, natstest.LameDuckDuration(cfg.lameDuck, 200*time.Millisecond))
	end()
	ph.clientURL, ph.adminURL = ph.cl.URL(), ph.cl.URL()
	rec.event(ph.name, "harness", "phase start", "cluster formed in "+(rec.now()-ph.began).Round(time.Millisecond).String())
	t.Logf("%8s  cluster of 3 formed in %v", fmtDur(rec.now()), (rec.now() - ph.began).Round(time.Millisecond))
	return ph
}

// connect opens a client connection; proxied ones go through the fault
// proxy in the single-server phase.
func (ph *phase) connect(name string, proxied bool) *conn.Conn {
	url := ph.adminURL
	if proxied {
		url = ph.clientURL
	}
	cfg := ph.cfg
	opts := []conn.Option{
		conn.Name("chaos-" + ph.name + "-" + name),
		conn.PingInterval(cfg.ping), conn.MaxPingsOutstanding(cfg.pingsOut),
		conn.ReconnectBackoff(cfg.reconnectBase, cfg.reconnectMax), conn.ReconnectJitter(50 * time.Millisecond),
		conn.ConnectTimeout(2 * time.Second),
		conn.OnEvent(func(ev conn.Event) {
			detail := classify(ev.Err)
			if ev.Err == nil {
				detail = ev.Server
			}
			ph.rec.event(ph.name, name, ev.Kind.String(), detail)
		}),
	}
	ctx, end := ph.wd.ctx(context.Background(), "conn.Connect "+name, 20*time.Second)
	nc, err := conn.Connect(ctx, url, opts...)
	end()
	if err != nil {
		ph.t.Fatalf("%s: connect %s: %v", ph.name, name, err)
	}
	ph.conns = append(ph.conns, &namedConn{name: name, nc: nc, proxied: proxied && ph.proxy != nil})
	return nc
}

func (ph *phase) js(nc *conn.Conn) *jsapi.JS {
	js, err := jsapi.New(nc)
	if err != nil {
		ph.t.Fatalf("jsapi.New: %v", err)
	}
	return js
}

// adminDo retries an administrative call until it succeeds or d passes.
func (ph *phase) adminDo(what string, d time.Duration, f func(ctx context.Context) error) error {
	deadline := time.Now().Add(d)
	for {
		ctx, end := ph.wd.ctx(context.Background(), "admin "+what, 5*time.Second)
		err := f(ctx)
		end()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// setup creates the streams, the bucket and the connections, and starts
// every workload.
func (ph *phase) setup() {
	t, cfg := ph.t, ph.cfg
	ph.admin = ph.connect("admin", false)
	ph.ajs = ph.js(ph.admin)
	r := ph.replicas
	mustDo := func(what string, f func(ctx context.Context) error) {
		if err := ph.adminDo(what, 30*time.Second, f); err != nil {
			t.Fatalf("%s: %s: %v", ph.name, what, err)
		}
	}
	mustDo("create "+streamMain, func(ctx context.Context) error {
		_, err := ph.ajs.CreateStream(ctx, jsapi.StreamConfig{Name: streamMain, Subjects: []string{subjP1, subjP2},
			Storage: jsapi.StorageFile, Replicas: r, DuplicateWindow: 5 * time.Minute, AllowDirect: true})
		return err
	})
	mustDo("create "+streamBatch, func(ctx context.Context) error {
		_, err := ph.ajs.CreateStream(ctx, jsapi.StreamConfig{Name: streamBatch, Subjects: []string{"chaosb.>"},
			Storage: jsapi.StorageFile, Replicas: r, AllowAtomicPublish: true, AllowDirect: true})
		return err
	})
	mustDo("create "+streamFast, func(ctx context.Context) error {
		_, err := ph.ajs.CreateStream(ctx, jsapi.StreamConfig{Name: streamFast, Subjects: []string{"chaosf.>"},
			Storage: jsapi.StorageFile, Replicas: r, AllowBatchPublish: true})
		return err
	})

	data := make([]byte, cfg.payload)
	for i := range data {
		data[i] = 'a' + byte(i%26)
	}

	// Workload connections.
	ph.p1 = &p1w{ph: ph, trk: &pubTrack{src: "p1"}, data: data, done: make(chan struct{})}
	ph.p1.js = ph.js(ph.connect("p1", true))
	ph.p2 = &p2w{ph: ph, trk: &pubTrack{src: "p2"}, data: data, futures: make(chan p2item, 2*cfg.window),
		pubDone: make(chan struct{}), waitDone: make(chan struct{})}
	ph.p2.js = ph.js(ph.connect("p2", true))
	win, err := pubwin.New(ph.p2.js, pubwin.MaxPending(cfg.window), pubwin.AckTimeout(cfg.p2AckTimeout))
	if err != nil {
		t.Fatalf("pubwin.New: %v", err)
	}
	ph.p2.win = win

	ph.c1 = &c1w{ph: ph, done: make(chan struct{})}
	ph.c1.js = ph.js(ph.connect("c1", true))
	ph.c2 = &c2w{ph: ph, done: make(chan struct{})}
	ph.c2.js = ph.js(ph.connect("c2", true))
	// C2 takes its messages lent (Borrowed): the faults then also test
	// that a lent message is never overwritten while its loop body runs
	// (a corrupted header would be an unknown message ID, a corrupted
	// reply subject a metadata anomaly).
	mustDo("ordered consumer C2", func(ctx context.Context) (err error) {
		ph.c2.oc, err = ordered.New(ctx, ph.c2.js, streamMain, ordered.Config{NamePrefix: "C2_"})
		return err
	})
	ph.c2.opts = []ordered.Opt{ordered.Heartbeat(cfg.c2HB), ordered.MaxMessages(256),
		ordered.OnReset(ph.c2.onReset), ordered.Borrowed()}

	ph.r1 = &r1w{ph: ph, req: ph.connect("req", true), svc: ph.connect("svc", true)}
	ph.k1 = &k1w{ph: ph, watchTerm: make(chan error, 4), upDone: make(chan struct{}), watchDone: make(chan struct{})}
	ph.k1.js = ph.js(ph.connect("kv", true))
	ph.b1 = &b1w{ph: ph, data: data, attempts: map[string]uint8{}, done: make(chan struct{})}
	ph.b1.js = ph.js(ph.connect("b1", true))
	ph.f1 = &f1w{ph: ph, data: data, batches: map[string]fastRec{}, done: make(chan struct{})}
	ph.f1.js = ph.js(ph.connect("f1", true))

	mustDo("create bucket", func(ctx context.Context) error {
		_, err := kv.CreateBucket(ctx, ph.ajs, ph.k1.kvConfig())
		return err
	})
	var b *kv.Bucket
	mustDo("bind bucket", func(ctx context.Context) (err error) {
		b, err = kv.Bind(ctx, ph.k1.js, bucketKV)
		return err
	})
	ph.k1.newEpoch(b)
	var cons *pull.Consumer
	mustDo("create C1", func(ctx context.Context) (err error) {
		info, err := ph.c1.js.CreateOrUpdateConsumer(ctx, streamMain, ph.c1.config(1))
		if err != nil {
			return err
		}
		cons, err = pull.FromInfo(ph.c1.js, info)
		return err
	})
	sub, err := ph.r1.serve()
	if err != nil {
		t.Fatalf("echo service: %v", err)
	}
	mustDo("flush svc", func(ctx context.Context) error { return ph.r1.svc.Flush(ctx) })
	_ = sub

	// Go.
	ph.stopPub, ph.abandon = make(chan struct{}), make(chan struct{})
	ph.consCtx, ph.consCancel = context.WithCancel(context.Background())
	now := time.Now().UnixNano()
	ph.c1.lastDelivery.Store(now)
	ph.c2.lastDelivery.Store(now)
	go ph.c1.run(ph.consCtx, cons)
	go ph.c2.run(ph.consCtx)
	go ph.k1.watcher(ph.consCtx)
	go ph.p1.run(ph.stopPub, ph.abandon)
	go ph.p2.publisher(ph.stopPub, ph.abandon)
	go ph.p2.waiter(ph.abandon)
	go ph.k1.updater(ph.stopPub)
	go ph.b1.run(ph.stopPub)
	go ph.f1.run(ph.stopPub)
	ph.r1.start(ph.stopPub)
	ph.wd.watch(ph.name+" C1 progress", cfg.progressLimit, func() (time.Time, bool) {
		return time.Unix(0, ph.c1.lastDelivery.Load()), ph.c1.floorSeen() < ph.maxAcked.Load()
	})
	ph.wd.watch(ph.name+" C2 progress", cfg.progressLimit, func() (time.Time, bool) {
		return time.Unix(0, ph.c2.lastDelivery.Load()), ph.c2.lastSeq.Load() < ph.maxAcked.Load()
	})
	ph.rec.event(ph.name, "harness", "workloads started", "")
}

// stopAll ends every workload at once (a failed test's cleanup).
func (ph *phase) stopAll() {
	if ph.stopPub != nil && !closed(ph.stopPub) {
		close(ph.stopPub)
	}
	if ph.abandon != nil && !closed(ph.abandon) {
		close(ph.abandon)
	}
	if ph.consCancel != nil {
		ph.consCancel()
	}
	if ph.k1 != nil {
		ph.k1.unpause()
	}
}

// waitDone waits for ch, watched with deadline d.
func (ph *phase) waitDone(what string, ch <-chan struct{}, d time.Duration) bool {
	end := ph.wd.begin(what, time.Now().Add(d))
	defer end()
	t := time.NewTimer(d + ph.cfg.grace + time.Second)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// quiesce stops the publishers (letting them finish their retries), then
// waits until the consumers have drained the streams.
func (ph *phase) quiesce() {
	cfg, rec := ph.cfg, ph.rec
	ph.pubStopAt = rec.now()
	rec.event(ph.name, "harness", "quiesce", "publishers stop")
	close(ph.stopPub)
	ph.k1.unpause()
	retryBudget := cfg.quiesce / 2
	allPub := make(chan struct{})
	go func() {
		<-ph.p1.done
		<-ph.p2.pubDone
		<-ph.p2.waitDone
		<-ph.b1.done
		<-ph.f1.done
		<-ph.k1.upDone
		close(allPub)
	}()
	if !sleepOrDone(retryBudget, allPub) {
		rec.event(ph.name, "harness", "quiesce", "abandoning the last retries")
	}
	close(ph.abandon)
	ph.waitDone(ph.name+" publishers end", allPub, cfg.p2AckTimeout+10*time.Second)
	ph.r1.wg.Wait()
	ph.p2.finish()

	// Drain: C1 has nothing pending or unacknowledged, C2 and the watch
	// caught up.
	st, _ := ph.streamInfo(streamMain)
	var last uint64
	if st != nil {
		last = st.State.LastSeq
	}
	deadline := time.Now().Add(max(cfg.quiesce-retryBudget, 10*time.Second))
	for {
		ci, err := ph.consumerInfo()
		c1ok := err == nil && ci.NumPending == 0 && ci.NumAckPending == 0 && ph.c1.floorSeen() >= last
		c2ok := ph.c2.lastSeq.Load() >= last
		kok := ph.k1.caughtUp()
		if (c1ok && c2ok && kok) || time.Now().After(deadline) {
			if !(c1ok && c2ok && kok) {
				rec.event(ph.name, "harness", "quiesce", "drain incomplete")
				ph.t.Logf("%s: drain incomplete: C1 ok=%v (%+v, err %v, floor %d), C2 ok=%v (last %d), K1 watch ok=%v, stream last %d",
					ph.name, c1ok, ci, err, ph.c1.floorSeen(), c2ok, ph.c2.lastSeq.Load(), kok, last)
			}
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	ph.wd.unwatch(ph.name + " C1 progress")
	ph.wd.unwatch(ph.name + " C2 progress")
	ph.consCancel()
	ph.waitDone(ph.name+" C1 end", ph.c1.done, 10*time.Second)
	ph.waitDone(ph.name+" C2 end", ph.c2.done, 10*time.Second)
	ph.waitDone(ph.name+" K1 watch end", ph.k1.watchDone, 10*time.Second)
	ph.quiesced = rec.now()
}

func sleepOrDone(d time.Duration, ch <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

func (ph *phase) streamInfo(name string) (*jsapi.StreamInfo, error) {
	var info *jsapi.StreamInfo
	err := ph.adminDo("stream info", 10*time.Second, func(ctx context.Context) error {
		s, err := ph.ajs.Stream(ctx, name)
		if err == nil {
			info = s.CachedInfo()
		}
		return err
	})
	return info, err
}

// orderedRead reads stream through in order (the final replays).
func (ph *phase) orderedRead(ctx context.Context, js *jsapi.JS, stream string) iter.Seq2[*jsapi.Msg, error] {
	return func(yield func(*jsapi.Msg, error) bool) {
		oc, err := ordered.New(ctx, js, stream, ordered.Config{})
		if err != nil {
			yield(nil, err)
			return
		}
		for m, err := range oc.Messages(ctx, ordered.UntilDrained(), ordered.Heartbeat(time.Second), ordered.MaxMessages(1000)) {
			if !yield(m, err) || err != nil {
				return
			}
		}
	}
}

func (ph *phase) consumerInfo() (*jsapi.ConsumerInfo, error) {
	ctx, end := ph.wd.ctx(context.Background(), "admin consumer info", 5*time.Second)
	defer end()
	return ph.ajs.Consumer(ctx, streamMain, consumerC1)
}

func (c *c1w) floorSeen() uint64 { return c.floorA.Load() }

func (k *k1w) caughtUp() bool {
	k.mu.Lock()
	keys := append([]keyState(nil), k.keys...)
	k.mu.Unlock()
	k.watchMu.Lock()
	defer k.watchMu.Unlock()
	for i, st := range keys {
		if st.rev > 0 && k.watchLast[keyName(i)].rev < st.rev {
			return false
		}
	}
	return true
}

// ---- the final state, read on a fresh connection without faults ----

type finalState struct {
	info      *jsapi.StreamInfo
	ids       map[uint64]string // stream sequence → Msg-Id
	readCount int
	readErr   error
	seqAnoms  []string
	spotBad   []string
	spotN     int
	batches   map[string][]int // batch id → indexes stored
	fast      map[string][]int // fast batch id → indexes stored, in stream order
	fastErr   string
	batchInfo *jsapi.StreamInfo
	kvFinal   map[string]*kv.Entry
	kvErrs    []string
	readTook  time.Duration
}

func (ph *phase) finalRead() *finalState {
	t := ph.t
	fs := &finalState{ids: map[uint64]string{}, batches: map[string][]int{}, fast: map[string][]int{}, kvFinal: map[string]*kv.Entry{}}
	start := time.Now()
	vc := ph.connect("verify", false)
	js := ph.js(vc)
	var err error
	if fs.info, err = ph.streamInfo(streamMain); err != nil {
		t.Errorf("%s: final stream info: %v", ph.name, err)
		return fs
	}
	// Ordered replay of the whole stream.
	ctx, end := ph.wd.ctx(context.Background(), "final ordered replay", 120*time.Second)
	var prev uint64
	for m, err := range ph.orderedRead(ctx, js, streamMain) {
		if err != nil {
			fs.readErr = err
			break
		}
		md, err := m.Metadata()
		if err != nil {
			fs.seqAnoms = append(fs.seqAnoms, "metadata: "+err.Error())
			continue
		}
		if prev != 0 && md.StreamSeq != prev+1 && len(fs.seqAnoms) < 20 {
			fs.seqAnoms = append(fs.seqAnoms, "replay: seq "+u64(md.StreamSeq)+" after "+u64(prev))
		}
		prev = md.StreamSeq
		fs.ids[md.StreamSeq] = m.Header.Get(jsapi.HeaderMsgID)
		fs.readCount++
	}
	end()
	if uint64(fs.readCount) != fs.info.State.Msgs {
		fs.seqAnoms = append(fs.seqAnoms, "replay read "+itoa(fs.readCount)+" messages, the stream holds "+u64(fs.info.State.Msgs))
	}
	// Spot checks through Direct Get, another read path.
	var st *jsapi.Stream
	_ = ph.adminDo("stream handle", 10*time.Second, func(ctx context.Context) (err error) {
		st, err = js.Stream(ctx, streamMain)
		return err
	})
	if st != nil && fs.info.State.LastSeq > 0 {
		for i := 0; i < 100; i++ {
			seq := fs.info.State.FirstSeq + uint64(ph.rng.Int64N(int64(fs.info.State.LastSeq-fs.info.State.FirstSeq+1)))
			ctx, end := ph.wd.ctx(context.Background(), "final GetMsg", 5*time.Second)
			sm, err := st.GetMsg(ctx, seq)
			end()
			fs.spotN++
			switch {
			case err != nil:
				fs.spotBad = append(fs.spotBad, "get "+u64(seq)+": "+err.Error())
			case sm.Header.Get(jsapi.HeaderMsgID) != fs.ids[seq]:
				fs.spotBad = append(fs.spotBad, "seq "+u64(seq)+": direct get "+sm.Header.Get(jsapi.HeaderMsgID)+", replay "+fs.ids[seq])
			}
		}
	}
	// The batch stream.
	fs.batchInfo, _ = ph.streamInfo(streamBatch)
	ctx, end = ph.wd.ctx(context.Background(), "final batch replay", 60*time.Second)
	for m, err := range ph.orderedRead(ctx, js, streamBatch) {
		if err != nil {
			fs.seqAnoms = append(fs.seqAnoms, "batch replay: "+err.Error())
			break
		}
		id := m.Header.Get(hdrBatch)
		idx, _ := atoiSafe(m.Header.Get(hdrBatchIdx))
		fs.batches[id] = append(fs.batches[id], idx)
	}
	end()
	// The fast-batch stream.
	ctx, end = ph.wd.ctx(context.Background(), "final fast-batch replay", 60*time.Second)
	for m, err := range ph.orderedRead(ctx, js, streamFast) {
		if err != nil {
			fs.fastErr = err.Error()
			break
		}
		id := m.Header.Get(hdrFast)
		idx, _ := atoiSafe(m.Header.Get(hdrBatchIdx))
		fs.fast[id] = append(fs.fast[id], idx)
	}
	end()
	// The bucket.
	var b *kv.Bucket
	if err := ph.adminDo("bind bucket", 10*time.Second, func(ctx context.Context) (err error) {
		b, err = kv.Bind(ctx, js, bucketKV)
		return err
	}); err != nil {
		fs.kvErrs = append(fs.kvErrs, "bind: "+err.Error())
	} else {
		for i := 0; i < ph.cfg.keys; i++ {
			key := keyName(i)
			var e *kv.Entry
			err := ph.adminDo("kv get", 10*time.Second, func(ctx context.Context) (err error) {
				e, err = b.Get(ctx, key)
				if errors.Is(err, kv.ErrKeyNotFound) {
					return nil
				}
				return err
			})
			if err != nil {
				fs.kvErrs = append(fs.kvErrs, key+": "+err.Error())
				continue
			}
			fs.kvFinal[key] = e
		}
	}
	fs.readTook = time.Since(start)
	return fs
}

func atoiSafe(s string) (int, bool) {
	n := 0
	if s == "" {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// teardown closes every connection (measuring Close) and stops the servers.
func (ph *phase) teardown() {
	if ph.torn {
		return
	}
	ph.torn = true
	ph.stopAll()
	ph.p2.pendingAfter = ph.p2.win.Pending()
	_ = ph.p2.win.Close()
	ph.p2.winStats = ph.p2.win.Stats()
	for _, c := range ph.conns {
		c.stats = c.nc.Stats()
		start := time.Now()
		end := ph.wd.begin("conn.Close "+c.name, start.Add(5*time.Second))
		c.closeErr = c.nc.Close()
		end()
		c.closed = c.nc.Stats()
		c.closeDur = time.Since(start)
	}
	if ph.proxy != nil {
		end := ph.wd.begin("proxy.Close", time.Now().Add(5*time.Second))
		ph.proxy.Close()
		end()
	}
	end := ph.wd.begin("servers shutdown", time.Now().Add(30*time.Second))
	if ph.srv != nil {
		ph.srv.Shutdown()
	}
	if ph.cl != nil {
		for i := range ph.cl.Nodes() {
			ph.cl.Kill(i)
		}
	}
	end()
	ph.rec.event(ph.name, "harness", "phase end", "")
}
