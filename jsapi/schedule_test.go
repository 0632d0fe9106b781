package jsapi_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"

	"github.com/natsio/natsio/jsapi"
)

// waitMsg polls until subject's last message satisfies ok.
func waitMsg(t *testing.T, ctx context.Context, st *jsapi.Stream, subject string, ok func(*jsapi.StoredMsg) bool) *jsapi.StoredMsg {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		m, err := st.GetLastMsgForSubject(ctx, subject)
		if err == nil && ok(m) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for a message on %s: last %v, %v", subject, m, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestScheduleEverySourceRollupCancel (server 2.14 schedules): an @every
// schedule with a source produces copies of the source's last message on
// its target, rolled up to one; CancelSchedule removes the schedule.
func TestScheduleEverySourceRollupCancel(t *testing.T) {
	js, _, ctx := pubEnv(t, `,"allow_msg_schedules":true,"allow_rollup_hdrs":true`)
	st, err := js.Stream(ctx, "P")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "p.src", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "p.sched.tick", []byte("ignored"), jsapi.ScheduleEvery(time.Second),
		jsapi.ScheduleTarget("p.tick"), jsapi.ScheduleSource("p.src"), jsapi.ScheduleRollup()); err != nil {
		t.Fatal(err)
	}
	first := waitMsg(t, ctx, st, "p.tick", func(m *jsapi.StoredMsg) bool { return true })
	if string(first.Data) != "v1" {
		t.Fatalf("produced %q, want the source's v1", first.Data)
	}
	if _, err := js.Publish(ctx, "p.src", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	// A later tick copies the new source message.
	second := waitMsg(t, ctx, st, "p.tick", func(m *jsapi.StoredMsg) bool { return string(m.Data) == "v2" })
	if sched := second.Header.Get(jsapi.HeaderScheduler); sched != "p.sched.tick" {
		t.Fatalf("produced message's scheduler %q", sched)
	}
	info, err := st.Info(ctx, jsapi.SubjectsFilter("p.tick"))
	if err != nil {
		t.Fatal(err)
	}
	if n := info.State.Subjects["p.tick"]; n != 1 {
		t.Fatalf("target holds %d messages, want 1 (rolled up)", n)
	}

	// Cancel: published on the target, it removes the schedule.
	if _, err := js.Publish(ctx, "p.tick", nil, jsapi.CancelSchedule("p.sched.tick")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetLastMsgForSubject(ctx, "p.sched.tick"); !errors.Is(err, jsapi.ErrMsgNotFound) {
		t.Fatalf("schedule still stored after cancel: %v", err)
	}
	// Cancelling on the schedule's own subject is the server's error.
	if _, err := js.Publish(ctx, "p.sched.x", nil, jsapi.CancelSchedule("p.sched.x")); err == nil {
		t.Fatal("cancel published on the schedule's own subject was accepted")
	}
}

// TestScheduleCronTimeZone: a six-field cron schedule with a time zone
// produces its message.
func TestScheduleCronTimeZone(t *testing.T) {
	js, _, ctx := pubEnv(t, `,"allow_msg_schedules":true`)
	st, err := js.Stream(ctx, "P")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "p.sched.cron", []byte("tick"), jsapi.ScheduleCron("* * * * * *"),
		jsapi.ScheduleTimeZone("Europe/Amsterdam"), jsapi.ScheduleTarget("p.cron")); err != nil {
		t.Fatal(err)
	}
	m := waitMsg(t, ctx, st, "p.cron", func(*jsapi.StoredMsg) bool { return true })
	if string(m.Data) != "tick" {
		t.Fatalf("produced %q", m.Data)
	}
}

// TestScheduleLocalChecks: what the server would refuse is refused before
// anything is sent.
func TestScheduleLocalChecks(t *testing.T) {
	js, nc, ctx := pubEnv(t, `,"allow_msg_schedules":true`)
	out := nc.Stats().OutMsgs
	for name, opts := range map[string][]jsapi.PubOpt{
		"every below a second": {jsapi.ScheduleEvery(500 * time.Millisecond), jsapi.ScheduleTarget("p.t")},
		"zone with @at":        {jsapi.ScheduleAt(time.Now().Add(time.Hour)), jsapi.ScheduleTimeZone("UTC"), jsapi.ScheduleTarget("p.t")},
		"zone with @every":     {jsapi.ScheduleEvery(time.Minute), jsapi.ScheduleTimeZone("UTC"), jsapi.ScheduleTarget("p.t")},
		"zone alone":           {jsapi.ScheduleTimeZone("UTC")},
		"empty cron":           {jsapi.ScheduleCron(""), jsapi.ScheduleTarget("p.t")},
		"cancel bad subject":   {jsapi.CancelSchedule("p.*")},
	} {
		if _, err := js.Publish(ctx, "p.sched.bad", nil, opts...); !errors.Is(err, conn.ErrInvalidOption) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if nc.Stats().OutMsgs != out {
		t.Fatal("a refused schedule was sent")
	}
}
