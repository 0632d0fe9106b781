package natscontext_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natscontext"
	"github.com/natsio/natsio/natstest"
)

// Every kind of authentication and TLS a context holds connects, and the
// wrong one does not.
func TestContextAuthAndTLS(t *testing.T) {
	configHome(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	connects := func(t *testing.T, c natscontext.Context, want bool) {
		t.Helper()
		c.Name = "t"
		if err := natscontext.Save(&c); err != nil {
			t.Fatal(err)
		}
		nc, err := natscontext.Connect(ctx, "t", conn.NoReconnect(), conn.ConnectTimeout(5*time.Second))
		if err == nil {
			nc.Close()
		}
		if (err == nil) != want {
			t.Fatalf("%+v: connect error %v, want success %v", c, err, want)
		}
	}

	t.Run("token", func(t *testing.T) {
		s := natstest.NewServer(t, natstest.Token("tok"))
		connects(t, natscontext.Context{URL: s.URL(), Token: "tok"}, true)
		connects(t, natscontext.Context{URL: s.URL(), Token: "bad"}, false)
	})
	t.Run("nkey", func(t *testing.T) {
		u := natstest.NewNKeyUser()
		s := natstest.NewServer(t, natstest.NKeyUsers(u.PublicKey))
		seed := filepath.Join(dir, "user.nk")
		if err := os.WriteFile(seed, u.Seed, 0o600); err != nil {
			t.Fatal(err)
		}
		// $VARIABLES in paths are expanded.
		t.Setenv("NK_DIR", dir)
		connects(t, natscontext.Context{URL: s.URL(), NKey: "$NK_DIR/user.nk"}, true)
		connects(t, natscontext.Context{URL: s.URL()}, false)
	})
	t.Run("creds and user_jwt", func(t *testing.T) {
		op := natstest.NewOperator()
		acc := op.AddAccount("APP", false)
		s := natstest.NewServer(t, natstest.OperatorMode(op))
		user := acc.NewUser("alice")
		creds := filepath.Join(dir, "alice.creds")
		if err := user.WriteFile(creds); err != nil {
			t.Fatal(err)
		}
		connects(t, natscontext.Context{URL: s.URL(), Creds: "file://" + creds}, true)
		connects(t, natscontext.Context{URL: s.URL(), UserJWT: user.JWT, UserSeed: string(user.Seed)}, true)
	})
	t.Run("mutual TLS first", func(t *testing.T) {
		s := natstest.NewServer(t, natstest.MutualTLS(nil), natstest.TLSHandshakeFirst())
		certs := s.Certs()
		good := natscontext.Context{URL: s.URL(), Cert: certs.ClientCertFile, Key: certs.ClientKeyFile, CA: certs.CAFile, TLSFirst: true}
		connects(t, good, true)
		noFirst := good
		noFirst.TLSFirst = false
		connects(t, noFirst, false)
		noCert := good
		noCert.Cert, noCert.Key = "", ""
		connects(t, noCert, false)
	})
}
