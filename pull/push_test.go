package pull_test

import (
	"errors"
	"testing"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// TestPushConfigRefused: this package reads pull consumers only.
// FromInfo refuses the info of an existing push consumer (made here
// through jsapi, as an administrator would for another client), whether
// it comes from the create call or a lookup.
func TestPushConfigRefused(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	cfg := jsapi.ConsumerConfig{Durable: "PUSH", DeliverSubject: "deliver.here", AckPolicy: jsapi.AckExplicit}
	created, err := e.js.CreateConsumer(e.ctx, "S", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pull.FromInfo(e.js, created); !errors.Is(err, pull.ErrPushConsumer) {
		t.Fatalf("FromInfo of a created push consumer: %v", err)
	}
	found, err := e.js.Consumer(e.ctx, "S", "PUSH")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pull.FromInfo(e.js, found); !errors.Is(err, pull.ErrPushConsumer) {
		t.Fatalf("FromInfo of a push consumer looked up: %v", err)
	}
}
