package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A context file that others can read while it holds a token is used
// with a warning on standard error that does not show the token.
func TestContextReadableSecretWarned(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	h := newHome(t)
	h.writeContext(t, "open", s.url, `, "token": "t0ken-secret"`)
	path := filepath.Join(h.dir, "nats", "context", "open.json")
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	r := h.run(t, nil, "--context", "open", "pub", "x", "y")
	if !strings.Contains(r.stderr, "readable by its group or others") || strings.Contains(r.stderr+r.stdout, "t0ken-secret") {
		t.Fatalf("a 0644 context with a token:\n%s", r)
	}
}
