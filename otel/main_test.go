package natsotel_test

import (
	"os"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/leakcheck"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pull"
)

func TestMain(m *testing.M) {
	natstest.RunIfChild() // the benchmarks' server process
	os.Exit(m.Run())
}

// An instrumented connection that published, requested and consumed
// leaves no goroutine of natsio running once closed.
func TestNoGoroutineOutlivesClose(t *testing.T) {
	k := newKit(t, true)
	before := leakcheck.Snapshot()
	nc := k.srv.Connect(t, conn.Observe(k.inst))
	stop, err := k.inst.ObserveConn(nc)
	if err != nil {
		t.Fatal(err)
	}
	js, err := jsapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx(t), jsapi.StreamConfig{Name: "L", Subjects: []string{"l.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx(t), "l.1", nil); err != nil {
		t.Fatal(err)
	}
	info, err := js.CreateConsumer(ctx(t), "L", jsapi.ConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := pull.FromInfo(js, info)
	if err != nil {
		t.Fatal(err)
	}
	for m, err := range c.Messages(ctx(t)) {
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Ack(); err != nil {
			t.Fatal(err)
		}
		break
	}
	k.collect(t)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	leakcheck.Wait(t, before, 10*time.Second)
}
