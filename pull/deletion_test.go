package pull_test

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// F18: the stream is deleted under a consume loop. Messages ends with a
// terminal error — the stream or its consumer is gone — instead of healing
// forever, and it leaves no loop of API requests behind; Fetch on the
// consumer fails the same way.
func TestF18MessagesEndsOnStreamDelete(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	e.publish(t, 3)
	apiTotal := func() uint64 {
		info, err := e.s.Srv().Jsz(&server.JSzOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return info.API.Total
	}
	terminal := func(err error) bool {
		return errors.Is(err, jsapi.ErrStreamNotFound) || errors.Is(err, pull.ErrConsumerDeleted)
	}
	got := 0
	var last error
	for m, err := range c.Messages(e.ctx, pull.Expires(2*time.Second), pull.Heartbeat(500*time.Millisecond)) {
		if err != nil {
			last = err
			break
		}
		m.Ack()
		if got++; got == 3 {
			if err := e.js.DeleteStream(e.ctx, "S"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !terminal(last) {
		t.Fatalf("Messages ended with %v, want ErrStreamNotFound or ErrConsumerDeleted", last)
	}
	t.Logf("Messages ended with %v", last)
	// Nothing keeps asking the server once the loop has ended.
	before := apiTotal()
	time.Sleep(time.Second) // an observation window, not synchronisation
	if n := apiTotal() - before; n > 2 {
		t.Fatalf("%d JetStream API requests in the second after the loop ended", n)
	}
	if _, err := c.Fetch(e.ctx, 1); !terminal(err) {
		t.Fatalf("Fetch after the stream's deletion: %v", err)
	}
}
