package ordered_test

import (
	"context"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/leakcheck"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/ordered"
)

// Ordered reads that drain, break early and are cancelled leave no
// goroutine of natsio running once the connection is closed.
func TestNoGoroutineLeak(t *testing.T) {
	s := natstest.NewServer(t)
	before := leakcheck.Snapshot()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := conn.Connect(ctx, s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jsapi.New(nc)
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "O", Subjects: []string{"o.>"}, Storage: jsapi.StorageMemory}); err != nil {
		t.Fatal(err)
	}
	e := &env{s: s, nc: nc, js: js, ctx: ctx}
	e.publish(t, "o.a", 30)
	hb := ordered.Heartbeat(200 * time.Millisecond)
	oc := newOrdered(t, js, "O", ordered.Config{})
	if n := readAll(t, oc, ctx, 1, ordered.MaxMessages(10), hb); n != 30 {
		t.Fatalf("read %d", n)
	}
	oc2 := newOrdered(t, js, "O", ordered.Config{})
	for _, err := range oc2.Messages(ctx, hb) {
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	cctx, ccancel := context.WithCancel(ctx)
	n := 0
	for _, err := range newOrdered(t, js, "O", ordered.Config{}).Messages(cctx, hb) {
		if err != nil {
			break
		}
		if n++; n == 30 {
			ccancel() // blocked waiting for more: the cancel ends it
		}
	}
	ccancel()
	nc.Close()
	leakcheck.Wait(t, before, 10*time.Second)
}
