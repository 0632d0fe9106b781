package jsapi_test

import (
	"errors"
	"testing"

	"github.com/natsio/natsio/jsapi"
)

// A handle of a stream that allowed Direct Get when it was read goes on
// reading with Direct Get. After the stream was deleted, the Direct Get
// has no responder: the read falls back to STREAM.MSG.GET, which says
// what happened (ErrStreamNotFound), not that JetStream is not enabled.
func TestDirectGetOnDeletedStreamIsStreamNotFound(t *testing.T) {
	_, _, js := startJS(t)
	ctx := ctxT(t)
	s, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "D", Subjects: []string{"d.>"}, AllowDirect: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "d.a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteStream(ctx, "D"); err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"GetMsg": func() error { _, err := s.GetMsg(ctx, 1); return err },
		"GetLastMsgForSubject": func() error {
			_, err := s.GetLastMsgForSubject(ctx, "d.a")
			return err
		},
		"GetNextMsgForSubject": func() error {
			_, err := s.GetNextMsgForSubject(ctx, "d.>", 1)
			return err
		},
	}
	for name, call := range calls {
		err := call()
		if !errors.Is(err, jsapi.ErrStreamNotFound) || errors.Is(err, jsapi.ErrNotEnabled) {
			t.Errorf("%s on a deleted stream: %v; want ErrStreamNotFound (not ErrNotEnabled)", name, err)
		}
	}
}

// A handle read while the stream allowed Direct Get, used after the
// stream turned it off: the read falls back to STREAM.MSG.GET and returns
// the message.
func TestDirectGetAfterAllowDirectTurnedOffFallsBack(t *testing.T) {
	_, _, js := startJS(t)
	ctx := ctxT(t)
	cfg := jsapi.StreamConfig{Name: "D", Subjects: []string{"d.>"}, AllowDirect: true}
	s, err := js.CreateStream(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "d.a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	cfg.AllowDirect = false
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	m, err := s.GetMsg(ctx, 1)
	if err != nil || string(m.Data) != "x" {
		t.Fatalf("GetMsg after allow_direct was turned off: %+v, %v; want x", m, err)
	}
	m, err = s.GetLastMsgForSubject(ctx, "d.a")
	if err != nil || string(m.Data) != "x" || m.Sequence != 1 {
		t.Fatalf("GetLastMsgForSubject after allow_direct was turned off: %+v, %v; want x", m, err)
	}
	if _, err := s.GetMsg(ctx, 2); !errors.Is(err, jsapi.ErrMsgNotFound) {
		t.Fatalf("GetMsg of a missing message: %v; want ErrMsgNotFound", err)
	}
}
