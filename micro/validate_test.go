package micro_test

import (
	"errors"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/micro"
)

func TestVersionValidation(t *testing.T) {
	good := []string{"0.0.0", "1.2.3", "10.20.30", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-0.3.7",
		"1.0.0-x.7.z.92", "1.0.0-alpha+001", "1.0.0+20130313144700", "1.0.0-beta+exp.sha.5114f85",
		"1.0.0-x-y-z.--", "1.0.0+21AF26D3----117B344092BD", "99999999999999999999.0.0"}
	bad := []string{"", "1", "1.2", "1.2.3.4", "01.1.1", "1.01.1", "1.1.01", "1.2.3-0123", "1.2.3-",
		"1.2.3+", "1.2.3-a..b", "1.2.3+a..b", "1.2.3-a_b", "v1.2.3", " 1.2.3", "1.2.3 ", "1.2.3+a+b",
		"-1.2.3", "1.2.-3", "1.2.3-+b", "a.b.c", "1..2"}
	s := startServer(t)
	nc := connect(t, s.URL())
	for _, v := range good {
		svc, err := micro.AddService(nc, micro.Config{Name: "v", Version: v})
		if err != nil {
			t.Errorf("version %q rejected: %v", v, err)
			continue
		}
		svc.Stop(ctxT(t))
	}
	for _, v := range bad {
		_, err := micro.AddService(nc, micro.Config{Name: "v", Version: v})
		var ce *micro.ConfigError
		if !errors.Is(err, micro.ErrInvalidVersion) || !errors.As(err, &ce) || ce.Field != "version" || ce.Value != v {
			t.Errorf("version %q: %v", v, err)
		}
	}
}

