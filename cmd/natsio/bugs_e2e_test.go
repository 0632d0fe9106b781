package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// consumer add on an existing consumer with another configuration is
// refused and changes nothing; edit changes only the flags given.
func TestConsumerAddRefusesOtherConfig(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	s.ok(t, "stream", "add", "BUGADD", "--subjects", "bugadd.>")
	s.ok(t, "consumer", "add", "BUGADD", "c2", "--filter", "bugadd.a", "--ack-wait", "10s", "--description", "important")
	// The same configuration again: nothing changes, exit 0.
	s.ok(t, "consumer", "add", "BUGADD", "c2", "--filter", "bugadd.a", "--ack-wait", "10s", "--description", "important")
	s.fails(t, []string{"already exists with another configuration", "natsio consumer edit BUGADD c2"},
		"consumer", "add", "BUGADD", "c2", "--max-deliver", "9")
	type cfgT struct {
		Config struct {
			Filter      string `json:"filter_subject"`
			AckWait     int64  `json:"ack_wait"`
			Description string `json:"description"`
			MaxDeliver  int    `json:"max_deliver"`
		} `json:"config"`
	}
	ci := decode[cfgT](t, s.ok(t, "consumer", "info", "BUGADD", "c2", "--json"))
	if ci.Config.Filter != "bugadd.a" || ci.Config.AckWait != int64(10*time.Second) || ci.Config.Description != "important" {
		t.Fatalf("the refused add changed the consumer: %+v", ci.Config)
	}
	s.ok(t, "consumer", "edit", "BUGADD", "c2", "--max-deliver", "9")
	ci = decode[cfgT](t, s.ok(t, "consumer", "info", "BUGADD", "c2", "--json"))
	if ci.Config.Filter != "bugadd.a" || ci.Config.AckWait != int64(10*time.Second) || ci.Config.Description != "important" || ci.Config.MaxDeliver != 9 {
		t.Fatalf("edit changed more than --max-deliver: %+v", ci.Config)
	}
	s.fails(t, []string{"nothing to change"}, "consumer", "edit", "BUGADD", "c2")
}

// With stdin on /dev/null (cron, systemd, nohup) there is no prompt: the
// command proceeds as docs/cli.md says scripts do.
func TestNoPromptWithoutTerminal(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	s.ok(t, "stream", "add", "BUGTMP", "--subjects", "bugtmp")
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r := startProc(t, null, s.args("stream", "rm", "BUGTMP")...).wait(t, 60*time.Second)
	if r.code != 0 || strings.Contains(r.stderr, "[y/N]") || !strings.Contains(r.stdout, "Stream BUGTMP deleted") {
		t.Fatalf("stream rm with stdin on /dev/null:\n%s", r)
	}
}

// natscli's template spelling {{.Count}} works; an unknown field is an
// error, not "<no value>"; a body from stdin is never a template; a
// template cannot make more than max_payload.
func TestTemplates(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	sub := s.start(t, "sub", "bugtpl.>", "--count", "4", "--raw")
	sub.waitStderr(t, "Listening on")
	s.ok(t, "pub", "bugtpl.a", "n={{.Count}} c={{Count}}", "--count", "2")
	r := runIn(t, "{{Random 900000000 900000000}} {{.Count}}", s.args("pub", "bugtpl.stdin")...)
	if r.code != 0 {
		t.Fatalf("pub from stdin:\n%s", r)
	}
	s.ok(t, "pub", "bugtpl.plain", "{{.Count}}", "--templates=false")

	s.fails(t, []string{"Nope"}, "pub", "bugtpl.bad", "n={{.Nope}}")
	s.fails(t, []string{"max_payload"}, "pub", "bugtpl.big", "{{Random 2000000 2000000}}")
	s.fails(t, []string{"max_payload"}, "pub", "bugtpl.big", "{{range 100000000}}{{ID}}{{end}}")

	r = sub.wait(t, 20*time.Second)
	want := "n=1 c=1\nn=2 c=2\n{{Random 900000000 900000000}} {{.Count}}\n{{.Count}}\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("received:\n%q\nwant:\n%q\n%s", r.stdout, want, r)
	}
}

