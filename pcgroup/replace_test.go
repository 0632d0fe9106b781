package pcgroup_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pcgroup"
)

// A member's consumer that the server can no longer update — its store
// removed under it, as when one instance's deletion of the consumer
// finishes after another instance created it anew — is deleted and
// created again by the next instance that joins, instead of failing its
// creation for good.
func TestElasticMemberReplacesConsumerTheServerCannotUpdate(t *testing.T) {
	dir := t.TempDir()
	e := newGEnv(t, natstest.StoreDir(dir))
	e.soloGroup(t, "RP", "rp")
	o := newOracle()
	// A long AckWait keeps the consumer past the first instance's end.
	mcfg := pcgroup.MemberConfig{Consumer: jsapi.ConsumerConfig{AckWait: 20 * time.Second}}
	a, err := pcgroup.Join(e.ctx, newJS(t, e.s), pcgroup.Elastic, "RP", "g", "solo", o.handler("A", 0), mcfg)
	if err != nil {
		t.Fatal(err)
	}
	e.publish(t, "rp", 2, 1, 1)
	o.waitHandled(t, e.ctx, 2, 1)
	a.Stop()
	<-a.Done()
	obs := filepath.Join(dir, "jetstream", "$G", "streams", "RP-g", "obs", "solo")
	if _, err := os.Stat(obs); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(obs); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var errs []error
	b, err := pcgroup.Join(e.ctx, newJS(t, e.s), pcgroup.Elastic, "RP", "g", "solo", o.handler("B", 0),
		pcgroup.MemberConfig{Consumer: mcfg.Consumer, OnError: func(err error) {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { b.Stop(); <-b.Done() }()
	e.publish(t, "rp", 2, 2, 5)
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer cancel()
	o.waitHandled(t, ctx, 2, 5)
	o.check(t)
	mu.Lock()
	defer mu.Unlock()
	t.Logf("errors reported: %v", errs)
}

// A member's consumer that the server, creating it, restores from the
// store of a consumer of the same name whose deletion had not finished
// (so it starts at the old consumer's position, past its new partitions'
// earlier messages) is deleted and created again: every message is
// handled. The old store is put back by hand between the deletion and
// the creation, as the server's unfinished deletion leaves it.
func TestElasticMemberReplacesConsumerWithAnotherOnesState(t *testing.T) {
	dir := t.TempDir()
	e := newGEnv(t, natstest.StoreDir(dir))
	if _, err := e.js.CreateStream(e.ctx, jsapi.StreamConfig{Name: "IN", Subjects: []string{"in.*"}}); err != nil {
		t.Fatal(err)
	}
	// Two partitions: k0 and k2 in 0 (m1's), k1 and k3 in 1 (m2's).
	if _, err := pcgroup.CreateElastic(e.ctx, e.js, "IN", "g", pcgroup.ElasticConfig{MaxMembers: 2, Members: []string{"m1", "m2"},
		PartitioningFilters: []pcgroup.PartitioningFilter{{Filter: "in.*", PartitioningWildcards: []int{1}}}}); err != nil {
		t.Fatal(err)
	}
	o := newOracle()
	mcfg := pcgroup.MemberConfig{Consumer: jsapi.ConsumerConfig{AckWait: 20 * time.Second}}
	a, err := pcgroup.Join(e.ctx, newJS(t, e.s), pcgroup.Elastic, "IN", "g", "m1", o.handler("A", 0), mcfg)
	if err != nil {
		t.Fatal(err)
	}
	e.publish(t, "in", 4, 1, 3) // m2 has no instance: k1 and k3 wait in the stream
	for _, k := range []string{"k0", "k2"} {
		for {
			o.mu.Lock()
			done := o.prefix[k] >= 3
			o.mu.Unlock()
			if done {
				break
			}
			select {
			case <-o.progress:
			case <-e.ctx.Done():
				t.Fatal("m1's partition not handled")
			}
		}
	}
	a.Stop()
	<-a.Done()
	obs := filepath.Join(dir, "jetstream", "$G", "streams", "IN-g", "obs", "m1")
	saved, err := os.ReadDir(obs)
	if err != nil || len(saved) == 0 {
		t.Fatalf("m1's store: %v %v", saved, err)
	}
	backup := t.TempDir()
	if err := os.CopyFS(backup, os.DirFS(obs)); err != nil {
		t.Fatal(err)
	}
	if _, err := pcgroup.DropMembers(e.ctx, e.js, "IN", "g", "m2"); err != nil { // m1 takes partition 1
		t.Fatal(err)
	}
	if err := e.js.DeleteConsumer(e.ctx, "IN-g", "m1"); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(obs, os.DirFS(backup)); err != nil {
		t.Fatal(err)
	}
	b, err := pcgroup.Join(e.ctx, newJS(t, e.s), pcgroup.Elastic, "IN", "g", "m1", o.handler("B", 0), mcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { b.Stop(); <-b.Done() }()
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer cancel()
	o.waitHandled(t, ctx, 4, 3)
	o.check(t)
}
