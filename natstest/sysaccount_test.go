package natstest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
)

// TestSystemAccount: with SystemAccount, clients without credentials still
// reach the default account, the system user reaches the monitoring API,
// and users of UserPassword keep theirs.
func TestSystemAccount(t *testing.T) {
	s := natstest.NewServer(t, natstest.SystemAccount())
	plain := s.Connect(t)
	if _, err := plain.Request(ctxT(t), "$SYS.REQ.SERVER.PING.IDZ", nil); !errors.Is(err, conn.ErrNoResponders) {
		t.Fatalf("default account reaches the system account: %v", err)
	}
	sys := s.ConnectSystem(t)
	m, err := sys.Request(ctxT(t), "$SYS.REQ.SERVER.PING.IDZ", nil)
	if err != nil || !strings.Contains(string(m.Data), s.Server().ID()) {
		t.Fatalf("system user: %v", err)
	}

	u := natstest.NewServer(t, natstest.SystemAccount(), natstest.UserPassword("me", "pw"))
	u.Connect(t)
	if _, err := u.ConnectSystem(t).Request(ctxT(t), "$SYS.REQ.SERVER.PING.IDZ", nil); err != nil {
		t.Fatalf("system user beside UserPassword: %v", err)
	}

	if _, err := natstest.Start(natstest.SystemAccount(), natstest.Token("t")); err == nil || !strings.Contains(err.Error(), "Token") {
		t.Fatalf("SystemAccount with Token: %v", err)
	}
	if natstest.NewServer(t).SystemConnectOptions() != nil {
		t.Fatal("a server without SystemAccount offers system options")
	}
}
