package natscontext_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natscontext"
	"github.com/natsio/natsio/natstest"
)

// configHome points XDG_CONFIG_HOME at a fresh directory for the test.
func configHome(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	return dir
}

// writeNatscli writes a context file as the nats CLI writes it: every key
// present, two-space indent.
func writeNatscli(t *testing.T, home, name, json string) {
	t.Helper()
	dir := filepath.Join(home, "nats", "context")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(json), 0o600); err != nil {
		t.Fatal(err)
	}
}

const natscliFile = `{
  "description": "the test server",
  "url": "%URL%",
  "socks_proxy": "",
  "token": "",
  "user": "alice",
  "password": "s3cret",
  "creds": "",
  "nkey": "",
  "cert": "",
  "key": "",
  "ca": "",
  "nsc": "",
  "jetstream_domain": "",
  "jetstream_api_prefix": "",
  "jetstream_event_prefix": "",
  "inbox_prefix": "_MY_INBOX",
  "user_jwt": "",
  "user_seed": "",
  "color_scheme": "",
  "tls_first": false,
  "windows_cert_store": "",
  "windows_cert_match_by": "",
  "windows_cert_match": "",
  "windows_ca_certs_match": null
}
`

func TestLoadNatscliFileAndConnect(t *testing.T) {
	home := configHome(t)
	s := natstest.NewServer(t, natstest.UserPassword("alice", "s3cret"))
	writeNatscli(t, home, "dev", replace(natscliFile, "%URL%", s.URL()))

	c, err := natscontext.Load("dev")
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "dev" || c.User != "alice" || c.Password != "s3cret" || c.InboxPrefix != "_MY_INBOX" || c.Description != "the test server" {
		t.Fatalf("loaded %+v", c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := natscontext.Connect(ctx, "dev")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if got := nc.NewInbox(); len(got) < 10 || got[:10] != "_MY_INBOX." {
		t.Fatalf("inbox %q does not use the context's prefix", got)
	}

	// Without a selection, Load("") is ErrNotFound; once selected it
	// loads the selected one.
	if _, err := natscontext.Load(""); !errors.Is(err, natscontext.ErrNotFound) {
		t.Fatalf("Load(\"\") without a selection: %v", err)
	}
	if err := natscontext.Select("dev"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(home, "nats", "context.txt"))
	if err != nil || string(b) != "dev" {
		t.Fatalf("context.txt = %q, %v", b, err)
	}
	if sel, err := natscontext.Selected(); err != nil || sel != "dev" {
		t.Fatalf("Selected() = %q, %v", sel, err)
	}
	if c, err := natscontext.Load(""); err != nil || c.Name != "dev" {
		t.Fatalf("Load(\"\") = %+v, %v", c, err)
	}
	// Wrong credentials from a context fail as any connection would.
	writeNatscli(t, home, "bad", replace(replace(natscliFile, "%URL%", s.URL()), "s3cret", "nope"))
	if _, err := natscontext.Connect(ctx, "bad", conn.NoReconnect()); err == nil {
		t.Fatal("connected with a wrong password")
	}
}

func TestSaveSelectDelete(t *testing.T) {
	home := configHome(t)
	if names, err := natscontext.Names(); err != nil || len(names) != 0 {
		t.Fatalf("Names() without a directory = %v, %v", names, err)
	}
	for _, n := range []string{"b", "a"} {
		if err := natscontext.Save(&natscontext.Context{Name: n, URL: "nats://" + n + ":4222", TLSFirst: true}); err != nil {
			t.Fatal(err)
		}
	}
	// Empty and foreign files are not contexts.
	dir := filepath.Join(home, "nats", "context")
	os.WriteFile(filepath.Join(dir, "empty.json"), nil, 0o600)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600)
	names, err := natscontext.Names()
	if err != nil || !slices.Equal(names, []string{"a", "b"}) {
		t.Fatalf("Names() = %v, %v", names, err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "a.json"): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: %v, %v; want %v", path, fi.Mode().Perm(), err, want)
		}
	}
	c, err := natscontext.Load("a")
	if err != nil || c.URL != "nats://a:4222" || !c.TLSFirst {
		t.Fatalf("Load(a) = %+v, %v", c, err)
	}
	if err := natscontext.Select("a"); err != nil {
		t.Fatal(err)
	}
	if err := natscontext.Select("b"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "nats", "previous-context.txt")); string(b) != "a" {
		t.Fatalf("previous-context.txt = %q", b)
	}
	if err := natscontext.Select("zzz"); !errors.Is(err, natscontext.ErrNotFound) {
		t.Fatalf("Select(missing) = %v", err)
	}
	if err := natscontext.Delete("b"); err != nil {
		t.Fatal(err)
	}
	if sel, _ := natscontext.Selected(); sel != "" {
		t.Fatalf("deleting the selected context left %q selected", sel)
	}
	if err := natscontext.Delete("b"); !errors.Is(err, natscontext.ErrNotFound) {
		t.Fatalf("Delete(missing) = %v", err)
	}
	for _, bad := range []string{"", "../x", "a/b", `a\b`, ".."} {
		if _, err := natscontext.Load(bad + "x"); bad != "" && !errors.Is(err, natscontext.ErrInvalidName) && !errors.Is(err, natscontext.ErrNotFound) {
			t.Fatalf("Load(%q) = %v", bad+"x", err)
		}
		if err := natscontext.Save(&natscontext.Context{Name: bad}); !errors.Is(err, natscontext.ErrInvalidName) {
			t.Fatalf("Save(%q) = %v, want ErrInvalidName", bad, err)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		ctx  natscontext.Context
		want error
	}{
		{natscontext.Context{User: "u", Creds: "/c"}, natscontext.ErrConflict},
		{natscontext.Context{NKey: "/n", UserJWT: "j", UserSeed: "s"}, natscontext.ErrConflict},
		{natscontext.Context{Cert: "/c"}, natscontext.ErrConflict},
		{natscontext.Context{Password: "p"}, natscontext.ErrConflict},
		{natscontext.Context{SocksProxy: "socks5://x"}, natscontext.ErrUnsupported},
		{natscontext.Context{NSC: "nsc://op/acc/user"}, natscontext.ErrUnsupported},
		{natscontext.Context{Creds: "op://vault/item"}, natscontext.ErrUnsupported},
		{natscontext.Context{UserJWT: "eyJ..."}, natscontext.ErrUnsupported},
		{natscontext.Context{JetStreamDomain: "hub", JetStreamAPIPrefix: "$JS.x.API"}, natscontext.ErrConflict},
		{natscontext.Context{User: "u", Password: "p", Token: "t", Creds: ""}, nil},
		{natscontext.Context{Creds: "file://~/x.creds"}, nil},
	} {
		_, err := c.ctx.Options()
		if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
			t.Errorf("%+v: Options() = %v, want %v", c.ctx, err, c.want)
		}
	}
}

// The context's JetStream domain routes JetStream requests.
func TestJSOptionsDomain(t *testing.T) {
	configHome(t)
	s := natstest.NewServer(t, natstest.JetStreamDomain("hub"))
	if err := natscontext.Save(&natscontext.Context{Name: "hub", URL: s.URL(), JetStreamDomain: "hub"}); err != nil {
		t.Fatal(err)
	}
	c, err := natscontext.Load("hub")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := natscontext.Connect(ctx, "hub")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jsapi.New(nc, c.JSOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	if js.Prefix() != "$JS.hub.API." {
		t.Fatalf("prefix %q", js.Prefix())
	}
	if _, err := js.AccountInfo(ctx); err != nil {
		t.Fatalf("account info through the domain: %v", err)
	}
}

func replace(s, old, new string) string { return strings.ReplaceAll(s, old, new) }
