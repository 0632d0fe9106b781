package pcgroup_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/deadletter"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pcgroup"
	"github.com/natsio/natsio/pull"
)

func TestPartitionFiltersDealContiguousRuns(t *testing.T) {
	ms := []string{"b", "a", "c", "a"}
	var all []string
	for _, m := range []string{"a", "b", "c"} {
		f := pcgroup.PartitionFilters(ms, 8, nil, m, ">")
		all = append(all, f...)
		t.Logf("%s: %v", m, f)
	}
	slices.Sort(all)
	if len(all) != 8 || slices.Compact(all)[7] != "7.>" {
		t.Fatalf("partitions dealt %v", all)
	}
	if got := pcgroup.PartitionFilters(ms, 8, nil, "a", "orders.*"); !slices.Equal(got, []string{"0.orders.*", "1.orders.*", "6.orders.*"}) {
		t.Fatalf("a: %v", got)
	}
	mm := []pcgroup.MemberMapping{{Member: "x", Partitions: []int{2, 0}}, {Member: "y", Partitions: []int{1}}}
	if got := pcgroup.PartitionFilters(nil, 3, mm, "x", ">"); !slices.Equal(got, []string{"2.>", "0.>"}) {
		t.Fatalf("mapped x: %v", got)
	}
}

func TestConfigValidation(t *testing.T) {
	bad := []pcgroup.ElasticConfig{
		{MaxMembers: 0},
		{MaxMembers: 2, Members: []string{"a"}, MemberMappings: []pcgroup.MemberMapping{{Member: "a", Partitions: []int{0, 1}}}},
		{MaxMembers: 2, MemberMappings: []pcgroup.MemberMapping{{Member: "a", Partitions: []int{0}}}},
		{MaxMembers: 2, MemberMappings: []pcgroup.MemberMapping{{Member: "a", Partitions: []int{0, 2}}}},
		{MaxMembers: 2, PartitioningFilters: []pcgroup.PartitioningFilter{{Filter: "a.b"}}},
		{MaxMembers: 2, PartitioningFilters: []pcgroup.PartitioningFilter{{Filter: "a.*", PartitioningWildcards: []int{2}}}},
	}
	for _, c := range bad {
		if err := c.Validate(); !errors.Is(err, pcgroup.ErrInvalidConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// An elastic group under load: two members, a third added and the first
// dropped while messages flow, the server restarted. No key is in two
// handlers at once, each key's order holds, every message is acknowledged.
func TestElasticGroupMembershipChangesAndRestartUnderLoad(t *testing.T) {
	const keys, perPhase = 12, 15
	e := newGEnv(t)
	if _, err := e.js.CreateStream(e.ctx, jsapi.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.*"}}); err != nil {
		t.Fatal(err)
	}
	_, err := pcgroup.CreateElastic(e.ctx, e.js, "ORDERS", "workers", pcgroup.ElasticConfig{MaxMembers: 6,
		PartitioningFilters: []pcgroup.PartitioningFilter{{Filter: "orders.*", PartitioningWildcards: []int{1}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pcgroup.AddMembers(e.ctx, e.js, "ORDERS", "workers", "m1", "m2"); err != nil {
		t.Fatal(err)
	}
	o := newOracle()
	var errs []string
	var errMu sync.Mutex
	mcfg := pcgroup.MemberConfig{Consumer: jsapi.ConsumerConfig{AckWait: 2 * time.Second}, OnError: func(err error) {
		errMu.Lock()
		errs = append(errs, time.Now().Format("15:04:05.000")+" "+err.Error())
		errMu.Unlock()
	}}
	var members []*pcgroup.Member
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, m := range members {
			t.Logf("member %s partitions %v", m.Name(), m.Partitions())
		}
		for ci, err := range e.js.Consumers(context.Background(), "ORDERS-workers") {
			if err == nil {
				t.Logf("consumer %s filters %v pending %d ack pending %d waiting %d pins %+v", ci.Name, ci.Config.FilterSubjects, ci.NumPending, ci.NumAckPending, ci.NumWaiting, ci.PriorityGroups)
			}
		}
		errMu.Lock()
		for _, e := range errs[max(0, len(errs)-30):] {
			t.Log(e)
		}
		errMu.Unlock()
	})
	join := func(member string) *pcgroup.Member {
		m, err := pcgroup.Join(e.ctx, newJS(t, e.s), pcgroup.Elastic, "ORDERS", "workers", member, o.handler(member, time.Millisecond), mcfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Stop(); <-m.Done() })
		members = append(members, m)
		return m
	}
	m1, m2 := join("m1"), join("m2")
	e.publish(t, "orders", keys, 1, perPhase)

	// Add m3 under load.
	m3 := join("m3")
	if _, err := pcgroup.AddMembers(e.ctx, e.js, "ORDERS", "workers", "m3"); err != nil {
		t.Fatal(err)
	}
	e.publish(t, "orders", keys, perPhase+1, 2*perPhase)
	o.waitHandled(t, e.ctx, keys, 2*perPhase)

	// Drop m1 under load.
	if _, err := pcgroup.DropMembers(e.ctx, e.js, "ORDERS", "workers", "m1"); err != nil {
		t.Fatal(err)
	}
	e.publish(t, "orders", keys, 2*perPhase+1, 3*perPhase)
	o.waitHandled(t, e.ctx, keys, 3*perPhase)
	if p := m1.Partitions(); len(p) != 0 {
		t.Errorf("dropped m1 still consumes %v", p)
	}
	if len(m2.Partitions())+len(m3.Partitions()) != 6 {
		t.Errorf("m2 %v + m3 %v do not cover the 6 partitions", m2.Partitions(), m3.Partitions())
	}

	// Restart the server under load.
	if err := e.s.Restart(); err != nil {
		t.Fatal(err)
	}
	e.publish(t, "orders", keys, 3*perPhase+1, 4*perPhase)
	o.waitHandled(t, e.ctx, keys, 4*perPhase)
	e.waitEmpty(t, "ORDERS-workers")
	o.check(t)
	active, err := pcgroup.ActiveMembers(e.ctx, e.js, pcgroup.Elastic, "ORDERS", "workers")
	o.mu.Lock()
	dups := o.dups
	o.mu.Unlock()
	t.Logf("acknowledged per instance %v, duplicates %d, active %v (%v)", o.counts(), dups, active, err)
}

// Two instances of one member: the pinned one is killed (its connection
// closed) mid-stream and the standby takes over; the time from the kill
// to the standby's first message is the failover time.
func TestElasticGroupPinnedInstanceKilledStandbyTakesOver(t *testing.T) {
	const keys = 8
	e := newGEnv(t)
	if _, err := e.js.CreateStream(e.ctx, jsapi.StreamConfig{Name: "EV", Subjects: []string{"ev.*"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pcgroup.CreateElastic(e.ctx, e.js, "EV", "g", pcgroup.ElasticConfig{MaxMembers: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := pcgroup.AddMembers(e.ctx, e.js, "EV", "g", "solo"); err != nil {
		t.Fatal(err)
	}
	o := newOracle()
	mcfg := pcgroup.MemberConfig{Consumer: jsapi.ConsumerConfig{AckWait: time.Second}}
	jsA := newJS(t, e.s)
	a, err := pcgroup.Join(e.ctx, jsA, pcgroup.Elastic, "EV", "g", "solo", o.handler("A", time.Millisecond), mcfg)
	if err != nil {
		t.Fatal(err)
	}
	e.publish(t, "ev", keys, 1, 5)
	o.waitHandled(t, e.ctx, keys, 5)
	b, err := pcgroup.Join(e.ctx, newJS(t, e.s), pcgroup.Elastic, "EV", "g", "solo", o.handler("B", time.Millisecond), mcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { b.Stop(); <-b.Done() }()
	e.publish(t, "ev", keys, 6, 10)
	o.waitHandled(t, e.ctx, keys, 10)
	if c := o.counts(); c["B"] != 0 {
		t.Fatalf("the standby handled %d messages while A was pinned", c["B"])
	}

	// Kill A: its connection goes, its handlers end.
	killed := time.Now()
	jsA.Conn().Close()
	<-a.Done()
	e.publish(t, "ev", keys, 11, 20)
	o.waitHandled(t, e.ctx, keys, 20)
	e.waitEmpty(t, "EV-g")
	o.check(t)
	o.mu.Lock()
	failover, dups := o.first["B"].Sub(killed), o.dups
	o.mu.Unlock()
	t.Logf("failover: standby's first message %v after the pinned instance was killed (AckWait 1 s, pin timeout 2 s); acknowledged %v, duplicates %d",
		failover.Round(time.Millisecond), o.counts(), dups)
}

// A static group over a stream that partitions its own subjects: each
// member consumes its partitions only; a change of the configuration ends
// the members with ErrConfigChanged.
func TestStaticGroup(t *testing.T) {
	const keys = 10
	e := newGEnv(t)
	if _, err := e.js.CreateStream(e.ctx, jsapi.StreamConfig{Name: "ST", Subjects: []string{"st.*"},
		SubjectTransform: &jsapi.SubjectTransformConfig{Source: "st.*", Destination: "{{partition(4,1)}}.st.{{wildcard(1)}}"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pcgroup.CreateStatic(e.ctx, e.js, "ST", "g", pcgroup.StaticConfig{MaxMembers: 4, Members: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	// Creating it again with the same configuration is fine, with another not.
	if _, err := pcgroup.CreateStatic(e.ctx, e.js, "ST", "g", pcgroup.StaticConfig{MaxMembers: 4, Members: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pcgroup.CreateStatic(e.ctx, e.js, "ST", "g", pcgroup.StaticConfig{MaxMembers: 3, Members: []string{"a"}}); !errors.Is(err, pcgroup.ErrConfigMismatch) {
		t.Fatalf("recreate with another config: %v", err)
	}
	if _, err := pcgroup.Join(e.ctx, e.js, pcgroup.Static, "ST", "g", "zed", o0, pcgroup.MemberConfig{}); !errors.Is(err, pcgroup.ErrNotMember) {
		t.Fatalf("join as a non-member: %v", err)
	}
	o := newOracle()
	var ms []*pcgroup.Member
	for _, name := range []string{"a", "b"} {
		m, err := pcgroup.Join(e.ctx, newJS(t, e.s), pcgroup.Static, "ST", "g", name, o.handler(name, 0), pcgroup.MemberConfig{})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	if a, b := ms[0].Partitions(), ms[1].Partitions(); !slices.Equal(a, []string{"0.>", "1.>"}) || !slices.Equal(b, []string{"2.>", "3.>"}) {
		t.Fatalf("partitions a %v b %v", a, b)
	}
	e.publish(t, "st", keys, 1, 10)
	o.waitHandled(t, e.ctx, keys, 10)
	o.check(t)
	if c := o.counts(); c["a"] == 0 || c["b"] == 0 {
		t.Fatalf("one member got nothing: %v", c)
	}
	names, err := pcgroup.List(e.ctx, e.js, pcgroup.Static, "ST")
	if err != nil || !slices.Equal(names, []string{"g"}) {
		t.Fatalf("list %v %v", names, err)
	}

	// A change of the configuration ends the members.
	b, _ := kv.Bind(e.ctx, e.js, pcgroup.StaticBucket)
	data, _ := json.Marshal(pcgroup.StaticConfig{MaxMembers: 4, Members: []string{"a", "b", "c"}})
	if _, err := b.Put(e.ctx, "ST.g", data); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		<-m.Done()
		if !errors.Is(m.Err(), pcgroup.ErrConfigChanged) {
			t.Fatalf("member %s ended with %v", m.Name(), m.Err())
		}
	}
	if err := pcgroup.Delete(e.ctx, e.js, pcgroup.Static, "ST", "g"); err != nil {
		t.Fatal(err)
	}
	if _, err := pcgroup.GetStatic(e.ctx, e.js, "ST", "g"); !errors.Is(err, pcgroup.ErrGroupNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}

func o0(context.Context, *jsapi.Msg) error { return nil }

// The iterator form yields the member's messages with the partition token
// taken off; breaking out stops the instance.
func TestElasticMessagesIterator(t *testing.T) {
	e := newGEnv(t)
	if _, err := e.js.CreateStream(e.ctx, jsapi.StreamConfig{Name: "IT", Subjects: []string{"it.*"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pcgroup.CreateElastic(e.ctx, e.js, "IT", "g", pcgroup.ElasticConfig{MaxMembers: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := pcgroup.AddMembers(e.ctx, e.js, "IT", "g", "only"); err != nil {
		t.Fatal(err)
	}
	e.publish(t, "it", 3, 1, 2)
	n := 0
	for m, err := range pcgroup.Messages(e.ctx, e.js, pcgroup.Elastic, "IT", "g", "only", pcgroup.MemberConfig{Keyed: pull.Keyed{}}) {
		if err != nil {
			t.Fatal(err)
		}
		if m.Subject[:3] != "it." {
			t.Fatalf("subject %q keeps its partition", m.Subject)
		}
		n++
		if n == 6 {
			break
		}
	}
	// The acknowledgements travel asynchronously: wait for the consumer
	// to have them all.
	for {
		info, err := e.js.Consumer(e.ctx, pcgroup.ElasticStreamName("IT", "g"), "only")
		if err != nil {
			t.Fatal(err)
		}
		if info.NumAckPending == 0 && info.NumPending == 0 && info.AckFloor.Stream == 6 {
			break
		}
		select {
		case <-e.ctx.Done():
			t.Fatalf("after the loop: ack pending %d, pending %d", info.NumAckPending, info.NumPending)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Dead letters of a group: a message whose handler always fails runs out
// of deliveries and is moved with its origin; its key goes on.
func TestElasticGroupDeadLetters(t *testing.T) {
	e := newGEnv(t)
	if _, err := e.js.CreateStream(e.ctx, jsapi.StreamConfig{Name: "DL", Subjects: []string{"dl.*"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.js.CreateStream(e.ctx, jsapi.StreamConfig{Name: "LETTERS", Subjects: []string{"deadletter.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pcgroup.CreateElastic(e.ctx, e.js, "DL", "g", pcgroup.ElasticConfig{MaxMembers: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := pcgroup.AddMembers(e.ctx, e.js, "DL", "g", "m"); err != nil {
		t.Fatal(err)
	}
	mv, err := deadletter.Start(e.ctx, e.js, pcgroup.DeadLetters(pcgroup.Elastic, "DL", "g"))
	if err != nil {
		t.Fatal(err)
	}
	defer mv.Stop()
	o := newOracle()
	ok := o.handler("m", 0)
	m, err := pcgroup.Join(e.ctx, e.js, pcgroup.Elastic, "DL", "g", "m", func(ctx context.Context, msg *jsapi.Msg) error {
		if string(msg.Data) == "k0:2" {
			return errors.New("poison")
		}
		return ok(ctx, msg)
	}, pcgroup.MemberConfig{Consumer: jsapi.ConsumerConfig{AckWait: time.Second, MaxDeliver: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { m.Stop(); <-m.Done() }()
	e.publish(t, "dl", 2, 1, 1)
	e.publish(t, "dl", 1, 2, 2) // k0:2, the poison
	lettersInfo, err := e.js.CreateConsumer(e.ctx, "LETTERS", jsapi.ConsumerConfig{Durable: "r"})
	if err != nil {
		t.Fatal(err)
	}
	letters, err := pull.FromInfo(e.js, lettersInfo)
	if err != nil {
		t.Fatal(err)
	}
	l, err := letters.Next(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(l.Data) != "k0:2" || l.Header.Get(deadletter.HeaderReason) != "max_deliveries" ||
		l.Header.Get(deadletter.HeaderStream) != "DL-g" || l.Header.Get(deadletter.HeaderConsumer) != "m" {
		t.Fatalf("letter %s %q %v", l.Subject, l.Data, l.Header)
	}
	// The key goes on after its dead letter.
	o.skip("k0", 2) // a dead letter: k0:3 comes next
	if _, err := e.js.Publish(e.ctx, "dl.k0", []byte("k0:3")); err != nil {
		t.Fatal(err)
	}
	o.waitHandled(t, e.ctx, 1, 3)
	o.check(t)
}

// The pinned instance is cut off from the server (its proxy cut and
// refusing) while it holds a backlog: it stops handing messages to its
// handlers at once, so the standby that takes over never works on a key
// the cut-off instance is still working on.
func TestElasticGroupCutOffInstanceStopsHandling(t *testing.T) {
	const keys, perKey = 4, 30
	e := newGEnv(t)
	if _, err := e.js.CreateStream(e.ctx, jsapi.StreamConfig{Name: "CUT", Subjects: []string{"cut.*"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pcgroup.CreateElastic(e.ctx, e.js, "CUT", "g", pcgroup.ElasticConfig{MaxMembers: 2, Members: []string{"solo"},
		PartitioningFilters: []pcgroup.PartitioningFilter{{Filter: "cut.*", PartitioningWildcards: []int{1}}}}); err != nil {
		t.Fatal(err)
	}
	o := newOracle()
	mcfg := pcgroup.MemberConfig{Consumer: jsapi.ConsumerConfig{AckWait: time.Second}}
	proxy := natstest.NewProxy(t, e.s.URL())
	ncA, err := conn.Connect(e.ctx, proxy.URL(), conn.ReconnectBackoff(20*time.Millisecond, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ncA.Close() })
	jsA, _ := jsapi.New(ncA)
	// A's handler ignores acknowledgement failures, as a handler that
	// returns nil for ConsumeKeyed to acknowledge does.
	handleA := o.handler("A", 40*time.Millisecond)
	a, err := pcgroup.Join(e.ctx, jsA, pcgroup.Elastic, "CUT", "g", "solo", func(ctx context.Context, m *jsapi.Msg) error {
		_ = handleA(ctx, m)
		return nil
	}, mcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { a.Stop(); <-a.Done() }()
	// A takes the pin with the first message before the standby joins.
	e.publish(t, "cut", keys, 1, 1)
	o.waitHandled(t, e.ctx, keys, 1)
	b, err := pcgroup.Join(e.ctx, newJS(t, e.s), pcgroup.Elastic, "CUT", "g", "solo", o.handler("B", 40*time.Millisecond), mcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { b.Stop(); <-b.Done() }()
	e.publish(t, "cut", keys, 2, perKey) // a backlog of seconds for A
	o.waitHandled(t, e.ctx, keys, 3)
	proxy.Down(true)
	proxy.Cut()
	o.waitHandled(t, e.ctx, keys, perKey)
	e.waitEmpty(t, "CUT-g")
	o.check(t)
	o.mu.Lock()
	dups := o.dups
	o.mu.Unlock()
	t.Logf("handled by A (acknowledged) and B: %v, duplicates %d", o.counts(), dups)
}

// Bad names and options are refused before anything is sent.
func TestBadInputRefused(t *testing.T) {
	e := newGEnv(t)
	h := func(context.Context, *jsapi.Msg) error { return nil }
	if _, err := pcgroup.List(e.ctx, e.js, pcgroup.Elastic, "a.b"); !errors.Is(err, jsapi.ErrInvalidName) {
		t.Errorf("List a.b: %v", err)
	}
	if _, err := pcgroup.CreateElastic(e.ctx, e.js, "S", "g.x", pcgroup.ElasticConfig{MaxMembers: 1}); !errors.Is(err, jsapi.ErrInvalidName) {
		t.Errorf("group g.x: %v", err)
	}
	if _, err := pcgroup.CreateElastic(e.ctx, e.js, "S", "g", pcgroup.ElasticConfig{}); !errors.Is(err, pcgroup.ErrInvalidConfig) {
		t.Errorf("no partitions: %v", err)
	}
	if _, err := pcgroup.Join(e.ctx, e.js, pcgroup.Elastic, "S", "g", "m", nil, pcgroup.MemberConfig{}); !errors.Is(err, conn.ErrInvalidOption) {
		t.Errorf("nil handler: %v", err)
	}
	if _, err := pcgroup.Join(e.ctx, e.js, pcgroup.Elastic, "S", "g", "m", h, pcgroup.MemberConfig{Consumer: jsapi.ConsumerConfig{AckPolicy: jsapi.AckNone}}); !errors.Is(err, conn.ErrInvalidOption) {
		t.Errorf("ack none: %v", err)
	}
	if _, err := pcgroup.Join(e.ctx, e.js, pcgroup.Elastic, "S", "g", "m", h, pcgroup.MemberConfig{}); !errors.Is(err, pcgroup.ErrGroupNotFound) {
		t.Errorf("no group: %v", err)
	}
	if _, err := pcgroup.AddMembers(e.ctx, e.js, "S", "g", "m"); !errors.Is(err, pcgroup.ErrGroupNotFound) {
		t.Errorf("add to no group: %v", err)
	}
}
