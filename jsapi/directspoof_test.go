package jsapi_test

import (
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
)

// A message stored with fields named as those the server adds to a Direct
// Get reply (any client may publish them) is read with the server's
// values, which the server appends after the stored ones; its own fields
// stay in its Header.
func TestDirectGetStoredServerFields(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxT(t)
	st := mustCreateStream(t, js, jsapi.StreamConfig{Name: "SP", Subjects: []string{"sp.>"}, AllowDirect: true})
	mustStore(t, nc, "sp.a", "a1")
	before := time.Now().Add(-time.Minute)
	seq := mustStore(t, nc, "sp.evil", "evil", "Nats-Subject", "sp.a", "Nats-Sequence", "nope",
		"Nats-Time-Stamp", "never", "Nats-Stream", "X", "X-Own", "1")
	reads := map[string]func() (*jsapi.StoredMsg, error){
		"GetMsg":                func() (*jsapi.StoredMsg, error) { return st.GetMsg(ctx, seq) },
		"GetLastMsgForSubject":  func() (*jsapi.StoredMsg, error) { return st.GetLastMsgForSubject(ctx, "sp.evil") },
		"GetNextMsgForSubject":  func() (*jsapi.StoredMsg, error) { return st.GetNextMsgForSubject(ctx, "sp.>", 2) },
		"GetLastMsgForSubject*": func() (*jsapi.StoredMsg, error) { return st.GetLastMsgForSubject(ctx, "sp.*") },
	}
	for name, read := range reads {
		m, err := read()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if m.Subject != "sp.evil" || m.Sequence != seq || m.Time.Before(before) || string(m.Data) != "evil" {
			t.Fatalf("%s: %s #%d at %v; want sp.evil #%d now", name, m.Subject, m.Sequence, m.Time, seq)
		}
		if m.Header.Get("Nats-Sequence") != "nope" || m.Header.Get("Nats-Subject") != "sp.a" ||
			m.Header.Get("Nats-Stream") != "X" || m.Header.Get("X-Own") != "1" || m.Header.Len() != 5 {
			t.Fatalf("%s: stored header %v", name, m.Header)
		}
	}
}
