package kv_test

import (
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
)

// TestKeyTTLWholeSeconds: KeyTTL and PurgeTTL follow jsapi.TTL's rule, a
// whole number of seconds, at least one: anything else is refused before
// sending instead of being rounded by the server.
func TestKeyTTLWholeSeconds(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "wholettl", LimitMarkerTTL: time.Second})
	if _, err := b.Put(e.Ctx, "p", []byte("v")); err != nil {
		t.Fatal(err)
	}
	out := e.Conn.Stats().OutMsgs
	for _, d := range []time.Duration{1500 * time.Millisecond, time.Millisecond, time.Minute + time.Millisecond} {
		if _, err := b.Create(e.Ctx, "k", nil, kv.KeyTTL(d)); !errors.Is(err, conn.ErrInvalidOption) || !errors.Is(err, jsapi.ErrInvalidTTL) {
			t.Errorf("KeyTTL(%v): %v, want ErrInvalidOption and ErrInvalidTTL", d, err)
		}
		if err := b.Purge(e.Ctx, "p", kv.PurgeTTL(d)); !errors.Is(err, conn.ErrInvalidOption) || !errors.Is(err, jsapi.ErrInvalidTTL) {
			t.Errorf("PurgeTTL(%v): %v, want ErrInvalidOption and ErrInvalidTTL", d, err)
		}
	}
	if n := e.Conn.Stats().OutMsgs - out; n != 0 {
		t.Fatalf("%d messages sent with a refused TTL", n)
	}
	if _, err := b.Create(e.Ctx, "k", nil, kv.KeyTTL(2*time.Second)); err != nil {
		t.Fatalf("KeyTTL(2s): %v", err)
	}
}
