package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cliHome is a configuration directory of a test's own.
type cliHome struct{ dir string }

func newHome(t *testing.T) cliHome { return cliHome{t.TempDir()} }

func (h cliHome) run(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return startProcEnv(t, nil, append([]string{"XDG_CONFIG_HOME=" + h.dir}, env...), args...).wait(t, 60*time.Second)
}

func (h cliHome) ok(t *testing.T, args ...string) result {
	t.Helper()
	r := h.run(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("command failed:\n%s", r)
	}
	return r
}

func (h cliHome) fails(t *testing.T, want string, args ...string) result {
	t.Helper()
	r := h.run(t, nil, args...)
	if r.code == 0 || !strings.Contains(r.stderr, want) {
		t.Fatalf("want a failure with %q:\n%s", want, r)
	}
	return r
}

// writeContext writes a context file as the nats CLI writes it.
func (h cliHome) writeContext(t *testing.T, name, url, extra string) {
	t.Helper()
	dir := filepath.Join(h.dir, "nats", "context")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf(`{
  "description": "written by nats",
  "url": %q,
  "socks_proxy": "",
  "token": "",
  "user": "",
  "password": "",
  "creds": "",
  "nkey": "",
  "cert": "",
  "key": "",
  "ca": "",
  "nsc": "",
  "jetstream_domain": "",
  "jetstream_api_prefix": "",
  "jetstream_event_prefix": "",
  "inbox_prefix": "",
  "user_jwt": "",
  "color_scheme": "",
  "tls_first": false,
  "windows_cert_store": "",
  "windows_cert_match_by": "",
  "windows_cert_match": "",
  "windows_ca_certs_match": null%s
}
`, url, extra)
	if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestContexts(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	h := newHome(t)
	dead := fmt.Sprintf("nats://127.0.0.1:%d", freePort(t))

	// A context file in the nats CLI's format is read.
	h.writeContext(t, "natscli", s.url, "")
	h.ok(t, "--context", "natscli", "stream", "add", "CTXA", "--subjects", "ctxa")
	h.ok(t, "--server", s.url, "stream", "info", "CTXA")

	// context select, then commands without --server.
	h.writeContext(t, "dead", dead, "")
	h.fails(t, "no context is selected", "context", "select")
	r := h.ok(t, "context", "select", "natscli")
	contains(t, r, "Context natscli selected")
	if b, err := os.ReadFile(filepath.Join(h.dir, "nats", "context.txt")); err != nil || strings.TrimSpace(string(b)) != "natscli" {
		t.Fatalf("context.txt: %q %v", b, err)
	}
	r = h.ok(t, "stream", "ls", "--names")
	contains(t, r, "CTXA")

	// --context and $NATS_CONTEXT override the selection; --server the
	// context; --no-context ignores it.
	h.fails(t, "context info dead", "--context", "dead", "stream", "ls")
	h.fails(t, "cannot connect to "+dead, "--context", "dead", "stream", "ls")
	if r := h.run(t, []string{"NATS_CONTEXT=dead"}, "stream", "ls"); r.code == 0 || !strings.Contains(r.stderr, dead) {
		t.Fatalf("NATS_CONTEXT=dead:\n%s", r)
	}
	h.ok(t, "--context", "dead", "--server", s.url, "stream", "info", "CTXA")
	h.ok(t, "--context", "natscli", "--no-context", "--server", s.url, "stream", "info", "CTXA")
	h.fails(t, `context "nope" not found`, "--context", "nope", "stream", "ls")

	// context add writes the nats CLI's format; ls, info, edit, rm.
	r = h.ok(t, "context", "add", "mine", "--server", s.url, "--user", "me", "--password", "pw-secret",
		"--inbox-prefix", "_MINE", "--description", "made by natsio")
	contains(t, r, "Context mine saved")
	b, err := os.ReadFile(filepath.Join(h.dir, "nats", "context", "mine.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("context file is not JSON: %v\n%s", err, b)
	}
	for k, want := range map[string]any{"url": s.url, "user": "me", "password": "pw-secret", "inbox_prefix": "_MINE",
		"description": "made by natsio", "tls_first": false, "jetstream_domain": ""} {
		if raw[k] != want {
			t.Fatalf("key %q = %v, want %v\n%s", k, raw[k], want, b)
		}
	}
	if fi, err := os.Stat(filepath.Join(h.dir, "nats", "context", "mine.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("context file mode: %v %v", fi.Mode(), err)
	}
	r = h.ok(t, "context", "ls")
	contains(t, r, "natscli *", "mine", "dead", "made by natsio")
	r = h.ok(t, "context", "info", "mine")
	contains(t, r, "_MINE", "User: me", "*****")
	if strings.Contains(r.stdout, "pw-secret") {
		t.Fatalf("context info shows the password:\n%s", r)
	}
	h.ok(t, "context", "edit", "mine", "--description", "changed")
	r = h.ok(t, "context", "info", "mine", "--json")
	if v := decode[map[string]any](t, r); v["description"] != "changed" || v["inbox_prefix"] != "_MINE" || v["user"] != "me" {
		t.Fatalf("after edit: %v", v)
	}
	// Without flags, edit opens $EDITOR; what it saves must be a context.
	if r := h.run(t, []string{"EDITOR=sed -i s/changed/by-editor/"}, "context", "edit", "mine"); r.code != 0 {
		t.Fatalf("context edit in $EDITOR:\n%s", r)
	}
	if v := decode[map[string]any](t, h.ok(t, "context", "info", "mine", "--json")); v["description"] != "by-editor" {
		t.Fatalf("after $EDITOR: %v", v)
	}
	if r := h.run(t, []string{"EDITOR=sed -i s/by-editor/x\x22/"}, "context", "edit", "mine"); r.code == 0 || !strings.Contains(r.stderr, "not valid") {
		t.Fatalf("an invalid edit was accepted:\n%s", r)
	}
	if v := decode[map[string]any](t, h.ok(t, "context", "info", "mine", "--json")); v["description"] != "by-editor" {
		t.Fatalf("an invalid edit changed the context: %v", v)
	}
	h.fails(t, "is the selected one", "context", "rm", "natscli")
	h.ok(t, "context", "rm", "mine", "--force")
	h.fails(t, `context "mine" not found`, "context", "info", "mine")
	// A selected context whose file is gone is reported, and not used.
	h.ok(t, "context", "add", "gone", "--server", dead, "--select")
	if err := os.Remove(filepath.Join(h.dir, "nats", "context", "gone.json")); err != nil {
		t.Fatal(err)
	}
	r = h.ok(t, "--server", s.url, "stream", "info", "CTXA")
	if !strings.Contains(r.stderr, `the selected context "gone" has no file`) {
		t.Fatalf("missing selected context not reported:\n%s", r)
	}
	h.ok(t, "context", "select", "natscli")

	// A context file given by its path.
	h.ok(t, "--context", filepath.Join(h.dir, "nats", "context", "natscli.json"), "stream", "info", "CTXA")
	h.ok(t, "context", "unselect")
	h.fails(t, "no context is selected", "context", "select")
	h.ok(t, "context", "select", "natscli")
	h.ok(t, "context", "rm", "natscli", "--force")
	h.fails(t, "no context is selected", "context", "select")
}

// A context's credentials are used, and a token flag replaces them.
func TestContextAuth(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--token", "ctx-s3cret")
	h := newHome(t)
	h.writeContext(t, "tok", s.url, "")
	h.ok(t, "context", "edit", "tok", "--token", "ctx-s3cret")
	h.ok(t, "context", "select", "tok")
	h.ok(t, "pub", "ctx.x", "y")
	r := h.fails(t, "authorization failed", "--token", "wrong", "pub", "ctx.x", "y")
	if strings.Contains(r.stderr, "ctx-s3cret") {
		t.Fatalf("token in the error:\n%s", r)
	}
	// A context natsio cannot honour is refused with a clear error.
	h.writeContext(t, "socks", s.url, `,
  "socks_proxy": "socks5://127.0.0.1:1"`)
	h.fails(t, "socks_proxy", "--context", "socks", "pub", "ctx.x", "y")
}
