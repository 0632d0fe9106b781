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
