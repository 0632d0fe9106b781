package kv_test

import (
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
)

// An option that is the zero value, or a constructor given a value it
// documents as invalid, fails its call with an error matching
// conn.ErrInvalidOption before anything is sent: the bucket is as it was.
func TestInvalidOptionsSendNothing(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "opts", History: 5, LimitMarkerTTL: time.Second})
	mustPut(t, b, "kept", "v")
	mustPut(t, b, "gone", "v")
	if err := b.Delete(e.Ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		call func() error
	}{
		{"Create with a zero CreateOpt", func() error {
			_, err := b.Create(e.Ctx, "new", []byte("x"), kv.CreateOpt{})
			return err
		}},
		{"Create with KeyTTL(0)", func() error {
			_, err := b.Create(e.Ctx, "new", []byte("x"), kv.KeyTTL(0))
			return err
		}},
		{"Delete with a zero DeleteOpt", func() error { return b.Delete(e.Ctx, "kept", kv.DeleteOpt{}) }},
		{"Purge with a zero PurgeOpt", func() error { return b.Purge(e.Ctx, "kept", kv.PurgeOpt{}) }},
		{"Purge with PurgeTTL(0)", func() error { return b.Purge(e.Ctx, "kept", kv.PurgeTTL(0)) }},
		{"PurgeDeletes with a zero PurgeDeletesOpt", func() error { return b.PurgeDeletes(e.Ctx, kv.PurgeDeletesOpt{}) }},
		{"PurgeDeletes with DeleteMarkersOlderThan(0)", func() error {
			return b.PurgeDeletes(e.Ctx, kv.DeleteMarkersOlderThan(0))
		}},
		{"History with a zero WatchOpt", func() error {
			_, err := b.History(e.Ctx, "kept", kv.WatchOpt{})
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { testutil.Refused(t, e.Conn, conn.ErrInvalidOption, tc.call) })
	}
	if _, err := b.Create(e.Ctx, "new", []byte("x"), kv.KeyTTL(0)); !errors.Is(err, jsapi.ErrInvalidTTL) {
		t.Fatalf("KeyTTL(0): %v; want jsapi.ErrInvalidTTL too", err)
	}
	if _, err := b.Get(e.Ctx, "kept"); err != nil {
		t.Fatalf("kept: %v", err)
	}
	if _, err := b.Get(e.Ctx, "new"); !errors.Is(err, kv.ErrKeyNotFound) {
		t.Fatalf("new: %v; want ErrKeyNotFound", err)
	}
	if h, err := b.History(e.Ctx, "gone"); err != nil || len(h) != 2 {
		t.Fatalf("history of gone: %d entries, %v; want the value and its marker", len(h), err)
	}
}
