package testserver

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	RunIfChild()
	os.Exit(m.Run())
}

// TestProcessStoreRemoved checks that a server process keeps its JetStream
// store in a directory of the test's, gone once the test is over (a child
// that exits with os.Exit skips deferred removals: every benchmark run used
// to leave its store behind).
func TestProcessStoreRemoved(t *testing.T) {
	var dir string
	t.Run("server", func(t *testing.T) {
		p := StartProcess(t, true)
		dir = p.StoreDir()
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) == 0 {
			t.Fatalf("the child's store %s holds %v (%v): not the one it uses", dir, entries, err)
		}
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("store %s still there after the test: %v", dir, err)
	}
}