// Every invalid configuration is rejected with a typed error before any
// subscription or message reaches the server.
func TestInvalidConfigSendsNothing(t *testing.T) {
	s := startServer(t)
	nc := connect(t, s.URL())
	h := echo("")
	cases := []struct {
		name string
		cfg  micro.Config
		want error
	}{
		{"empty name", micro.Config{Version: "1.0.0"}, micro.ErrInvalidName},
		{"dot in name", micro.Config{Name: "a.b", Version: "1.0.0"}, micro.ErrInvalidName},
		{"space in name", micro.Config{Name: "a b", Version: "1.0.0"}, micro.ErrInvalidName},
		{"wildcard name", micro.Config{Name: "*", Version: "1.0.0"}, micro.ErrInvalidName},
		{"no version", micro.Config{Name: "ok"}, micro.ErrInvalidVersion},
		{"bad version", micro.Config{Name: "ok", Version: "1.0"}, micro.ErrInvalidVersion},
		{"bad queue", micro.Config{Name: "ok", Version: "1.0.0", QueueGroup: "a b"}, micro.ErrInvalidQueueGroup},
		{"queue and none", micro.Config{Name: "ok", Version: "1.0.0", QueueGroup: "g", NoQueueGroup: true}, micro.ErrInvalidConfig},
		{"root without subject", micro.Config{Name: "ok", Version: "1.0.0", Endpoint: &micro.EndpointConfig{Handler: h}}, micro.ErrInvalidSubject},
		{"root bad subject", micro.Config{Name: "ok", Version: "1.0.0", Endpoint: &micro.EndpointConfig{Subject: "a..b", Handler: h}}, micro.ErrInvalidSubject},
		{"root nil handler", micro.Config{Name: "ok", Version: "1.0.0", Endpoint: &micro.EndpointConfig{Subject: "a"}}, micro.ErrInvalidConfig},
		{"root bad name", micro.Config{Name: "ok", Version: "1.0.0", Endpoint: &micro.EndpointConfig{Name: "a.b", Subject: "a", Handler: h}}, micro.ErrInvalidName},
		{"root bad queue", micro.Config{Name: "ok", Version: "1.0.0", Endpoint: &micro.EndpointConfig{Subject: "a", Handler: h, QueueGroup: "x\ty"}}, micro.ErrInvalidQueueGroup},
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	subsBefore := s.Server().NumSubscriptions()
	outBefore := nc.Stats().OutMsgs
	for _, c := range cases {
		svc, err := micro.AddService(nc, c.cfg)
		var ce *micro.ConfigError
		if svc != nil || !errors.Is(err, c.want) || !errors.As(err, &ce) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := micro.AddService(nil, micro.Config{Name: "ok", Version: "1.0.0"}); !errors.Is(err, micro.ErrInvalidConfig) {
		t.Errorf("nil connection: %v", err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if n := s.Server().NumSubscriptions(); n != subsBefore {
		t.Fatalf("server subscriptions %d → %d", subsBefore, n)
	}
	if n := nc.Stats().OutMsgs; n != outBefore {
		t.Fatalf("messages sent %d → %d", outBefore, n)
	}
}

// Invalid endpoints are rejected before subscribing, and the service goes
// on working.
func TestInvalidEndpointSendsNothing(t *testing.T) {
	s := startServer(t)
	nc := connect(t, s.URL())
	svc := addService(t, nc, micro.Config{Name: "eps", Version: "1.0.0"})
	h := echo("")
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	before := s.Server().NumSubscriptions()
	cases := []struct {
		name string
		add  func() error
		want error
	}{
		{"empty name", func() error { return svc.AddEndpoint("", h) }, micro.ErrInvalidName},
		{"dotted name", func() error { return svc.AddEndpoint("a.b", h) }, micro.ErrInvalidName},
		{"nil handler", func() error { return svc.AddEndpoint("a", nil) }, micro.ErrInvalidConfig},
		{"empty subject", func() error { return svc.AddEndpoint("a", h, micro.EndpointSubject("")) }, micro.ErrInvalidSubject},
		{"bad subject", func() error { return svc.AddEndpoint("a", h, micro.EndpointSubject("a b")) }, micro.ErrInvalidSubject},
		{"bad queue", func() error { return svc.AddEndpoint("a", h, micro.EndpointQueueGroup("")) }, micro.ErrInvalidQueueGroup},
		{"group with >", func() error { return svc.AddGroup("x.>").AddEndpoint("a", h) }, micro.ErrInvalidSubject},
		{"group bad queue", func() error {
			return svc.AddGroup("g", micro.GroupQueueGroup("a b")).AddGroup("sub").AddEndpoint("a", h)
		}, micro.ErrInvalidQueueGroup},
	}
	for _, c := range cases {
		if err := c.add(); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if n := s.Server().NumSubscriptions(); n != before {
		t.Fatalf("server subscriptions %d → %d", before, n)
	}
	if len(svc.Info().Endpoints) != 0 {
		t.Fatalf("endpoints %+v", svc.Info().Endpoints)
	}
}

// A zero RespondOpt fails Respond, RespondJSON and Error with
// ErrInvalidOption and sends nothing: the requester gets the handler's
// next, valid response.
func TestZeroRespondOptSendsNothing(t *testing.T) {
	s := startServer(t)
	nc := connect(t, s.URL())
	svc := addService(t, nc, micro.Config{Name: "zeroopt", Version: "1.0.0"})
	errs := make(chan error, 3)
	err := svc.AddEndpoint("zero", micro.HandlerFunc(func(r micro.Request) {
		errs <- r.Respond([]byte("bad"), micro.RespondOpt{})
		errs <- r.RespondJSON("bad", micro.RespondOpt{})
		errs <- r.Error("400", "bad", nil, micro.RespondOpt{})
		r.Respond([]byte("good"))
	}))
	if err != nil {
		t.Fatal(err)
	}
	m, err := nc.Request(ctxT(t), "zero", nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Data) != "good" || micro.ResponseError(m) != nil {
		t.Fatalf("reply %q (error %v), want the valid response only", m.Data, micro.ResponseError(m))
	}
	for _, call := range []string{"Respond", "RespondJSON", "Error"} {
		if err := <-errs; !errors.Is(err, conn.ErrInvalidOption) {
			t.Fatalf("%s with a zero RespondOpt: %v, want ErrInvalidOption", call, err)
		}
	}
}
