package testserver

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/natstest"
)

// childEnv marks a test binary re-executed by StartProcess to run a server;
// childEnv+"_DIR" names its store directory, which the parent owns.
const childEnv = "NATSIO_TESTSERVER_CHILD"

// RunIfChild runs a server and exits when this process was started by
// StartProcess; otherwise it returns at once. Call it first in TestMain:
//
//	func TestMain(m *testing.M) { testserver.RunIfChild(); os.Exit(m.Run()) }
func RunIfChild() {
	if os.Getenv(childEnv) != "1" {
		return
	}
	os.Exit(runChild(os.Getenv(childEnv + "_DIR")))
}

// runChild serves until stdin ends and returns the exit code. The store
// lives in dir, which the parent removes (even when it has to kill this
// process); without one, the server's own temporary store is removed by
// Close, before returning: os.Exit would skip a deferred removal.
func runChild(dir string) int {
	opts := []natstest.Option{natstest.JetStream(os.Getenv(childEnv+"_JS") == "1")}
	if dir != "" {
		opts = append(opts, natstest.StoreDir(dir))
	}
	s, err := natstest.Start(opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Printf("URL %s\n", s.URL())
	// The parent closes stdin (or dies): shut down.
	_, _ = io.Copy(io.Discard, os.Stdin)
	s.Close()
	return 0
}

// Process is a nats-server running in a child process, so that a
// benchmark's allocation and CPU figures count the client alone.
type Process struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	url   string
	dir   string
}

// StoreDir returns the server's store directory (removed at cleanup).
func (p *Process) StoreDir() string { return p.dir }

// URL returns the server's client URL.
func (p *Process) URL() string { return p.url }

// Pid returns the server process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// StartProcess re-executes the test binary as a server process (the package's
// TestMain must call RunIfChild) and stops it at cleanup. Its store is a
// directory of t's, removed after the process has stopped.
func StartProcess(t testing.TB, jetstream bool) *Process {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// TempDir's removal is registered first, so it runs after the process
	// has been stopped (cleanups run last-in, first-out).
	dir := t.TempDir()
	cmd.Env = append(os.Environ(), childEnv+"=1", childEnv+"_DIR="+dir)
	if jetstream {
		cmd.Env = append(cmd.Env, childEnv+"_JS=1")
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("testserver: start process: %v", err)
	}
	p := &Process{cmd: cmd, stdin: stdin, dir: dir}
	t.Cleanup(func() {
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "URL ") {
		t.Fatalf("testserver: child process did not report its URL: %q %v", line, err)
	}
	p.url = strings.TrimSpace(strings.TrimPrefix(line, "URL "))
	return p
}
