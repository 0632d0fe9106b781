package pull_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// A server restart under Messages is reported to OnError, once per
// reconnect, as ErrReconnected, and the loop goes on with the messages
// stored after it.
func TestOnErrorReportsReconnect(t *testing.T) {
	e := newEnv(t, jsapi.StorageFile)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	var mu sync.Mutex
	var reports []error
	reconnected := make(chan struct{}, 16)
	onError := func(err error) {
		mu.Lock()
		reports = append(reports, err)
		mu.Unlock()
		if errors.Is(err, pull.ErrReconnected) {
			reconnected <- struct{}{}
		}
	}
	e.publish(t, 1)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	reconnectsBefore := e.nc.Stats().Reconnects
	got := 0
	for m, err := range c.Messages(ctx, pull.OnError(onError), pull.Expires(2*time.Second)) {
		if err != nil {
			t.Fatal(err)
		}
		md, _ := m.Metadata()
		if md.StreamSeq != uint64(got+1) {
			t.Fatalf("stream seq %d, want %d", md.StreamSeq, got+1)
		}
		if err := m.AckSync(e.ctx); err != nil {
			t.Fatal(err)
		}
		if got++; got == 2 {
			break
		}
		if err := e.s.Restart(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-reconnected:
		case <-time.After(15 * time.Second): // a bound on failure only
			t.Fatal("the reconnect was never reported to OnError")
		}
		e.publishAfterRestart(t, 1)
	}
	cancel()
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for _, err := range reports {
		if errors.Is(err, pull.ErrReconnected) {
			n++
		}
	}
	if reconnects := e.nc.Stats().Reconnects - reconnectsBefore; n != int(reconnects) || n == 0 {
		t.Fatalf("%d ErrReconnected reports for %d reconnects (all reports: %v)", n, reconnects, reports)
	}
}
