package conn_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
)

// traceStall keeps trace tests short: one server sends its report at once.
const traceStall = 100 * time.Millisecond

func TestTraceOnlyNotDelivered(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	sc := connect(t, s.URL(), conn.Name("traced-sub"))
	sub, err := sc.Subscribe("trace.only")
	if err != nil {
		t.Fatal(err)
	}
	sc.Flush(ctxT(t))
	nc := connect(t, s.URL(), conn.Name("tracer"))
	var h proto.Header
	h.Set("App", "1")
	evs, err := nc.Trace(ctxT(t), "trace.only", &h, []byte("secret"), conn.TraceOnly(), conn.TraceStall(traceStall))
	if err != nil {
		t.Fatal(err)
	}
	if h.Len() != 1 {
		t.Fatalf("Trace modified the caller's header: %d fields", h.Len())
	}
	if len(evs) != 1 {
		t.Fatalf("%d reports from one server, want 1", len(evs))
	}
	ev := evs[0]
	in := ev.Ingress()
	if in == nil || in.Kind != conn.TraceKindClient || in.Subject != "trace.only" || in.Name != "tracer" || in.Account == "" {
		t.Fatalf("ingress %+v", in)
	}
	eg := ev.Egresses()
	if len(eg) != 1 || eg[0].Kind != conn.TraceKindClient || eg[0].Subscription != "trace.only" || eg[0].Name != "traced-sub" {
		t.Fatalf("egresses %+v", eg)
	}
	if ev.Server.ID != s.Server().ID() || ev.Server.Version == "" || ev.Request.MsgSize == 0 {
		t.Fatalf("server/request %+v %+v", ev.Server, ev.Request)
	}
	if v := ev.Request.Header[conn.HeaderTraceOnly]; len(v) != 1 || v[0] != "true" {
		t.Fatalf("request header %v", ev.Request.Header)
	}
	if len(ev.Events[0].Raw) == 0 {
		t.Fatal("entry without Raw")
	}
	// Nothing was delivered: the first message the subscriber sees is a
	// marker published after the report arrived (the server sends the
	// report after processing the message).
	if err := nc.Publish("trace.only", []byte("marker")); err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(ctxT(t))
	if err != nil || string(m.Data) != "marker" {
		t.Fatalf("subscriber got %v %v before the marker", m, err)
	}
	if n := conn.NumSubs(nc); n != 0 {
		t.Fatalf("trace inbox left: %d subscriptions", n)
	}
}

func TestTraceDelivered(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	sc := connect(t, s.URL())
	sub, err := sc.QueueSubscribe("trace.deliver", "workers")
	if err != nil {
		t.Fatal(err)
	}
	sc.Flush(ctxT(t))
	nc := connect(t, s.URL())
	evs, err := nc.Trace(ctxT(t), "trace.deliver", nil, []byte("hello"), conn.TraceStall(traceStall))
	if err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(ctxT(t))
	if err != nil || string(m.Data) != "hello" {
		t.Fatalf("subscriber: %v %v", m, err)
	}
	if dest := m.Header.Get(conn.HeaderTraceDest); dest == "" {
		t.Fatal("delivered message lost its trace header")
	}
	if len(evs) != 1 {
		t.Fatalf("%d reports, want 1", len(evs))
	}
	eg := evs[0].Egresses()
	if len(eg) != 1 || eg[0].Queue != "workers" || eg[0].Error != "" {
		t.Fatalf("egresses %+v", eg)
	}
	if _, only := evs[0].Request.Header[conn.HeaderTraceOnly]; only {
		t.Fatal("Nats-Trace-Only sent without TraceOnly")
	}
}

