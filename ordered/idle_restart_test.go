package ordered_test

import (
	"context"
	"testing"
	"time"

	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
)

// F02: a server restart while the iterator is idle (no message in flight):
// the consumer is recreated and the first message published after the
// restart is delivered — no hang, no gap.
func TestRestartWhileIdle(t *testing.T) {
	e := newEnv(t, jsapi.StorageFile)
	e.publish(t, "o.a", 5)
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	got := make(chan uint64, 16)
	done := make(chan error, 1)
	go func() {
		for m, err := range oc.Messages(ctx, ordered.Heartbeat(300*time.Millisecond)) {
			if err != nil {
				done <- err
				return
			}
			md, _ := m.Metadata()
			got <- md.StreamSeq
		}
		done <- nil
	}()
	for want := uint64(1); want <= 5; want++ {
		if seq := <-got; seq != want {
			t.Fatalf("got %d, want %d", seq, want)
		}
	}
	// Idle now: restart under it, then publish.
	if err := e.s.Restart(); err != nil {
		t.Fatal(err)
	}
	// The publish may meet the disconnect (an unknown outcome): retry
	// with the same message ID, which the stream stores once.
	for attempt := 0; ; attempt++ {
		_, err := testutil.Retrying(t, e.js, 20, 50*time.Millisecond).Publish(e.ctx, "o.a", []byte("after"), jsapi.MsgID("after-restart"))
		if err == nil {
			break
		}
		if attempt == 20 {
			t.Fatal(err)
		}
	}
	select {
	case seq := <-got:
		if seq != 6 {
			t.Fatalf("after restart got %d, want 6", seq)
		}
	case err := <-done:
		t.Fatalf("iterator ended: %v", err)
	case <-ctx.Done():
		t.Fatal("no delivery after an idle restart")
	}
	cancel()
	<-done
}
