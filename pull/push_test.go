package pull_test

import (
	"errors"
	"testing"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// TestPushConfigRefused: this package reads pull consumers only. A
// configuration with a DeliverSubject is refused by Create and
// CreateOrUpdate before any request (no consumer appears on the server),
// and Bind refuses an existing push consumer (made here through jsapi, as
// an administrator would for another client).
func TestPushConfigRefused(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	cfg := jsapi.ConsumerConfig{Durable: "PUSH", DeliverSubject: "deliver.here", AckPolicy: jsapi.AckExplicit}
	if _, err := pull.Create(e.ctx, e.js, "S", cfg); !errors.Is(err, pull.ErrPushConsumer) {
		t.Fatalf("Create with a deliver subject: %v", err)
	}
	if _, err := pull.CreateOrUpdate(e.ctx, e.js, "S", cfg); !errors.Is(err, pull.ErrPushConsumer) {
		t.Fatalf("CreateOrUpdate with a deliver subject: %v", err)
	}
	for name, err := range e.js.ConsumerNames(e.ctx, "S") {
		t.Fatalf("consumer %q %v exists after refused creations", name, err)
	}
	if _, err := e.js.CreateConsumer(e.ctx, "S", cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := pull.Bind(e.ctx, e.js, "S", "PUSH"); !errors.Is(err, pull.ErrPushConsumer) {
		t.Fatalf("Bind to a push consumer: %v", err)
	}
}
