package jsapi_test

import (
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

// TestScheduleForms: every schedule form the package accepts is sent as
// Nats-Schedule in the form the server reads, and a 2.15 server stores the
// schedule with its headers; unknown aliases and malformed patterns are
// refused before sending.
func TestScheduleForms(t *testing.T) {
	js, nc, ctx := pubEnv(t, `,"allow_msg_schedules":true`)
	st, err := js.Stream(ctx, "P")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	for i, c := range []struct {
		opt  jsapi.PubOpt
		want string
	}{
		{jsapi.ScheduleCron("@yearly"), "@yearly"},
		{jsapi.ScheduleCron("@annually"), "@annually"},
		{jsapi.ScheduleCron("@monthly"), "@monthly"},
		{jsapi.ScheduleCron("@weekly"), "@weekly"},
		{jsapi.ScheduleCron("@daily"), "@daily"},
		{jsapi.ScheduleCron("@midnight"), "@midnight"},
		{jsapi.ScheduleCron("@hourly"), "@hourly"},
		{jsapi.ScheduleCron("0 30 9 * * 1-5"), "0 30 9 * * 1-5"},
		{jsapi.ScheduleCron("@every 90s"), "@every 90s"},
		{jsapi.ScheduleCron("@at " + at.Format(time.RFC3339)), "@at " + at.Format(time.RFC3339)},
		{jsapi.ScheduleEvery(90 * time.Second), "@every 1m30s"},
		{jsapi.ScheduleEvery(1500 * time.Millisecond), "@every 1.5s"},
		{jsapi.ScheduleAt(at), "@at " + at.Format(time.RFC3339)},
	} {
		subj := "p.sched.s" + string(rune('a'+i))
		target := "p.out.s" + string(rune('a'+i))
		ack, err := js.Publish(ctx, subj, []byte("tick"), c.opt, jsapi.ScheduleTarget(target))
		if err != nil {
			t.Errorf("%s: %v", c.want, err)
			continue
		}
		m, err := st.GetMsg(ctx, ack.Sequence)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Header.Get(jsapi.HeaderSchedule); got != c.want || m.Header.Get(jsapi.HeaderScheduleTarget) != target || m.Subject != subj {
			t.Errorf("stored schedule on %s: %s %q, target %q; want %q, %q", m.Subject, jsapi.HeaderSchedule, got,
				m.Header.Get(jsapi.HeaderScheduleTarget), c.want, target)
		}
	}
	// A time zone goes with a cron pattern or an alias.
	if _, err := js.Publish(ctx, "p.sched.tz", nil, jsapi.ScheduleCron("@daily"), jsapi.ScheduleTimeZone("Europe/Amsterdam"),
		jsapi.ScheduleTarget("p.out.tz")); err != nil {
		t.Errorf("@daily in a time zone: %v", err)
	}

	out := nc.Stats().OutMsgs
	for _, spec := range []string{"@fortnightly", "@Daily", "@every", "@every 500ms", "@every soon", "@at tomorrow",
		"* * * * *", "* * * * * * *", "   "} {
		_, err := js.Publish(ctx, "p.sched.bad", nil, jsapi.ScheduleCron(spec), jsapi.ScheduleTarget("p.out.bad"))
		if !errors.Is(err, conn.ErrInvalidOption) || !errors.Is(err, jsapi.ErrSchedules) {
			t.Errorf("ScheduleCron(%q): %v, want ErrInvalidOption and ErrSchedules", spec, err)
		}
	}
	if _, err := js.Publish(ctx, "p.sched.bad", nil, jsapi.ScheduleCron("@every 1m"), jsapi.ScheduleTimeZone("UTC"),
		jsapi.ScheduleTarget("p.out.bad")); !errors.Is(err, conn.ErrInvalidOption) {
		t.Errorf("@every through ScheduleCron with a time zone: %v", err)
	}
	if n := nc.Stats().OutMsgs - out; n != 0 {
		t.Fatalf("%d refused schedules were sent", n)
	}
	// Six fields the server cannot parse: its error.
	_, err = js.Publish(ctx, "p.sched.bad", nil, jsapi.ScheduleCron("99 * * * * *"), jsapi.ScheduleTarget("p.out.bad"))
	var ae *jsapi.APIError
	if !errors.Is(err, jsapi.ErrSchedules) || !errors.As(err, &ae) {
		t.Fatalf("a second of 99: %v, want the server's ErrSchedules", err)
	}
	if _, err := st.GetLastMsgForSubject(ctx, "p.sched.bad"); !errors.Is(err, jsapi.ErrMsgNotFound) {
		t.Fatalf("a refused schedule was stored: %v", err)
	}
}
