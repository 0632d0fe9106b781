package conn_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/proto"
)

type countingJWT struct{ n atomic.Int32 }

func (j *countingJWT) opt() conn.Option {
	return conn.UserJWT(func() (string, error) {
		return fmt.Sprintf("jwt-%d", j.n.Add(1)), nil
	}, func(nonce []byte) ([]byte, error) { return []byte("sig:" + string(nonce)), nil })
}

// connectJWT returns the jwt field of a CONNECT.
func connectJWT(t *testing.T, js []byte) string {
	t.Helper()
	var cm struct {
		JWT string `json:"jwt"`
		Sig string `json:"sig"`
	}
	if err := json.Unmarshal(js, &cm); err != nil {
		t.Fatalf("CONNECT %s: %v", js, err)
	}
	if cm.Sig == "" {
		t.Fatalf("CONNECT without nonce signature: %s", js)
	}
	return cm.JWT
}

// TestAuthExpiredReconnect: a live connection gets -ERR 'User
// Authentication Expired'; the client reports it as a *ServerError,
// reconnects, and calls the JWT callback again for the new CONNECT.
func TestAuthExpiredReconnect(t *testing.T) {
	fs := startFake(t, withScript(refuseAuth("User Authentication Expired", func(int) bool { return false })))
	var jwt countingJWT
	ev := &testutil.Events{}
	nc := fs.connect(t, jwt.opt(), testutil.FastReconnect(), ev.Opt())
	c1 := fs.client(t, 1)
	if err := c1.SendErr("User Authentication Expired"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })

	e, _, _ := ev.First(conn.EventServerError)
	var se *conn.ServerError
	if !errors.As(e.Err, &se) || !errors.Is(se, conn.ErrAuthExpired) || !se.Fatal() {
		t.Fatalf("server error event %v, want *ServerError matching ErrAuthExpired (events: %v)", e.Err, ev)
	}
	d, _, _ := ev.First(conn.EventDisconnected)
	if !errors.Is(d.Err, conn.ErrAuthExpired) {
		t.Fatalf("disconnected with %v, want ErrAuthExpired", d.Err)
	}
	waitClosed(t, c1, "the client to drop the expired connection")
	if got := jwt.n.Load(); got != 2 {
		t.Fatalf("JWT callback called %d times, want 2 (once per connection)", got)
	}
	for i := 1; i <= 2; i++ {
		op := fs.client(t, i).Ops()[0]
		if got, want := connectJWT(t, op.Text), fmt.Sprintf("jwt-%d", i); got != want {
			t.Fatalf("connection %d sent %q, want the fresh %q", i, got, want)
		}
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatalf("flush after reconnect: %v", err)
	}
}

// TestAuthRefusedOnceThenAccepted: the connection is lost, the first
// reconnect attempt is refused with 'User Authentication Expired', the
// next (with a fresh JWT) is accepted.
func TestAuthRefusedOnceThenAccepted(t *testing.T) {
	fs := startFake(t, withScript(refuseAuth("User Authentication Expired", func(i int) bool { return i == 2 })))
	var jwt countingJWT
	ev := &testutil.Events{}
	nc := fs.connect(t, jwt.opt(), testutil.FastReconnect(), ev.Opt())
	nc.ForceReconnect()
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	waitClosed(t, fs.client(t, 2), "the client to drop the refused attempt")
	if got := jwt.n.Load(); got != 3 {
		t.Fatalf("JWT callback called %d times, want 3 (once per attempt)", got)
	}
	for i := 1; i <= 3; i++ {
		op := fs.client(t, i).Ops()[0]
		if got, want := connectJWT(t, op.Text), fmt.Sprintf("jwt-%d", i); got != want {
			t.Fatalf("connection %d sent %q, want the fresh %q", i, got, want)
		}
	}
	if nc.IsClosed() || fs.Accepted() != 3 {
		t.Fatalf("closed %v, %d connections", nc.IsClosed(), fs.Accepted())
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

// TestAuthErrorOnReconnectReported: the connection is lost for another
// reason and the reconnect attempt is refused with 'User Authentication
// Expired'. The refusal must reach the application as an event carrying the
// *ServerError, not only a log line.
func TestAuthErrorOnReconnectReported(t *testing.T) {
	fs := startFake(t, withScript(refuseAuth("User Authentication Expired", func(i int) bool { return i == 2 })))
	var jwt countingJWT
	ev := &testutil.Events{}
	nc := fs.connect(t, jwt.opt(), testutil.FastReconnect(), ev.Opt())
	nc.ForceReconnect()
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	if jwt.n.Load() != 3 {
		t.Fatalf("JWT callback called %d times, want 3", jwt.n.Load())
	}
	if !ev.Any(0, conn.ErrAuthExpired) {
		t.Fatalf("no event reported the refused attempt's ErrAuthExpired; events: %v", ev)
	}
}

// TestRepeatedAuthErrorCloses: when every reconnect attempt is refused
// with the same authentication error, the client stops retrying and closes
// with that error (RELIABILITY.md F12: "If the same auth error comes back
// twice, close").
func TestRepeatedAuthErrorCloses(t *testing.T) {
	fs := startFake(t, withScript(refuseAuth("User Authentication Expired", func(i int) bool { return i >= 2 })))
	var jwt countingJWT
	ev := &testutil.Events{}
	nc := fs.connect(t, jwt.opt(), testutil.FastReconnect(), ev.Opt())
	nc.ForceReconnect()
	select {
	case <-nc.Closed():
	case <-time.After(5 * time.Second):
		t.Fatalf("still retrying after %d refused attempts", fs.Accepted()-1)
	}
	if err := nc.Err(); !errors.Is(err, conn.ErrAuthExpired) {
		t.Fatalf("closed with %v, want ErrAuthExpired", err)
	}
}

func TestMaxConnectionsExceededRetries(t *testing.T) {
	// Connection 1 is accepted; the server then drops it; attempts 2 and 3
	// are refused as a server at max_connections does (INFO, -ERR, close);
	// attempt 4 is accepted.
	fs := startFake(t, withScript(func(c *fakeserver.Client) {
		if c.Index() == 2 || c.Index() == 3 {
			_ = c.SendInfo(nil)
			_ = c.SendErr("maximum connections exceeded")
			<-c.Context().Done()
			return
		}
		_, _ = c.Handshake(c.Context(), nil)
	}))
	ev := &testutil.Events{}
	nc := fs.connect(t, testutil.FastReconnect(), ev.Opt())
	sub, err := nc.Subscribe("f13")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	fs.client(t, 1).Close()
	eventually(t, "reconnect", func() bool { return ev.Count(conn.EventReconnected) == 1 })
	if fs.Accepted() != 4 {
		t.Fatalf("%d connections, want 4", fs.Accepted())
	}
	for i := 2; i <= 3; i++ {
		waitClosed(t, fs.client(t, i), "the client to hang up on a refused attempt")
	}
	if nc.IsClosed() || ev.Count(conn.EventClosed) != 0 {
		t.Fatal("max connections exceeded closed the connection")
	}
	if got := nc.Stats().Reconnects; got != 1 {
		t.Fatalf("Reconnects = %d, want 1", got)
	}
	// The subscription is restored on the accepted connection and works.
	c4 := fs.client(t, 4)
	if op, err := c4.Expect(ctxT(t), proto.KindSub); err != nil || string(op.Subject) != "f13" {
		t.Fatalf("resubscribe: %v %v", op, err)
	}
	if err := c4.SendMsg("f13", 1, "", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(ctxT(t)); err != nil || string(m.Data) != "hi" {
		t.Fatalf("message after reconnect: %v %v", m, err)
	}
}
