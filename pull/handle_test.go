package pull_test

import (
	"errors"
	"testing"

	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// Info reports the consumer's state; Delete removes it, after which reads
// and Info fail as for a missing consumer.
func TestInfoAndDelete(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	e.publish(t, 3)
	// The server counts a consumer's pending messages a moment after it
	// acknowledged their publishes: Info shows all 3 soon, not at once.
	var info *jsapi.ConsumerInfo
	testutil.Eventually(t, "Info to count the 3 messages", func() bool {
		var err error
		info, err = c.Info(e.ctx)
		if err != nil || info.Name != "C" || info.Stream != "S" {
			t.Fatalf("info: %+v %v", info, err)
		}
		return info.NumPending == 3
	})
	if c.CachedInfo() != info {
		t.Fatal("Info did not refresh the cached info")
	}
	if err := e.js.DeleteConsumer(e.ctx, c.Stream(), c.Name()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Info(e.ctx); !errors.Is(err, jsapi.ErrConsumerNotFound) {
		t.Fatalf("info after delete: %v", err)
	}
	if _, err := c.Fetch(e.ctx, 1); !errors.Is(err, pull.ErrConsumerDeleted) {
		t.Fatalf("fetch after delete: %v", err)
	}
	if err := e.js.DeleteConsumer(e.ctx, c.Stream(), c.Name()); !errors.Is(err, jsapi.ErrConsumerNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

// FromInfo makes a handle from info already at hand (a create call's
// reply, a listing) without any request, and the handle reads.
func TestFromInfo(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, 2)
	created, err := e.js.CreateConsumer(e.ctx, "S", jsapi.ConsumerConfig{Durable: "C"})
	if err != nil {
		t.Fatal(err)
	}
	var listed *jsapi.ConsumerInfo
	for ci, err := range e.js.Consumers(e.ctx, "S") {
		if err != nil {
			t.Fatal(err)
		}
		listed = ci
	}
	if listed == nil {
		t.Fatal("listing found no consumer")
	}
	spy, err := e.nc.Subscribe("$JS.API.>")
	if err != nil {
		t.Fatal(err)
	}
	defer spy.Unsubscribe()
	if err := e.nc.Flush(e.ctx); err != nil {
		t.Fatal(err)
	}
	before := e.nc.Stats().Requests
	var handles []*pull.Consumer
	for _, info := range []*jsapi.ConsumerInfo{created, listed} {
		c, err := pull.FromInfo(e.js, info)
		if err != nil {
			t.Fatal(err)
		}
		if c.Name() != "C" || c.Stream() != "S" || c.CachedInfo().Config.AckPolicy != jsapi.AckExplicit {
			t.Fatalf("handle %s > %s, %+v", c.Stream(), c.Name(), c.CachedInfo().Config)
		}
		handles = append(handles, c)
	}
	if n := e.nc.Stats().Requests - before; n != 0 {
		t.Fatalf("FromInfo sent %d requests", n)
	}
	// Everything sent before this flush has reached the spy.
	if err := e.nc.Flush(e.ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := spy.Pending(); n != 0 {
		m, _ := spy.NextMsg(e.ctx)
		t.Fatalf("FromInfo sent %d API messages, the first on %s", n, m.Subject)
	}
	for i, c := range handles {
		m, err := c.Next(e.ctx)
		if err != nil {
			t.Fatalf("handle %d: %v", i, err)
		}
		if err := m.AckSync(e.ctx); err != nil {
			t.Fatal(err)
		}
	}

	for _, bad := range []*jsapi.ConsumerInfo{
		nil,
		{Stream: "S"},
		{Name: "C"},
		{Stream: "S", Name: "a.b"},
		{Stream: "S", Name: "P", Config: jsapi.ConsumerConfig{DeliverSubject: "push"}},
	} {
		if c, err := pull.FromInfo(e.js, bad); err == nil {
			t.Fatalf("FromInfo(%+v) = %v", bad, c)
		}
	}
	if _, err := pull.FromInfo(e.js, &jsapi.ConsumerInfo{Stream: "S", Name: "P", Config: jsapi.ConsumerConfig{DeliverSubject: "push"}}); !errors.Is(err, pull.ErrPushConsumer) {
		t.Fatalf("push info: %v", err)
	}
}
