package streamstore

import (
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

var (
	errInvalid  = errors.New("invalid")
	errNotFound = errors.New("not found")
	testKind    = &Kind{Prefix: "T_", List: "$T.*.>", InvalidName: errInvalid, NotFound: errNotFound}
)

// The shared part of the mapping: defaults for the zero fields, the
// kind's prefix, and the checks before anything is sent.
func TestStreamConfig(t *testing.T) {
	sc, err := testKind.StreamConfig(Base{Name: "b", Compression: true, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Name != "T_b" || sc.Replicas != 1 || sc.MaxBytes != -1 || sc.Discard != jsapi.DiscardNew ||
		!sc.AllowRollup || !sc.AllowDirect || sc.Compression != jsapi.CompressionS2 || sc.MaxAge != time.Hour {
		t.Fatalf("%+v", sc)
	}
	for _, name := range []string{"", "a.b", "a b", "a*", "ä"} {
		if _, err := testKind.StreamConfig(Base{Name: name}); !errors.Is(err, errInvalid) {
			t.Errorf("name %q: %v", name, err)
		}
	}
	for _, b := range []Base{{Name: "b", TTL: -1}, {Name: "b", MaxBytes: -2}, {Name: "b", Replicas: -1}} {
		if _, err := testKind.StreamConfig(b); !errors.Is(err, conn.ErrInvalidOption) {
			t.Errorf("%+v: %v", b, err)
		}
	}
}

// A store's error joined with the server's matches both; a missing
// stream is the kind's NotFound.
func TestErrors(t *testing.T) {
	err := testKind.Err(&jsapi.APIError{Code: 404, ErrorCode: 10059, Description: "stream not found"})
	if !errors.Is(err, errNotFound) || !errors.Is(err, jsapi.ErrStreamNotFound) {
		t.Fatalf("%v", err)
	}
	child := Child("child", errNotFound)
	if !errors.Is(child, errNotFound) || errors.Is(errNotFound, child) {
		t.Fatal("child does not match its parent only")
	}
	if testKind.Err(nil) != nil || testKind.PubErr(nil) != nil {
		t.Fatal("nil is not nil")
	}
}

// Conflicting and invalid watch options are refused.
func TestSpec(t *testing.T) {
	var s Spec
	for _, o := range []WatchOpt{{}, Resume(0), Heartbeat(time.Millisecond)} {
		if err := s.Add(o); !errors.Is(err, conn.ErrInvalidOption) {
			t.Errorf("%+v: %v", o, err)
		}
	}
	s = Spec{}
	_ = s.Add(IncludeHistory())
	_ = s.Add(UpdatesOnly())
	if err := s.Check(); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("history with updates only: %v", err)
	}
}
