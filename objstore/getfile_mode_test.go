//go:build unix

package objstore_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/natsio/natsio/objstore"
)

// TestGetFileMode: GetFile gives a new file the permissions os.Create
// would (0666 less the umask), and a file it replaces keeps its own.
func TestGetFileMode(t *testing.T) {
	e := newEnv(t)
	s := e.store(t, objstore.Config{Bucket: "mode"})
	if _, err := s.PutString(e.Ctx, "doc", "content"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })

	mode := func(path string) os.FileMode {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	for _, c := range []struct {
		umask int
		want  os.FileMode
	}{{0o022, 0o644}, {0o027, 0o640}, {0o002, 0o664}} {
		syscall.Umask(c.umask)
		path := filepath.Join(dir, "new"+c.want.String())
		if err := s.GetFile(e.Ctx, "doc", path); err != nil {
			t.Fatal(err)
		}
		ref := filepath.Join(dir, "ref"+c.want.String())
		f, err := os.Create(ref)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if got, std := mode(path), mode(ref); got != c.want || got != std {
			t.Errorf("umask %#o: GetFile made %v, os.Create %v, want %v", c.umask, got, std, c.want)
		}
	}

	// A replaced file keeps its bits, whatever the umask.
	syscall.Umask(0o077)
	path := filepath.Join(dir, "existing")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o604); err != nil {
		t.Fatal(err)
	}
	if err := s.GetFile(e.Ctx, "doc", path); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "content" {
		t.Fatalf("replaced file holds %q, %v", b, err)
	}
	if got := mode(path); got != 0o604 {
		t.Errorf("replaced file has %v, want its own -rw----r--", got)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 7 {
		t.Fatalf("files left in the directory: %v", entries)
	}
}
