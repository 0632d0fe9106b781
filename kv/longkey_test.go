package kv_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/kv"
)

// TestKeyTooLongForControlLine: a key whose subject would not fit the
// server's control line fails with conn.ErrSubjectTooLong before anything
// is sent, and the connection stays up.
func TestKeyTooLongForControlLine(t *testing.T) {
	e := newEnv(t)
	b := e.bucket(t, kv.Config{Bucket: "long"})
	key := strings.Repeat("k", 5000)
	before := e.Conn.Stats()
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, conn.ErrSubjectTooLong) {
			t.Errorf("%s of a %d-byte key: %v, want conn.ErrSubjectTooLong", what, len(key), err)
		}
	}
	_, err := b.Put(e.Ctx, key, []byte("v"))
	check("Put", err)
	_, err = b.Create(e.Ctx, key, []byte("v"))
	check("Create", err)
	_, err = b.Update(e.Ctx, key, []byte("v"), 1)
	check("Update", err)
	_, err = b.Get(e.Ctx, key)
	check("Get", err)
	check("Delete", b.Delete(e.Ctx, key))
	check("Purge", b.Purge(e.Ctx, key))
	if got := e.Conn.Stats().OutMsgs; got != before.OutMsgs {
		t.Fatalf("%d messages sent for a refused key", got-before.OutMsgs)
	}
	if _, err := b.Put(e.Ctx, "short", []byte("v")); err != nil {
		t.Fatalf("Put after the refusals: %v", err)
	}
	if st := e.Conn.Stats(); st.Reconnects != before.Reconnects || st.Disconnects != before.Disconnects {
		t.Fatalf("the connection did not stay up: %d reconnects, %d disconnects", st.Reconnects, st.Disconnects)
	}
}
