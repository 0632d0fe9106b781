package chaos

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// defaultSeed is the schedule seed of the short run (deterministic: the same
// faults in the same order every time). The soak picks a fresh seed unless
// CHAOS_SEED is set.
const defaultSeed = 20260610

// config is the timeline, the load and the bounds of one run.
type config struct {
	soak    bool
	seconds int // SOAK_SECONDS, 0 in the short run
	race    bool
	seed    uint64

	// Timeline.
	warm          time.Duration // no faults, at the start of each phase
	single        time.Duration // single-server fault phase (soak: a time budget)
	cluster       time.Duration // cluster fault phase (soak: a time budget)
	withCluster   bool
	quorumLoss    bool
	gapMin        time.Duration // between two single-server faults
	gapMax        time.Duration
	clGapMin      time.Duration // between two cluster faults
	clGapMax      time.Duration
	stall         time.Duration
	throttle      time.Duration
	throttleRate  int
	chunk         time.Duration
	leaderDown    time.Duration
	lameDuck      time.Duration
	quiesce       time.Duration // publishers' last retries + consumers' drain
	faultsPerType int           // short run: each repeating fault this many times

	// Client settings.
	ping          time.Duration
	pingsOut      int
	reconnectBase time.Duration
	reconnectMax  time.Duration
	ackWait       time.Duration // C1
	c1HB          time.Duration
	c1Batch       int
	c2HB          time.Duration
	p1Timeout     time.Duration
	p2AckTimeout  time.Duration
	window        int
	reqTimeout    time.Duration
	requesters    int
	reqEvery      time.Duration
	p1Rate        float64 // logical messages per second
	p2Rate        float64
	kvRate        float64
	keys          int
	batchRate     float64
	batchSize     int
	payload       int

	// Oracle bounds.
	grace           time.Duration // watchdog: past a call's deadline
	reqOverrunLimit time.Duration // request returned after its deadline
	stallSlack      time.Duration // stall detection beyond ping×(maxOut+1)
	probeLimit      time.Duration // KV watch sees a put made after a fault
	progressLimit   time.Duration // consumer without a delivery while behind
	redelivSlack    time.Duration // at-least-once window beyond AckWait
}

// stallBound is the promised detection time of a dead link.
func (c *config) stallBound() time.Duration {
	return c.ping * time.Duration(c.pingsOut+1)
}

func loadConfig(t *testing.T) *config {
	c := &config{
		race:          raceEnabled,
		seed:          defaultSeed,
		pingsOut:      2,
		ping:          250 * time.Millisecond,
		reconnectBase: 50 * time.Millisecond,
		reconnectMax:  time.Second,
		ackWait:       2 * time.Second,
		c1HB:          500 * time.Millisecond,
		c1Batch:       64,
		c2HB:          time.Second,
		p1Timeout:     time.Second,
		p2AckTimeout:  3 * time.Second,
		window:        256,
		reqTimeout:    200 * time.Millisecond,
		requesters:    50,
		keys:          100,
		batchSize:     10,
		payload:       64,
		throttleRate:  20_000,
		lameDuck:      time.Second,

		grace:           time.Second,
		reqOverrunLimit: 100 * time.Millisecond,
		stallSlack:      250 * time.Millisecond,
		probeLimit:      5 * time.Second,
		progressLimit:   30 * time.Second,
		redelivSlack:    3 * time.Second,
	}
	if s := os.Getenv("SOAK_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 30 {
			t.Fatalf("SOAK_SECONDS=%q: want a whole number of seconds ≥ 30", s)
		}
		c.soak, c.seconds = true, n
		c.seed = uint64(time.Now().UnixNano())
	}
	if s := os.Getenv("CHAOS_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CHAOS_SEED=%q: %v", s, err)
		}
		c.seed = n
	}

	if c.soak {
		// RELIABILITY.md §d.3 at 240 s, scaled: warm-up 10 s, single server
		// 100 s, cluster 90 s, quiesce and verify the rest.
		f := float64(c.seconds) / 240
		scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) * f) }
		c.warm = max(scale(10*time.Second), 3*time.Second)
		c.single = scale(100 * time.Second)
		c.cluster = scale(90 * time.Second)
		c.withCluster = true
		c.quorumLoss = c.cluster >= 30*time.Second
		c.gapMin, c.gapMax = 2*time.Second, 4*time.Second
		c.clGapMin, c.clGapMax = 8*time.Second, 12*time.Second
		c.stall, c.throttle, c.chunk = 3*time.Second, 5*time.Second, 5*time.Second
		c.leaderDown = 2 * time.Second
		c.lameDuck = 2 * time.Second
		c.quiesce = max(scale(25*time.Second), 15*time.Second)
		c.p1Rate, c.p2Rate = 150, 250
		c.kvRate, c.batchRate = 50, 5
		c.reqEvery = 100 * time.Millisecond
	} else {
		// The short run: every fault type once on the single server, then
		// one leader kill with restart and one step-down in the cluster.
		c.warm = 2 * time.Second
		c.withCluster = true
		c.quorumLoss = !c.race // two restarts: only when the budget allows
		c.faultsPerType = 1
		c.gapMin, c.gapMax = 600*time.Millisecond, 1100*time.Millisecond
		c.clGapMin, c.clGapMax = 1500*time.Millisecond, 2500*time.Millisecond
		c.stall, c.throttle, c.chunk = 1500*time.Millisecond, 1500*time.Millisecond, 1500*time.Millisecond
		c.leaderDown = time.Second
		c.quiesce = 15 * time.Second
		c.p1Rate, c.p2Rate = 150, 250
		c.kvRate, c.batchRate = 50, 5
		c.reqEvery = 100 * time.Millisecond
	}
	if c.race {
		// The race detector costs 5-10x: less load, wider bounds.
		c.p1Rate, c.p2Rate = c.p1Rate/3, c.p2Rate/3
		c.kvRate, c.batchRate = c.kvRate/3, c.batchRate/2
		c.reqEvery = 400 * time.Millisecond
		c.ping = 500 * time.Millisecond
		c.p1Timeout = 2 * time.Second
		c.p2AckTimeout = 5 * time.Second
		c.reqOverrunLimit = 500 * time.Millisecond
		c.stallSlack = 750 * time.Millisecond
		c.probeLimit = 10 * time.Second
		c.redelivSlack = 5 * time.Second
		if !c.soak {
			c.stall = 2500 * time.Millisecond
			c.keys = 50
		}
	}
	// A stall must outlast its detection bound to be detected.
	c.stall = max(c.stall, c.stallBound()+c.stallSlack+500*time.Millisecond)
	return c
}

func (c *config) String() string {
	mode := "short"
	if c.soak {
		mode = fmt.Sprintf("soak %ds", c.seconds)
	}
	if c.race {
		mode += " -race"
	}
	phases := fmt.Sprintf("single=every fault type ×%d cluster=%v quorumLoss=%v", c.faultsPerType, c.withCluster, c.quorumLoss)
	if c.soak {
		phases = fmt.Sprintf("single=%v cluster=%v quorumLoss=%v", c.single, c.cluster, c.quorumLoss)
	}
	return fmt.Sprintf("%s seed=%d warm=%v %s ping=%v×%d ackWait=%v rates p1=%.0f/s p2=%.0f/s kv=%.0f/s batches=%.0f/s requesters=%d every %v",
		mode, c.seed, c.warm, phases, c.ping, c.pingsOut, c.ackWait,
		c.p1Rate, c.p2Rate, c.kvRate, c.batchRate, c.requesters, c.reqEvery)
}