// object get creates files as os.Create would (0666 less the umask), and
// a replaced file keeps its mode.
func TestObjectGetFileMode(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src.txt")
	if err := os.WriteFile(src, []byte("mode"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.ok(t, "object", "add", "bugmode")
	s.ok(t, "object", "put", "bugmode", src, "--name", "m.txt")

	std := filepath.Join(dir, "std.txt")
	f, err := os.Create(std)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := mode(t, std)

	out := filepath.Join(dir, "out.txt")
	s.ok(t, "object", "get", "bugmode", "m.txt", "--output", out)
	if got := mode(t, out); got != want {
		t.Fatalf("object get made %v, os.Create %v", got, want)
	}
	if err := os.Chmod(out, 0o640); err != nil {
		t.Fatal(err)
	}
	s.ok(t, "object", "get", "bugmode", "m.txt", "--output", out, "--force")
	if got := mode(t, out); got != 0o640 {
		t.Fatalf("replaced file has mode %v, want 0640", got)
	}
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// No flag's help shows two defaults.
func TestHelpOneDefault(t *testing.T) {
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, line := range strings.Split(c.LocalFlags().FlagUsages(), "\n") {
			if strings.Count(line, "(default") > 1 {
				t.Errorf("%s: %s", c.CommandPath(), strings.TrimSpace(line))
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(a.rootCmd())
}

// --help never prints secrets from the environment, and the environment
// still supplies the values.
func TestHelpHidesEnvSecrets(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	env := []string{"NATS_PASSWORD=pw-s3cret", "NATS_TOKEN=tok-s3cret", "NATS_URL=nats://someone:url-s3cret@127.0.0.1:1",
		"NATS_USER=user-s3cret", "NATS_CREDS=/creds-s3cret", "NATS_NKEY=/nkey-s3cret"}
	for _, args := range [][]string{{"--help"}, {"pub", "--help"}, {"stream", "add", "--help"}} {
		r := startProcEnv(t, nil, env, args...).wait(t, 60*time.Second)
		if r.code != 0 {
			t.Fatalf("help failed:\n%s", r)
		}
		if strings.Contains(r.stdout+r.stderr, "s3cret") {
			t.Fatalf("help shows a secret from the environment:\n%s", r)
		}
	}
	// NATS_URL is still read.
	r := startProcEnv(t, nil, []string{"NATS_URL=" + s.url}, "pub", "bugenv.x", "y").wait(t, 60*time.Second)
	if r.code != 0 {
		t.Fatalf("pub with NATS_URL:\n%s", r)
	}
}

// `make -n bench` prints the recipe without running it: with GO=false
// a run would fail.
func TestMakeNBench(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	cmd := exec.Command("make", "-n", "bench", "GO=false")
	cmd.Dir = filepath.Join("..", "..")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("make -n bench ran the recipe (%v):\n%s", err, out.String())
	}
}

// escapeControls shows the controls a terminal would act on.
func TestEscapeControls(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text\n\ttab", "plain text\n\ttab"},
		{"\x1b]52;c;aGk=\x07", `\x1b]52;c;aGk=\x07`},
		{"\x1b[2J\r", `\x1b[2J\x0d`},
		{"del\x7f nul\x00", `del\x7f nul\x00`},
		{"c1 \u009b1m next\u0085line", `c1 \u009b1m next\u0085line`},
		{"bad \x9b utf8 \xff", `bad \x9b utf8 \xff`},
		{"ünïcödé ✓ 日本", "ünïcödé ✓ 日本"},
	} {
		if got := string(escapeControls(nil, []byte(c.in))); got != c.want {
			t.Errorf("escapeControls(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// A rune cut between two writes is escaped as one.
	var b bytes.Buffer
	w := &escWriter{w: &b, on: true}
	w.Write([]byte("a\xc3"))
	w.Write([]byte("\xbc\x1b"))
	w.Write([]byte("\xe2\x9c"))
	w.Flush()
	if b.String() != `aü\x1b\xe2\x9c` {
		t.Fatalf("split writes: %q", b.String())
	}
}
