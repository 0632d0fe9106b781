package jsapi_test

import (
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

// TestScheduleTTL: ScheduleTTL follows TTL's rule. A TTL that is not a
// whole number of seconds is refused before sending; a valid one is sent
// as Nats-Schedule-TTL in seconds, stored with the schedule, and the
// server gives each produced message that Nats-TTL.
func TestScheduleTTL(t *testing.T) {
	js, nc, ctx := pubEnv(t, `,"allow_msg_schedules":true,"allow_msg_ttl":true`)
	st, err := js.Stream(ctx, "P")
	if err != nil {
		t.Fatal(err)
	}
	out := nc.Stats().OutMsgs
	for _, d := range []time.Duration{500 * time.Millisecond, 1500 * time.Millisecond, 0} {
		_, err := js.Publish(ctx, "p.sched.bad", nil, jsapi.ScheduleEvery(time.Second),
			jsapi.ScheduleTarget("p.bad"), jsapi.ScheduleTTL(d))
		if !errors.Is(err, conn.ErrInvalidOption) || !errors.Is(err, jsapi.ErrSchedules) {
			t.Errorf("ScheduleTTL(%v): %v, want ErrInvalidOption and ErrSchedules", d, err)
		}
	}
	if n := nc.Stats().OutMsgs - out; n != 0 {
		t.Fatalf("%d messages sent with a refused schedule TTL", n)
	}

	ack, err := js.Publish(ctx, "p.sched.ttl", []byte("tick"), jsapi.ScheduleEvery(time.Second),
		jsapi.ScheduleTarget("p.ttl"), jsapi.ScheduleTTL(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	sched, err := st.GetMsg(ctx, ack.Sequence)
	if err != nil {
		t.Fatal(err)
	}
	if got := sched.Header.Get(jsapi.HeaderScheduleTTL); got != "5" {
		t.Fatalf("schedule stored with %s %q, want \"5\"", jsapi.HeaderScheduleTTL, got)
	}
	m := waitMsg(t, ctx, st, "p.ttl", func(*jsapi.StoredMsg) bool { return true })
	if got := m.Header.Get(jsapi.HeaderTTL); got != "5" || string(m.Data) != "tick" {
		t.Fatalf("produced message %q with %s %q, want tick with \"5\"", m.Data, jsapi.HeaderTTL, got)
	}
}
