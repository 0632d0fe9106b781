package interop_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pcgroup"
	"github.com/synadia-io/orbit.go/pcgroups"
)

// handled records which side handled each message ("<key>:<n>") of a
// group, and wakes a waiter.
type handled struct {
	mu    sync.Mutex
	by    map[string][]string // message -> sides that acknowledged it
	keyBy map[string]map[string]bool
	subj  []string
	more  chan struct{}
}

func newHandled() *handled {
	return &handled{by: map[string][]string{}, keyBy: map[string]map[string]bool{}, more: make(chan struct{}, 1)}
}

func (h *handled) add(side, subject string, data []byte) {
	h.mu.Lock()
	k, _, _ := strings.Cut(string(data), ":")
	h.by[string(data)] = append(h.by[string(data)], side)
	if h.keyBy[k] == nil {
		h.keyBy[k] = map[string]bool{}
	}
	h.keyBy[k][side] = true
	h.subj = append(h.subj, subject)
	h.mu.Unlock()
	select {
	case h.more <- struct{}{}:
	default:
	}
}

func (h *handled) wait(t *testing.T, ctx context.Context, n int) map[string]int {
	t.Helper()
	for {
		h.mu.Lock()
		got := len(h.by)
		h.mu.Unlock()
		if got >= n {
			break
		}
		select {
		case <-h.more:
		case <-ctx.Done():
			t.Fatalf("%d of %d messages handled", got, n)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	per := map[string]int{}
	for m, sides := range h.by {
		if len(sides) != 1 {
			t.Errorf("message %s handled by %v", m, sides)
		}
		per[sides[0]]++
	}
	for _, s := range h.subj {
		if !strings.HasPrefix(s, "orders.") {
			t.Errorf("handler saw subject %q (partition not stripped)", s)
		}
	}
	return per
}

func publishOrders(t *testing.T, c *clients, keys, from, to int) {
	t.Helper()
	for n := from; n <= to; n++ {
		for k := range keys {
			if _, err := c.jsi.Publish(c.ctx, fmt.Sprintf("orders.k%d", k), fmt.Appendf(nil, "k%d:%d", k, n)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func orbitHandler(h *handled, side string) func(jetstream.Msg) {
	return func(m jetstream.Msg) {
		h.add(side, m.Subject(), m.Data())
		m.Ack()
	}
}

func natsioHandler(h *handled, side string) func(context.Context, *jsapi.Msg) error {
	return func(_ context.Context, m *jsapi.Msg) error {
		h.add(side, m.Subject, m.Data)
		return nil
	}
}

var orbitCfg = jetstream.ConsumerConfig{AckPolicy: jetstream.AckExplicitPolicy, AckWait: 2 * time.Second}
var natsioCfg = pcgroup.MemberConfig{Consumer: jsapi.ConsumerConfig{AckWait: 2 * time.Second}}

// One elastic group created by natsio, a natsio member and an orbit.go
// member: partitions are split between them, each message handled once;
// orbit's admin drops its member and the natsio member takes every
// partition without a restart.
func TestPCGroupElasticMixedMembers(t *testing.T) {
	c := start(t)
	if _, err := c.jsi.CreateStream(c.ctx, jsapi.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.*"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pcgroup.CreateElastic(c.ctx, c.jsi, "ORDERS", "mixed", pcgroup.ElasticConfig{MaxMembers: 4,
		PartitioningFilters: []pcgroup.PartitioningFilter{{Filter: "orders.*", PartitioningWildcards: []int{1}}}}); err != nil {
		t.Fatal(err)
	}
	// orbit's admin adds to natsio's group.
	if _, err := pcgroups.AddMembers(c.ctx, c.js, "ORDERS", "mixed", []string{"nio", "orb"}); err != nil {
		t.Fatal(err)
	}
	h := newHandled()
	nm, err := pcgroup.Join(c.ctx, c.jsi, pcgroup.Elastic, "ORDERS", "mixed", "nio", natsioHandler(h, "natsio"), natsioCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { nm.Stop(); <-nm.Done() }()
	oc, err := pcgroups.ElasticConsume(c.ctx, c.js, "ORDERS", "mixed", "orb", orbitHandler(h, "orbit"), orbitCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Stop()
	publishOrders(t, c, 16, 1, 5)
	per := h.wait(t, c.ctx, 80)
	if per["natsio"] == 0 || per["orbit"] == 0 {
		t.Fatalf("handled per side %v: the partitions were not split", per)
	}
	for k, sides := range h.keyBy {
		if len(sides) != 1 {
			t.Errorf("key %s handled by %v", k, sides)
		}
	}
	active, err := pcgroups.ListElasticActiveMembers(c.ctx, c.js, "ORDERS", "mixed")
	slices.Sort(active)
	if err != nil || !slices.Equal(active, []string{"nio", "orb"}) {
		t.Errorf("orbit's active members %v %v", active, err)
	}
	t.Logf("split between the clients: %v; natsio member's partitions %v", per, nm.Partitions())

	// orbit drops its member; natsio's takes all partitions.
	if _, err := pcgroups.DeleteMembers(c.ctx, c.js, "ORDERS", "mixed", []string{"orb"}); err != nil {
		t.Fatal(err)
	}
	for len(nm.Partitions()) != 4 {
		select {
		case <-c.ctx.Done():
			t.Fatalf("natsio member's partitions %v after orb was dropped", nm.Partitions())
		case <-time.After(20 * time.Millisecond):
		}
	}
	publishOrders(t, c, 16, 6, 7)
	before := per["natsio"]
	per = h.wait(t, c.ctx, 112)
	if per["natsio"]-before != 32 {
		t.Fatalf("after the drop: %v", per)
	}
}

// A group created by orbit.go, consumed by natsio; one created by natsio,
// consumed by orbit.go — static and elastic.
func TestPCGroupCreatedByEachSideConsumedByTheOther(t *testing.T) {
	c := start(t)
	if _, err := c.jsi.CreateStream(c.ctx, jsapi.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.*"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.jsi.CreateStream(c.ctx, jsapi.StreamConfig{Name: "P", Subjects: []string{"p.*"},
		SubjectTransform: &jsapi.SubjectTransformConfig{Source: "p.*", Destination: "{{partition(2,1)}}.orders.{{wildcard(1)}}"}}); err != nil {
		t.Fatal(err)
	}

	// Elastic, created by orbit, consumed by natsio.
	ocfg, err := pcgroups.CreateElastic(c.ctx, c.js, "ORDERS", "byorbit", 3, []pcgroups.PartitioningFilter{{Filter: "orders.*", PartitioningWildcards: []int{1}}}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pcgroups.AddMembers(c.ctx, c.js, "ORDERS", "byorbit", []string{"n"}); err != nil {
		t.Fatal(err)
	}
	if ocfg, err = pcgroups.GetElasticConsumerGroupConfig(c.ctx, c.js, "ORDERS", "byorbit"); err != nil {
		t.Fatal(err)
	}
	ncfg, err := pcgroup.GetElastic(c.ctx, c.jsi, "ORDERS", "byorbit")
	if err != nil || ncfg.MaxMembers != ocfg.MaxMembers || !reflect.DeepEqual(ncfg.MemberFilters("n"), pcgroups.ElasticGetPartitionFilters(*ocfg, "n")) {
		t.Fatalf("natsio reads orbit config %+v %v: %q vs %q", ncfg, err, ncfg.MemberFilters("n"), pcgroups.ElasticGetPartitionFilters(*ocfg, "n"))
	}
	h := newHandled()
	nm, err := pcgroup.Join(c.ctx, c.jsi, pcgroup.Elastic, "ORDERS", "byorbit", "n", natsioHandler(h, "natsio"), natsioCfg)
	if err != nil {
		t.Fatal(err)
	}
	publishOrders(t, c, 6, 1, 3)
	if per := h.wait(t, c.ctx, 18); per["natsio"] != 18 {
		t.Fatalf("natsio consuming orbit's elastic group: %v", per)
	}
	nm.Stop()
	<-nm.Done()

	// Elastic, created by natsio, consumed by orbit.
	if _, err := pcgroup.CreateElastic(c.ctx, c.jsi, "ORDERS", "bynatsio", pcgroup.ElasticConfig{MaxMembers: 3,
		PartitioningFilters: []pcgroup.PartitioningFilter{{Filter: "orders.*", PartitioningWildcards: []int{1}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pcgroup.AddMembers(c.ctx, c.jsi, "ORDERS", "bynatsio", "o"); err != nil {
		t.Fatal(err)
	}
	// Creating the same group again from the other side is accepted: same
	// KV config, same stream configuration.
	if _, err := pcgroups.CreateElastic(c.ctx, c.js, "ORDERS", "bynatsio", 3, []pcgroups.PartitioningFilter{{Filter: "orders.*", PartitioningWildcards: []int{1}}}, 0, 0); err != nil {
		t.Fatalf("orbit re-creating natsio's group: %v", err)
	}
	if _, err := pcgroup.CreateElastic(c.ctx, c.jsi, "ORDERS", "byorbit", pcgroup.ElasticConfig{MaxMembers: 3,
		PartitioningFilters: []pcgroup.PartitioningFilter{{Filter: "orders.*", PartitioningWildcards: []int{1}}}}); err != nil {
		t.Fatalf("natsio re-creating orbit's group: %v", err)
	}
	names, err := pcgroups.ListElasticConsumerGroups(c.ctx, c.js, "ORDERS")
	slices.Sort(names)
	if err != nil || !slices.Equal(names, []string{"bynatsio", "byorbit"}) {
		t.Fatalf("orbit lists %v %v", names, err)
	}
	h2 := newHandled()
	oc, err := pcgroups.ElasticConsume(c.ctx, c.js, "ORDERS", "bynatsio", "o", orbitHandler(h2, "orbit"), orbitCfg)
	if err != nil {
		t.Fatal(err)
	}
	if per := h2.wait(t, c.ctx, 18); per["orbit"] != 18 {
		t.Fatalf("orbit consuming natsio's elastic group: %v", per)
	}
	oc.Stop()

	// Static, created by natsio, consumed by orbit (and the reverse).
	if _, err := pcgroup.CreateStatic(c.ctx, c.jsi, "P", "sn", pcgroup.StaticConfig{MaxMembers: 2, Members: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pcgroups.CreateStatic(c.ctx, c.js, "P", "so", 2, nil, []string{"y"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pcgroups.CreateStatic(c.ctx, c.js, "P", "sn", 2, nil, []string{"x"}, nil); err != nil {
		t.Fatalf("orbit re-creating natsio's static group: %v", err)
	}
	if _, err := pcgroup.CreateStatic(c.ctx, c.jsi, "P", "so", pcgroup.StaticConfig{MaxMembers: 2, Members: []string{"y"}}); err != nil {
		t.Fatalf("natsio re-creating orbit's static group: %v", err)
	}
	for k := range 4 {
		if _, err := c.jsi.Publish(c.ctx, fmt.Sprintf("p.k%d", k), fmt.Appendf(nil, "k%d:1", k)); err != nil {
			t.Fatal(err)
		}
	}
	h3 := newHandled()
	osc, err := pcgroups.StaticConsume(c.ctx, c.js, "P", "sn", "x", orbitHandler(h3, "orbit"), orbitCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer osc.Stop()
	if per := h3.wait(t, c.ctx, 4); per["orbit"] != 4 {
		t.Fatalf("orbit consuming natsio's static group: %v", per)
	}
	h4 := newHandled()
	nsm, err := pcgroup.Join(c.ctx, c.jsi, pcgroup.Static, "P", "so", "y", natsioHandler(h4, "natsio"), natsioCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { nsm.Stop(); <-nsm.Done() }()
	if per := h4.wait(t, c.ctx, 4); per["natsio"] != 4 {
		t.Fatalf("natsio consuming orbit's static group: %v", per)
	}
	sa, err := pcgroup.ActiveMembers(c.ctx, c.jsi, pcgroup.Static, "P", "so")
	t.Logf("natsio sees orbit's static group active members %v (%v)", sa, err)
}
