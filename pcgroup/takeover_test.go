package pcgroup_test

import (
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pcgroup"
)

// A pinned instance is killed with a backlog received and not
// acknowledged, which the server redelivers only after the consumer's
// BackOff, long after the pin lapsed: the standby taking over handles no
// key's later message before that backlog is back. Once with the standby
// joining after the first instance took the pin, once with both joining
// the new consumer before anything was delivered.
func TestElasticGroupTakeoverWaitsForLateRedelivery(t *testing.T) {
	for _, tc := range []struct {
		name         string
		standbyFirst bool
	}{{"standby joins after the pin is taken", false}, {"both join a fresh consumer", true}} {
		t.Run(tc.name, func(t *testing.T) {
			const keys, backlog = 4, 30
			e := newGEnv(t)
			e.soloGroup(t, "TO", "to")
			o := newOracle()
			// The pin lapses after AckWait (1 s) without a pull; what the
			// killed instance held comes back after the BackOff (4 s).
			mcfg := pcgroup.MemberConfig{Consumer: jsapi.ConsumerConfig{AckWait: time.Second, BackOff: []time.Duration{4 * time.Second}}}
			type inst struct {
				name string
				js   *jsapi.JS
				m    *pcgroup.Member
			}
			join := func(name string) *inst {
				js := newJS(t, e.s)
				m, err := pcgroup.Join(e.ctx, js, pcgroup.Elastic, "TO", "g", "solo", o.handler(name, 20*time.Millisecond), mcfg)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { m.Stop(); <-m.Done() })
				return &inst{name, js, m}
			}
			a := join("A")
			var b *inst
			if tc.standbyFirst {
				b = join("B")
			}
			e.publish(t, "to", keys, 1, 1)
			o.waitHandled(t, e.ctx, keys, 1)
			if b == nil {
				b = join("B")
			}
			pinned, standby := a, b
			if c := o.counts(); c["B"] > 0 {
				pinned, standby = b, a
			}
			e.publish(t, "to", keys, 2, backlog) // seconds of work for the pinned one
			o.waitHandled(t, e.ctx, keys, 3)
			pinned.js.Conn().Close()
			<-pinned.m.Done()
			e.publish(t, "to", keys, backlog+1, backlog+10)
			o.waitHandled(t, e.ctx, keys, backlog+10)
			e.waitEmpty(t, "TO-g")
			o.check(t)
			if c := o.counts(); c[standby.name] == 0 {
				t.Fatalf("the standby handled nothing: %v", c)
			}
			t.Logf("acknowledged %v (%s was pinned)", o.counts(), pinned.name)
		})
	}
}
