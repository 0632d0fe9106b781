package main

// What a terminal shows, tested through a pseudo-terminal: prompts,
// progress bars and escaped control characters appear there, and not in
// the output of a script.

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTerminalPrompt(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	s.ok(t, "stream", "add", "PTY1", "--subjects", "pty1")

	// Answer n: nothing is deleted.
	p := startTTY(t, true, true, s.args("stream", "rm", "PTY1")...)
	p.waitTTY(t, "Delete stream(s) PTY1 with all their messages? [y/N]")
	p.ptm.Write([]byte("n\n"))
	r, tty := p.finish(t)
	if r.code == 0 || !strings.Contains(tty, "not deleted") {
		t.Fatalf("answer n: exit %d\nterminal:\n%q", r.code, tty)
	}
	s.ok(t, "stream", "info", "PTY1")

	// Answer y: deleted.
	p = startTTY(t, true, true, s.args("stream", "rm", "PTY1")...)
	p.waitTTY(t, "[y/N]")
	p.ptm.Write([]byte("y\n"))
	r, tty = p.finish(t)
	if r.code != 0 || !strings.Contains(tty, "Stream PTY1 deleted") {
		t.Fatalf("answer y: exit %d\nterminal:\n%q", r.code, tty)
	}
}

func TestTerminalProgressBar(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "big.bin")
	data := make([]byte, 8<<20)
	rand.Read(data)
	if err := os.WriteFile(src, data, 0o600); err != nil {
		t.Fatal(err)
	}
	s.ok(t, "object", "add", "ptybar")

	// stderr on a terminal: the bar is drawn there; stdout (a pipe) holds
	// only the result line.
	p := startTTY(t, false, true, s.args("object", "put", "ptybar", src, "--name", "tty.bin")...)
	r, tty := p.finish(t)
	if r.code != 0 {
		t.Fatalf("object put on a terminal: exit %d\nterminal:\n%q\n%s", r.code, tty, r)
	}
	if !strings.Contains(tty, "put tty.bin") || !strings.Contains(tty, "MiB") {
		t.Fatalf("no progress bar on the terminal:\n%q", tty)
	}
	if strings.ContainsAny(r.stdout, "\r\x1b") {
		t.Fatalf("terminal control in stdout:\n%q", r.stdout)
	}

	// Replacing an object asks on a terminal.
	p = startTTY(t, false, true, s.args("object", "put", "ptybar", src, "--name", "tty.bin")...)
	p.waitTTY(t, "Replace object tty.bin (8.0 MiB) in store ptybar? [y/N]")
	p.ptm.Write([]byte("n\n"))
	if r, tty := p.finish(t); r.code == 0 || !strings.Contains(tty, "not replaced") {
		t.Fatalf("answer n: exit %d\nterminal:\n%q", r.code, tty)
	}

	// No terminal: no bar, nothing but the result on stdout.
	r = s.ok(t, "object", "put", "ptybar", src, "--name", "pipe.bin")
	if strings.ContainsAny(r.stdout+r.stderr, "\r\x1b") || strings.Contains(r.stderr, "put pipe.bin") {
		t.Fatalf("progress output without a terminal:\n%q\n%q", r.stdout, r.stderr)
	}
	if !strings.HasPrefix(r.stdout, "Stored pipe.bin in ptybar: 8.0 MiB") {
		t.Fatalf("stdout without a terminal is not the result:\n%q", r.stdout)
	}
	// --json on a terminal is machine-readable too.
	p = startTTY(t, false, true, s.args("object", "get", "ptybar", "pipe.bin", "--output", filepath.Join(dir, "o.bin"), "--json")...)
	r, tty = p.finish(t)
	if r.code != 0 || strings.Contains(tty, "get pipe.bin") {
		t.Fatalf("get --json drew a bar: exit %d\nterminal:\n%q", r.code, tty)
	}
	decode[map[string]any](t, r)
}

// Control characters from the network are escaped on a terminal (golden
// output), printed raw with --no-escape, and never changed in a pipe.
func TestTerminalEscapes(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	const body = "hi \x1b[2J\x1b]52;c;aGk=\x07 \u009b31m\r\tend"
	const hdr = "X:v\x1b[1m"

	sub := startTTY(t, true, false, s.args("sub", "pty.esc", "--count", "1")...)
	sub.waitStderr(t, "Listening on")
	raw := startTTY(t, true, false, s.args("sub", "pty.esc", "--count", "1", "--raw", "--no-escape")...)
	raw.waitStderr(t, "Listening on")
	pipe := s.start(t, "sub", "pty.esc", "--count", "1", "--raw")
	pipe.waitStderr(t, "Listening on")
	s.ok(t, "pub", "pty.esc", body, "-H", hdr)

	_, tty := sub.finish(t)
	want := "[#1] Received on \"pty.esc\"\nX: v\\x1b[1m\n\nhi \\x1b[2J\\x1b]52;c;aGk=\\x07 \\u009b31m\\x0d\tend\n\n"
	if tty != want {
		t.Fatalf("terminal shows:\n%q\nwant:\n%q", tty, want)
	}
	_, tty = raw.finish(t)
	if tty != body+"\n" {
		t.Fatalf("--no-escape shows:\n%q\nwant:\n%q", tty, body+"\n")
	}
	if r := pipe.wait(t, 20*time.Second); r.stdout != body+"\n" {
		t.Fatalf("a pipe got:\n%q\nwant:\n%q", r.stdout, body+"\n")
	}
}
