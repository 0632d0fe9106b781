package natstest_test

import (
	"os"
	"testing"

	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

func TestMain(m *testing.M) {
	natstest.RunIfChild()
	os.Exit(m.Run())
}

// TestProcess: a server in a child process takes JetStream requests, runs
// in another process, and its store is gone once the test is over.
func TestProcess(t *testing.T) {
	var dir string
	t.Run("server", func(t *testing.T) {
		p := natstest.NewProcess(t, true)
		if p.Pid() == os.Getpid() || p.Pid() <= 0 {
			t.Fatalf("pid %d, test pid %d", p.Pid(), os.Getpid())
		}
		nc := testutil.Connect(t, p.URL())
		js := newJS(t, nc)
		ctx := ctxT(t)
		if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "P", Subjects: []string{"p"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "p", []byte("x")); err != nil {
			t.Fatal(err)
		}
		dir = p.StoreDir()
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) == 0 {
			t.Fatalf("the child's store %s holds %v (%v): not the one it uses", dir, entries, err)
		}
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("store %s still there after the test: %v", dir, err)
	}
	t.Run("without JetStream", func(t *testing.T) {
		p := natstest.NewProcess(t, false)
		nc := testutil.Connect(t, p.URL())
		if _, err := newJS(t, nc).AccountInfo(ctxT(t)); err == nil {
			t.Fatal("JetStream answered on a server started without it")
		}
	})
}
