package jsapi_test

import (
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

// TestPublishTTLWholeSeconds: a TTL that is not a whole number of seconds
// is refused before sending (the server keeps whole seconds, so it would
// be rounded); whole seconds and TTLNever are sent as the server reads
// them.
func TestPublishTTLWholeSeconds(t *testing.T) {
	js, nc, ctx := pubEnv(t, `,"allow_msg_ttl":true`)
	out := nc.Stats().OutMsgs
	for _, d := range []time.Duration{1500 * time.Millisecond, 500 * time.Millisecond, time.Second + time.Nanosecond, 0, -2 * time.Second} {
		_, err := js.Publish(ctx, "p.ttl", nil, jsapi.TTL(d))
		if !errors.Is(err, conn.ErrInvalidOption) || !errors.Is(err, jsapi.ErrInvalidTTL) {
			t.Errorf("TTL %v: %v, want ErrInvalidOption and ErrInvalidTTL", d, err)
		}
	}
	if n := nc.Stats().OutMsgs - out; n != 0 {
		t.Fatalf("%d messages sent with a refused TTL", n)
	}
	st, err := js.Stream(ctx, "P")
	if err != nil {
		t.Fatal(err)
	}
	for d, want := range map[time.Duration]string{time.Second: "1", 90 * time.Second: "90", jsapi.TTLNever: "never"} {
		ack, err := js.Publish(ctx, "p.ttl", nil, jsapi.TTL(d))
		if err != nil {
			t.Fatalf("TTL %v: %v", d, err)
		}
		m, err := st.GetMsg(ctx, ack.Sequence)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Header.Get(jsapi.HeaderTTL); got != want {
			t.Errorf("TTL %v stored as %s %q, want %q", d, jsapi.HeaderTTL, got, want)
		}
	}
}
