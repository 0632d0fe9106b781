package sysapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/sysapi"
)

// TestOutsideTheSystemAccount asks from the default account: nobody
// answers but CONNZ, which the server limits to the caller's account.
func TestOutsideTheSystemAccount(t *testing.T) {
	s := natstest.NewServer(t, natstest.SystemAccount())
	// A system account connection that the default account must not see.
	sys := s.ConnectSystem(t)
	nc := s.Connect(t)
	sc, err := sysapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	id := s.Server().ID()

	_, err = sc.PingVarz(ctx, sysapi.VarzOptions{})
	if !errors.Is(err, sysapi.ErrNoSystemAccount) || !errors.Is(err, conn.ErrNoResponders) {
		t.Fatalf("VARZ to all from the default account: %v", err)
	}
	_, err = sc.Jsz(ctx, id, sysapi.JszOptions{})
	if !errors.Is(err, sysapi.ErrNoSystemAccount) || errors.Is(err, sysapi.ErrUnknownServer) {
		t.Fatalf("JSZ to one from the default account: %v", err)
	}

	// CONNZ is imported into every account, limited to it.
	rs, err := sc.PingConnz(ctx, sysapi.ConnzOptions{Auth: true}, sysapi.Expect(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rs[0].Data.Conns {
		if c.Account == natstest.SystemAccountName {
			t.Errorf("the default account sees a system connection: %+v", c)
		}
	}
	if sys.IsClosed() {
		t.Fatal("system connection closed")
	}
}

// TestWithoutPermission asks as a system account user that may not publish
// to $SYS.REQ: the server drops the request, so it times out.
func TestWithoutPermission(t *testing.T) {
	o := natstest.NewOperator()
	s := natstest.NewServer(t, natstest.OperatorMode(o))
	limited := o.System.NewUser("limited", func(uc *jwt.UserClaims) { uc.Pub.Deny.Add("$SYS.REQ.>") })
	nc := s.Connect(t, limited.Option())
	sc, err := sysapi.New(nc, sysapi.Timeout(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	_, err = sc.PingHealthz(t.Context(), sysapi.HealthzOptions{})
	if !errors.Is(err, sysapi.ErrNoSystemAccount) || !errors.Is(err, conn.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("HEALTHZ without permission: %v", err)
	}
	_, err = sc.Varz(t.Context(), s.Server().ID(), sysapi.VarzOptions{})
	if !errors.Is(err, sysapi.ErrNoSystemAccount) {
		t.Fatalf("VARZ to one without permission: %v", err)
	}

	// The operator's system account user of natstest may.
	ok, err := sysapi.New(s.ConnectSystem(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ok.Varz(ctxT(t), s.Server().ID(), sysapi.VarzOptions{}); err != nil {
		t.Fatalf("VARZ as the system user: %v", err)
	}
}

// TestRequestErrors covers an unknown server, the server's own error, a
// count that never comes, the byte bound, bad options and a cancelled
// context.
func TestRequestErrors(t *testing.T) {
	s := natstest.NewServer(t, natstest.SystemAccount())
	sc, err := sysapi.New(s.ConnectSystem(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	id := s.Server().ID()

	if _, err := sc.Varz(ctx, "NOSUCHSERVER", sysapi.VarzOptions{}); !errors.Is(err, sysapi.ErrUnknownServer) || errors.Is(err, sysapi.ErrNoSystemAccount) {
		t.Errorf("unknown server: %v", err)
	}

	// The server refuses options it cannot read.
	_, err = sc.Request(ctx, sysapi.KindConnz, id, json.RawMessage(`{"limit":"many"}`))
	var apiErr *sysapi.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 400 || apiErr.Server == "" {
		t.Errorf("bad options: %v", err)
	}
	rs, err := sc.PingRequest(ctx, sysapi.KindConnz, json.RawMessage(`{"limit":"many"}`), sysapi.Expect(1))
	if err != nil || len(rs) != 1 || rs[0].Error == nil || rs[0].Error.Code != 400 {
		t.Errorf("bad options to all: %v %+v", err, rs)
	}

	// Two servers expected, one exists.
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	rs2, err := sc.PingIdz(short, sysapi.Expect(2))
	if !errors.Is(err, sysapi.ErrIncomplete) || len(rs2) != 1 || rs2[0].Data.ID != id {
		t.Errorf("expect 2 of 1: %v, %d replies", err, len(rs2))
	}

	// The byte bound keeps nothing that passes it.
	rs3, err := sc.PingVarz(ctx, sysapi.VarzOptions{}, sysapi.MaxBytes(100), sysapi.Expect(1))
	if !errors.Is(err, sysapi.ErrReplyLimit) || len(rs3) != 0 {
		t.Errorf("max bytes 100: %v, %d replies", err, len(rs3))
	}
	// Within the bound, MaxReplies ends it.
	rs4, err := sc.PingVarz(ctx, sysapi.VarzOptions{}, sysapi.MaxBytes(1<<20), sysapi.MaxReplies(1))
	if err != nil || len(rs4) != 1 {
		t.Errorf("max replies 1: %v, %d replies", err, len(rs4))
	}

	for _, o := range []sysapi.PingOpt{sysapi.Expect(0), sysapi.Stall(0), sysapi.MaxReplies(0), sysapi.MaxBytes(0)} {
		if _, err := sc.PingIdz(ctx, o); !errors.Is(err, conn.ErrInvalidOption) {
			t.Errorf("bad option: %v", err)
		}
	}
	if _, err := sc.Idz(ctx, ""); !errors.Is(err, conn.ErrInvalidOption) {
		t.Errorf("empty ID: %v", err)
	}
	if _, err := sysapi.New(nil); !errors.Is(err, conn.ErrInvalidOption) {
		t.Errorf("nil connection: %v", err)
	}
	if _, err := sysapi.New(s.Connect(t), sysapi.Timeout(0)); !errors.Is(err, conn.ErrInvalidOption) {
		t.Errorf("zero timeout: %v", err)
	}

	cancelled, stop := context.WithCancel(ctx)
	stop()
	if _, err := sc.PingVarz(cancelled, sysapi.VarzOptions{}); !errors.Is(err, context.Canceled) || errors.Is(err, sysapi.ErrNoSystemAccount) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestRepliesKeptAsSent answers VARZ from a responder of the default
// account (which is not the system account, so the subject is free there):
// fields unknown to the typed struct survive in Raw, and a reply that is
// not JSON is ErrBadReply.
func TestRepliesKeptAsSent(t *testing.T) {
	s := natstest.NewServer(t)
	nc := s.Connect(t)
	reply := `{"server":{"name":"future","id":"NFUTURE","ver":"9.0.0","time":"2030-01-01T00:00:00Z","shiny":true},` +
		`"data":{"server_id":"NFUTURE","server_name":"future","connections":7,"warp_drive":{"on":true}}}`
	sub, err := nc.SubscribeFunc(sysapi.Subject(sysapi.KindVarz, ""), func(m *conn.Msg) {
		_ = nc.Publish(m.Reply, []byte(reply))
		_ = nc.Publish(m.Reply, []byte("not json"))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	sc, err := sysapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := sc.PingVarz(ctxT(t), sysapi.VarzOptions{}, sysapi.Expect(2))
	if !errors.Is(err, sysapi.ErrBadReply) || len(rs) != 1 {
		t.Fatalf("a good and a bad reply: %v, %d replies", err, len(rs))
	}
	r := rs[0]
	if r.Server.Name != "future" || r.Server.Version != "9.0.0" || r.Data.Connections != 7 || r.Data.ID != "NFUTURE" {
		t.Errorf("typed reply: %+v %+v", r.Server, r.Data)
	}
	if string(r.Raw) != reply || !strings.Contains(string(r.Raw), `"warp_drive":{"on":true}`) {
		t.Errorf("raw reply changed: %s", r.Raw)
	}
}
