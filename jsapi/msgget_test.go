package jsapi_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"

	"github.com/natsio/natsio/jsapi"
)

func TestGetMsg(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(fmt.Sprintf("direct=%v", direct), func(t *testing.T) {
			_, nc, js := startJS(t)
			ctx := ctxT(t)
			name := "GET"
			st := mustCreateStream(t, js, jsapi.StreamConfig{Name: name, Subjects: []string{"get.>"}, AllowDirect: direct})
			// Which API a read uses.
			sn := sniff(t, nc, "$JS.API.*.*.>")

			before := time.Now().Add(-time.Second)
			mustStore(t, nc, "get.a", "a1", "X-A", "1", "X-A", "2", "X-B", "b")
			mustStore(t, nc, "get.b", "b1")
			mustStore(t, nc, "get.a", "a2")
			mustStore(t, nc, "get.c.d", "cd1", "Nats-Msg-Id", "m4")
			api := func(want string) {
				t.Helper()
				if got := sn.next(t); got != want {
					t.Fatalf("request subject %s, want %s", got, want)
				}
			}
			byJSON := "$JS.API.STREAM.MSG.GET." + name
			if direct {
				byJSON = "$JS.API.DIRECT.GET." + name
			}

			m, err := st.GetMsg(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			api(byJSON)
			if m.Subject != "get.a" || m.Sequence != 1 || string(m.Data) != "a1" || m.Time.Before(before) || m.Time.After(time.Now()) {
				t.Fatalf("msg 1: %+v", m)
			}
			// The original header block, byte for byte, without the
			// headers Direct Get adds.
			if m.Header.String() != "NATS/1.0\r\nX-A: 1\r\nX-A: 2\r\nX-B: b\r\n\r\n" {
				t.Fatalf("header: %q", m.Header)
			}
			if err := m.Header.Validate(); err != nil {
				t.Fatal(err)
			}
			// No headers: a zero Header.
			m, err = st.GetMsg(ctx, 2)
			if err != nil || !m.Header.IsZero() || string(m.Data) != "b1" || m.Subject != "get.b" {
				t.Fatalf("msg 2: %+v %v", m, err)
			}
			api(byJSON)

			// Last by subject: literal (Direct Get puts it in the subject)
			// and wildcard.
			m, err = st.GetLastMsgForSubject(ctx, "get.a")
			if err != nil || m.Sequence != 3 || string(m.Data) != "a2" {
				t.Fatalf("last get.a: %+v %v", m, err)
			}
			if direct {
				api("$JS.API.DIRECT.GET.GET.get.a")
			} else {
				api(byJSON)
			}
			m, err = st.GetLastMsgForSubject(ctx, "get.>")
			if err != nil || m.Sequence != 4 || m.Subject != "get.c.d" || m.Header.Get("Nats-Msg-Id") != "m4" {
				t.Fatalf("last get.>: %+v %v", m, err)
			}
			if m.Header.Len() != 1 {
				t.Fatalf("header fields: %q", m.Header)
			}
			api(byJSON)

			// Next by subject.
			m, err = st.GetNextMsgForSubject(ctx, "get.a", 2)
			if err != nil || m.Sequence != 3 {
				t.Fatalf("next get.a from 2: %+v %v", m, err)
			}
			m, err = st.GetNextMsgForSubject(ctx, "get.*", 0)
			if err != nil || m.Sequence != 1 {
				t.Fatalf("next get.* from 0: %+v %v", m, err)
			}

			// Not found.
			for what, get := range map[string]func() (*jsapi.StoredMsg, error){
				"seq 99":        func() (*jsapi.StoredMsg, error) { return st.GetMsg(ctx, 99) },
				"last get.zz":   func() (*jsapi.StoredMsg, error) { return st.GetLastMsgForSubject(ctx, "get.zz") },
				"last x.*":      func() (*jsapi.StoredMsg, error) { return st.GetLastMsgForSubject(ctx, "x.*") },
				"next get.b 3":  func() (*jsapi.StoredMsg, error) { return st.GetNextMsgForSubject(ctx, "get.b", 3) },
				"next get.> 10": func() (*jsapi.StoredMsg, error) { return st.GetNextMsgForSubject(ctx, "get.>", 10) },
			} {
				if m, err := get(); !errors.Is(err, jsapi.ErrMsgNotFound) {
					t.Fatalf("%s: %+v %v, want ErrMsgNotFound", what, m, err)
				}
			}

			// Delete, then not found; secure delete too.
			if err := st.DeleteMsg(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if _, err := st.GetMsg(ctx, 1); !errors.Is(err, jsapi.ErrMsgNotFound) {
				t.Fatalf("deleted: %v", err)
			}
			if m, err := st.GetLastMsgForSubject(ctx, "get.a"); err != nil || m.Sequence != 3 {
				t.Fatalf("last after delete: %+v %v", m, err)
			}
			if err := st.SecureDeleteMsg(ctx, 3); err != nil {
				t.Fatal(err)
			}
			if _, err := st.GetLastMsgForSubject(ctx, "get.a"); !errors.Is(err, jsapi.ErrMsgNotFound) {
				t.Fatalf("securely deleted: %v", err)
			}
			var ae *jsapi.APIError
			if err := st.DeleteMsg(ctx, 1); !errors.As(err, &ae) {
				t.Fatalf("delete twice: %v", err)
			}
			if err := st.DeleteMsg(ctx, 0); !errors.Is(err, conn.ErrInvalidOption) {
				t.Fatalf("delete 0: %v", err)
			}
			if _, err := st.GetMsg(ctx, 0); !errors.Is(err, conn.ErrInvalidOption) {
				t.Fatalf("get 0: %v", err)
			}
			if _, err := st.GetLastMsgForSubject(ctx, "a..b"); !errors.Is(err, conn.ErrInvalidOption) {
				t.Fatalf("bad subject: %v", err)
			}
		})
	}
}

// TestGetMsgDirectFollowsCachedConfig: the handle reads with Direct Get
// once its cached information says the stream allows it.
func TestGetMsgDirectFollowsCachedConfig(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxT(t)
	st := mustCreateStream(t, js, jsapi.StreamConfig{Name: "SW", Subjects: []string{"sw"}})
	mustStore(t, nc, "sw", "x")
	cfg := st.CachedInfo().Config
	cfg.AllowDirect = true
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	sn := sniff(t, nc, "$JS.API.>")
	if _, err := st.GetMsg(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := sn.next(t); got != "$JS.API.STREAM.MSG.GET.SW" {
		t.Fatalf("stale handle used %s", got)
	}
	if _, err := st.Info(ctx); err != nil {
		t.Fatal(err)
	}
	_ = sn.next(t) // STREAM.INFO
	if _, err := st.GetMsg(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := sn.next(t); got != "$JS.API.DIRECT.GET.SW" {
		t.Fatalf("refreshed handle used %s", got)
	}
}

func TestDeleteMsgDenied(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxT(t)
	st := mustCreateStream(t, js, jsapi.StreamConfig{Name: "ND", Subjects: []string{"nd"}, DenyDelete: true})
	mustStore(t, nc, "nd", "x")
	var ae *jsapi.APIError
	if err := st.DeleteMsg(ctx, 1); !errors.As(err, &ae) {
		t.Fatalf("deny delete: %v", err)
	}
	if m, err := st.GetMsg(ctx, 1); err != nil || string(m.Data) != "x" {
		t.Fatalf("still there: %+v %v", m, err)
	}
}

// Direct Get replies come from one server, once: the reply subject serves
// the next read too (the server routes to a subject it knows), also after
// a 404. The body of a read by sequence is {"seq":N}.
func TestDirectGetReusesReplySubject(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxT(t)
	st := mustCreateStream(t, js, jsapi.StreamConfig{Name: "DR", Subjects: []string{"dr.>"}, AllowDirect: true})
	mustStore(t, nc, "dr.a", "a1")
	mustStore(t, nc, "dr.b", "b1")
	spy, err := nc.Subscribe("$JS.API.DIRECT.GET.DR")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	read := func(seq uint64) {
		t.Helper()
		m, err := spy.NextMsg(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(`{"seq":%d}`, seq); string(m.Data) != want {
			t.Fatalf("request body %s, want %s", m.Data, want)
		}
		seen[m.Reply]++
	}
	for _, seq := range []uint64{1, 2, 1} {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		if m.Sequence != seq {
			t.Fatalf("sequence %d, want %d", m.Sequence, seq)
		}
		read(seq)
	}
	if _, err := st.GetMsg(ctx, 9); !errors.Is(err, jsapi.ErrMsgNotFound) {
		t.Fatalf("missing sequence: %v", err)
	}
	read(9)
	if _, err := st.GetMsg(ctx, 2); err != nil {
		t.Fatal(err)
	}
	read(2)
	if len(seen) != 1 {
		t.Fatalf("5 direct gets used %d reply subjects: %v", len(seen), seen)
	}
}