func TestTraceJetStream(t *testing.T) {
	s := natstest.NewServer(t)
	nc := connect(t, s.URL())
	cfg := []byte(`{"name":"TRACED","subjects":["js.trace.>"],"storage":"memory"}`)
	if r, err := nc.Request(ctxT(t), "$JS.API.STREAM.CREATE.TRACED", cfg); err != nil || len(r.Data) == 0 {
		t.Fatalf("stream create: %v", err)
	}
	evs, err := nc.Trace(ctxT(t), "js.trace.1", nil, []byte("stored"), conn.TraceStall(traceStall))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 {
		t.Fatalf("%d reports, want 1", len(evs))
	}
	js := evs[0].JetStream()
	if js == nil || js.Stream != "TRACED" || js.StreamSubject != "js.trace.1" || js.Error != "" {
		t.Fatalf("JetStream entry %+v in %+v", js, evs[0].Events)
	}
	// Trace-only reaches the stream without storing.
	evs, err = nc.Trace(ctxT(t), "js.trace.2", nil, []byte("not stored"), conn.TraceOnly(), conn.TraceStall(traceStall))
	if err != nil || len(evs) != 1 || evs[0].JetStream() == nil {
		t.Fatalf("trace only: %v %+v", err, evs)
	}
	info, err := nc.Request(ctxT(t), "$JS.API.STREAM.INFO.TRACED", nil)
	if err != nil {
		t.Fatal(err)
	}
	var si struct {
		State struct {
			Msgs uint64 `json:"messages"`
		} `json:"state"`
	}
	if err := json.Unmarshal(info.Data, &si); err != nil || si.State.Msgs != 1 {
		t.Fatalf("stream holds %d messages, want the one traced without TraceOnly (%v)", si.State.Msgs, err)
	}
}

// A report the servers compress on request is decompressed.
func TestTraceCompressed(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	sc := connect(t, s.URL())
	sc.Subscribe("trace.z")
	sc.Flush(ctxT(t))
	for _, enc := range []string{"gzip", "snappy"} {
		var h proto.Header
		h.Set("Accept-Encoding", enc)
		evs, err := nc.Trace(ctxT(t), "trace.z", &h, nil, conn.TraceOnly(), conn.TraceStall(traceStall))
		if err != nil || len(evs) != 1 || len(evs[0].Egresses()) != 1 {
			t.Fatalf("%s: %v %+v", enc, err, evs)
		}
	}
}

func TestTraceVersionCheck(t *testing.T) {
	for v, want := range map[string]bool{
		"2.11.0": true, "2.15.2": true, "2.11.0-dev": true, "3.0.0": true, "v2.12.1": true,
		"2.10.22": false, "2.2.0": false, "1.99.0": false, "": true, "weird": true,
	} {
		if got := conn.VersionAtLeast(v, 2, 11); got != want {
			t.Errorf("%q: %v, want %v", v, got, want)
		}
	}
}

func TestTraceNoSubscriber(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	// No interest: the server still reports the ingress, and nothing else.
	evs, err := nc.Trace(ctxT(t), "trace.nobody", nil, nil, conn.TraceOnly(), conn.TraceStall(traceStall))
	if err != nil || len(evs) != 1 || evs[0].Ingress() == nil || len(evs[0].Egresses()) != 0 {
		t.Fatalf("%v %+v", err, evs)
	}
}

func TestTraceInvalid(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	nc := connect(t, s.URL())
	ctx := ctxT(t)
	var noCtx context.Context
	bad := new(proto.Header)
	bad.Set("Bad Key", "v")
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"bad subject", trace(nc, ctx, "a b", nil), conn.ErrBadSubject},
		{"wildcard", trace(nc, ctx, "a.>", nil), conn.ErrBadSubject},
		{"bad header", trace(nc, ctx, "a", bad), conn.ErrBadHeader},
		{"nil ctx", trace(nc, noCtx, "a", nil), conn.ErrNilContext},
		{"stall", trace(nc, ctx, "a", nil, conn.TraceStall(0)), conn.ErrInvalidOption},
		{"timeout", trace(nc, ctx, "a", nil, conn.TraceTimeout(-time.Second)), conn.ErrInvalidOption},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
	if n := conn.NumSubs(nc); n != 0 {
		t.Fatalf("%d subscriptions after invalid traces", n)
	}
}

func trace(nc *conn.Conn, ctx context.Context, subject string, h *proto.Header, opts ...conn.TraceOpt) error {
	_, err := nc.Trace(ctx, subject, h, nil, opts...)
	return err
}
