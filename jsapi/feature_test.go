package jsapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

// A feature the connected server's level reaches is used as before: the
// check is silent.
func TestFeatureCheckPassesOnCurrentServer(t *testing.T) {
	_, _, js := startJS(t)
	ctx := ctxT(t)
	lvl, err := js.APILevel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for f := jsapi.FeatureMsgTTL; f <= jsapi.FeatureAPILevel5; f++ {
		err := js.Check(ctx, f)
		if f.APILevel() <= lvl && err != nil {
			t.Errorf("%s (level %d) on a level %d server: %v", f, f.APILevel(), lvl, err)
		}
		if f.APILevel() > lvl && !errors.Is(err, jsapi.ErrServerTooOld) {
			t.Errorf("%s (level %d) on a level %d server: %v, want ErrServerTooOld", f, f.APILevel(), lvl, err)
		}
	}
}

// When the client's idea of the server's level is wrong (behind a domain,
// a cluster mid-upgrade), the server's refusal of Nats-Required-Api-Level
// (412, err_code 10185) comes back as the same *FeatureError, wrapping the
// server's error, and nothing is created.
func TestFeatureRefusedByServer(t *testing.T) {
	_, _, js := startJS(t)
	ctx := ctxT(t)
	restore := jsapi.SetFeatureLevel(jsapi.FeatureMsgTTL, 99)
	defer restore()
	jsapi.AssumeRemoteLevel(js, 1000)
	_, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "T", Subjects: []string{"t.>"}, AllowMsgTTL: true})
	var fe *jsapi.FeatureError
	if !errors.As(err, &fe) {
		t.Fatalf("got %v, want a *FeatureError", err)
	}
	if fe.Feature != jsapi.FeatureMsgTTL || fe.NeedAPILevel != 99 || fe.ServerAPILevel != -1 || fe.ServerVersion != "" {
		t.Fatalf("feature error %+v", fe)
	}
	var ae *jsapi.APIError
	if !errors.As(err, &ae) || ae.Code != 412 || ae.ErrorCode != 10185 {
		t.Fatalf("wrapped %v, want the server's 412 / 10185", fe.Err)
	}
	if !errors.Is(err, jsapi.ErrServerTooOld) || !errors.Is(err, jsapi.ErrRequiredAPILevel) {
		t.Fatalf("%v does not match ErrServerTooOld and ErrRequiredAPILevel", err)
	}
	if _, err := js.Stream(ctx, "T"); !errors.Is(err, jsapi.ErrStreamNotFound) {
		t.Fatalf("stream after the refusal: %v", err)
	}
	// A request that needs no level sends no header and is served.
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
		t.Fatal(err)
	}
}

// Nats-Required-Api-Level goes with a request whose body uses a
// level-gated field, and the server accepts the level it has.
func TestRequiredLevelHeaderAccepted(t *testing.T) {
	_, _, js := startJS(t)
	ctx := ctxT(t)
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "C", Subjects: []string{"c.>"}, AllowMsgSchedules: true, AllowMsgTTL: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateConsumer(ctx, "C", jsapi.ConsumerConfig{Durable: "p", PauseUntil: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
}

func TestFeatureErrorText(t *testing.T) {
	e := &jsapi.FeatureError{Feature: jsapi.FeatureMsgTTL, NeedVersion: "2.11.0", NeedAPILevel: 1, ServerVersion: "2.10.29", ServerAPILevel: 0}
	want := "jsapi: per-message TTL needs server 2.11.0 (API level 1); server 2.10.29 (API level 0) is too old"
	if e.Error() != want {
		t.Fatalf("%q\nwant %q", e.Error(), want)
	}
	if !strings.Contains(jsapi.Feature(200).String(), "200") || jsapi.Feature(200).Version() != "" {
		t.Fatal("unknown feature")
	}
}

func TestCheckUnknownFeature(t *testing.T) {
	_, _, js := startJS(t)
	for _, f := range []jsapi.Feature{0, 200} {
		if err := js.Check(ctxT(t), f); !errors.Is(err, conn.ErrInvalidOption) {
			t.Errorf("Check(%d): %v, want ErrInvalidOption", f, err)
		}
	}
	var nilCtx context.Context
	if err := js.Check(nilCtx, jsapi.FeatureMsgTTL); !errors.Is(err, conn.ErrNilContext) {
		t.Errorf("nil ctx: %v", err)
	}
}
