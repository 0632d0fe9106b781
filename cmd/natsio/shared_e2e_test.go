package main

// A server shared by the tests of the newer commands (each uses names of
// its own).

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

var shared struct {
	once sync.Once
	srv  *testServer
	cmd  *exec.Cmd
	done chan struct{}
	dir  string
	err  error
}

// sharedServer returns a `natsio server` started once for the whole test
// binary and stopped by TestMain.
func sharedServer(t *testing.T) *testServer {
	t.Helper()
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "natsio-shared-")
		if err != nil {
			shared.err = err
			return
		}
		shared.dir = dir
		out := newSyncBuf()
		cmd := exec.Command(binPath, "server", "--port", "0", "--store", filepath.Join(dir, "store"))
		cmd.Stdout, cmd.Stderr = out, out
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+testConfigHome)
		if err := cmd.Start(); err != nil {
			shared.err = err
			return
		}
		shared.cmd, shared.done = cmd, make(chan struct{})
		go func() { cmd.Wait(); close(shared.done) }()
		if !out.waitFor("nats://", 30*time.Second) {
			shared.err = fmt.Errorf("shared server did not start:\n%s", out)
			return
		}
		shared.srv = &testServer{url: urlRE.FindString(out.String())}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.srv
}

func stopShared() {
	if shared.cmd != nil {
		shared.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-shared.done:
		case <-time.After(15 * time.Second):
			shared.cmd.Process.Kill()
			<-shared.done
		}
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
}
