package kv_test

import (
	"errors"
	"testing"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/natstest"
)

// TestReplicatedConflicts: a replicated bucket reports compare-and-set
// conflicts with the other wrong-last-sequence code (10164); both codes
// are conflicts.
func TestReplicatedConflicts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	cl := natstest.NewCluster(t, 3)
	e := envOn(t, nil, cl.URL())
	b := e.bucket(t, kv.Config{Bucket: "r3", Replicas: 3})
	if _, err := cl.WaitStreamLeader("KV_r3"); err != nil {
		t.Fatal(err)
	}
	r1, err := b.Put(e.Ctx, "k", []byte("1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(e.Ctx, "k", []byte("2")); err != nil {
		t.Fatal(err)
	}
	codes := map[int]bool{}
	_, err = b.Update(e.Ctx, "k", []byte("x"), r1)
	if !errors.Is(err, kv.ErrRevisionMismatch) || !errors.Is(err, jsapi.ErrWrongLastSequence) {
		t.Fatalf("stale Update on R3: %v", err)
	}
	var ae *jsapi.APIError
	if errors.As(err, &ae) {
		codes[ae.ErrorCode] = true
	}
	_, err = b.Create(e.Ctx, "k", []byte("x"))
	if !errors.Is(err, kv.ErrKeyExists) {
		t.Fatalf("Create of an existing key on R3: %v", err)
	}
	if errors.As(err, &ae) {
		codes[ae.ErrorCode] = true
	}
	if err := b.Delete(e.Ctx, "k", kv.LastRevision(r1)); !errors.Is(err, kv.ErrRevisionMismatch) {
		t.Fatalf("stale conditional delete on R3: %v", err)
	}
	// Concurrent writers on a replicated stream also meet subjects with a
	// write in flight, which the server reports as 10164.
	race := casRace(t, e.Ctx, b, 4, 100)
	for c, n := range race {
		codes[c] = n > 0
	}
	t.Logf("server codes seen: %v (race: %v)", codes, race)
}
