package pcgroup_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pcgroup"
)

// instance is one running instance of a member, on its own connection.
type instance struct {
	label string
	nc    *conn.Conn
	m     *pcgroup.Member
}

// A seeded schedule of faults against an elastic group under load: members
// added and dropped, instances killed (their connection closed, a new one
// started), the server restarted — with messages published between steps.
// The oracle: no key in two handlers at once, each key in order, every
// message handled and acknowledged (the group's stream drains).
// PCGROUP_CHAOS_SEED replays a schedule.
func TestElasticGroupChaos(t *testing.T) {
	seed := uint64(20261206)
	if v := os.Getenv("PCGROUP_CHAOS_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	rng := rand.New(rand.NewPCG(seed, seed))
	const keys, perStep, steps = 10, 4, 12
	e := newGEnv(t)
	if _, err := e.js.CreateStream(e.ctx, jsapi.StreamConfig{Name: "CH", Subjects: []string{"ch.*"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pcgroup.CreateElastic(e.ctx, e.js, "CH", "g", pcgroup.ElasticConfig{MaxMembers: 6, Members: []string{"m1", "m2"},
		PartitioningFilters: []pcgroup.PartitioningFilter{{Filter: "ch.*", PartitioningWildcards: []int{1}}}}); err != nil {
		t.Fatal(err)
	}
	o := newOracle()
	mcfg := pcgroup.MemberConfig{Consumer: jsapi.ConsumerConfig{AckWait: time.Second}}
	var live []*instance
	n := 0
	start := func(member string) {
		n++
		label := fmt.Sprintf("%s#%d", member, n)
		nc := e.s.Connect(t, conn.ReconnectBackoff(20*time.Millisecond, 200*time.Millisecond))
		js, _ := jsapi.New(nc)
		m, err := pcgroup.Join(e.ctx, js, pcgroup.Elastic, "CH", "g", member, o.handler(label, 2*time.Millisecond), mcfg)
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, &instance{label, nc, m})
	}
	t.Cleanup(func() {
		for _, in := range live {
			in.m.Stop()
			<-in.m.Done()
		}
	})
	members := []string{"m1", "m2"}
	for _, m := range []string{"m1", "m1", "m2", "m2", "m3", "m4"} {
		start(m) // two instances each for the members, one for the others
	}
	var log []string
	published := 0
	for step := range steps {
		e.publish(t, "ch", keys, published+1, published+perStep)
		published += perStep
		switch rng.IntN(4) {
		case 0: // add a member
			var out []string
			for _, m := range []string{"m1", "m2", "m3", "m4"} {
				if !slices.Contains(members, m) {
					out = append(out, m)
				}
			}
			if len(out) == 0 {
				continue
			}
			m := out[rng.IntN(len(out))]
			if _, err := pcgroup.AddMembers(e.ctx, e.js, "CH", "g", m); err != nil {
				t.Fatal(err)
			}
			members = append(members, m)
			log = append(log, fmt.Sprintf("%d add %s", step, m))
		case 1: // drop a member
			if len(members) < 2 {
				continue
			}
			m := members[rng.IntN(len(members))]
			if _, err := pcgroup.DropMembers(e.ctx, e.js, "CH", "g", m); err != nil {
				t.Fatal(err)
			}
			members = slices.DeleteFunc(members, func(x string) bool { return x == m })
			log = append(log, fmt.Sprintf("%d drop %s", step, m))
		case 2: // kill an instance, start another for its member
			i := rng.IntN(len(live))
			in := live[i]
			in.nc.Close()
			<-in.m.Done()
			live = slices.Delete(live, i, i+1)
			start(in.m.Name())
			log = append(log, fmt.Sprintf("%d kill %s", step, in.label))
		case 3:
			if err := e.s.Restart(); err != nil {
				t.Fatal(err)
			}
			log = append(log, fmt.Sprintf("%d restart", step))
		}
	}
	t.Logf("seed %d: %v", seed, log)
	o.waitHandled(t, e.ctx, keys, published)
	e.waitEmpty(t, "CH-g")
	o.check(t)
	o.mu.Lock()
	dups := o.dups
	o.mu.Unlock()
	t.Logf("%d messages; acknowledged per instance %v; handled twice %d", keys*published, o.counts(), dups)
}
