package natscontext_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/natsio/natsio/natscontext"
)

// A context name from untrusted input is a name, never a path: Load and
// Connect refuse a name ending in ".json" that points at a file (before,
// they read it and connected to the server it named, with its
// credentials), and names with control bytes. LoadFile reads a path the
// user chose.
func TestHostileContextNameIsNeverAPath(t *testing.T) {
	configHome(t)
	planted := filepath.Join(t.TempDir(), "planted.json")
	if err := os.WriteFile(planted, []byte(`{"url":"nats://127.0.0.1:1","creds":"/tmp/other.creds"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := natscontext.Load(planted); !errors.Is(err, natscontext.ErrInvalidName) {
		t.Fatalf("Load(%q) = %+v, %v; want ErrInvalidName", planted, c, err)
	}
	if nc, err := natscontext.Connect(context.Background(), planted); !errors.Is(err, natscontext.ErrInvalidName) {
		if nc != nil {
			nc.Close()
		}
		t.Fatalf("Connect(%q) = %v; want ErrInvalidName", planted, err)
	}
	c, err := natscontext.LoadFile(planted)
	if err != nil || c.Name != "planted" || c.URL != "nats://127.0.0.1:1" {
		t.Fatalf("LoadFile(%q) = %+v, %v", planted, c, err)
	}
	for _, bad := range []string{"a\nb", "a\rb", "\x1b[2J", "a\x00", "a\x7f", "tab\there", "\x01"} {
		if err := natscontext.ValidateName(bad); !errors.Is(err, natscontext.ErrInvalidName) {
			t.Errorf("ValidateName(%q) = %v, want ErrInvalidName", bad, err)
		}
		if _, err := natscontext.Load(bad); !errors.Is(err, natscontext.ErrInvalidName) {
			t.Errorf("Load(%q) = %v, want ErrInvalidName", bad, err)
		}
		if err := natscontext.Save(&natscontext.Context{Name: bad}); !errors.Is(err, natscontext.ErrInvalidName) {
			t.Errorf("Save(%q) = %v, want ErrInvalidName", bad, err)
		}
	}
	if err := natscontext.ValidateName("prod-eu_1.json"); err != nil {
		t.Fatalf("a valid name refused: %v", err)
	}
}

// A context file that its group or others can read is loaded with a
// warning when it holds a secret; a private file, or one without a
// secret, gets none.
func TestHostileReadableContextWithSecretWarned(t *testing.T) {
	home := configHome(t)
	for _, c := range []struct {
		name, json string
		mode       os.FileMode
		warn       string
	}{
		{"pass644", `{"user":"a","password":"s3cret"}`, 0o644, "password"},
		{"token640", `{"token":"t0ken"}`, 0o640, "token"},
		{"seed604", `{"user_jwt":"eyJ","user_seed":"SUAXXX"}`, 0o604, "user_seed"},
		{"url644", `{"url":"nats://a:b@host:4222"}`, 0o644, "url password"},
		{"pass600", `{"user":"a","password":"s3cret"}`, 0o600, ""},
		{"plain644", `{"url":"nats://host:4222","creds":"/x.creds"}`, 0o644, ""},
	} {
		writeNatscli(t, home, c.name, c.json)
		path := filepath.Join(home, "nats", "context", c.name+".json")
		if err := os.Chmod(path, c.mode); err != nil {
			t.Fatal(err)
		}
		cx, err := natscontext.Load(c.name)
		if err != nil {
			t.Fatalf("Load(%s): %v", c.name, err)
		}
		w := strings.Join(cx.Warnings(), "\n")
		switch {
		case c.warn == "" && w != "":
			t.Errorf("%s: unexpected warning %q", c.name, w)
		case c.warn != "" && (!strings.Contains(w, c.warn) || !strings.Contains(w, path)):
			t.Errorf("%s (mode %v): warnings %q, want one naming %s and the file", c.name, c.mode, w, c.warn)
		}
		if strings.Contains(w, "s3cret") || strings.Contains(w, "t0ken") || strings.Contains(w, "SUAXXX") {
			t.Errorf("%s: a warning shows the secret: %q", c.name, w)
		}
	}
}

// Printing a Context shows no secret with any verb, through a value or a
// pointer.
func TestHostileContextFormatRedactsSecrets(t *testing.T) {
	c := &natscontext.Context{
		Name: "prod", URL: "nats://alice:urlpass@a:4222,nats://b:4222", User: "alice", Password: "s3cret",
		Token: "t0ken", UserJWT: "eyJhbGciOiJlZDI1NTE5In0.jwtbody", UserSeed: "SUAIBDPBAUTWCWBKIO6XHQNINK5FWJW4OHLXC3HQ2KFE4PEJUA44CNHTC4",
		Creds: "/home/alice/prod.creds",
	}
	secrets := []string{"urlpass", "s3cret", "t0ken", "jwtbody", "SUAIBDPB"}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		for _, v := range []any{c, *c} {
			out := fmt.Sprintf(verb, v)
			for _, s := range secrets {
				if strings.Contains(out, s) || (verb == "%x" && strings.Contains(out, fmt.Sprintf("%x", s))) {
					t.Errorf("%s of a %T shows %q: %s", verb, v, s, out)
				}
			}
		}
	}
	if out := fmt.Sprintf("%+v", c); !strings.Contains(out, "/home/alice/prod.creds") || !strings.Contains(out, "[REDACTED]") {
		t.Errorf("%%+v hides what is not secret, or marks nothing: %s", out)
	}
	for _, s := range secrets {
		if strings.Contains(c.String(), s) || strings.Contains(c.GoString(), s) {
			t.Errorf("String or GoString shows %q", s)
		}
	}
	if c.Password != "s3cret" {
		t.Fatal("printing changed the context")
	}
}
