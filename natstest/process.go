package natstest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// childEnv marks a test binary re-executed by NewProcess to run a server;
// childEnv+"_DIR" names its store directory, which the parent owns, and
// childEnv+"_JS" turns JetStream on.
const childEnv = "NATSIO_NATSTEST_CHILD"

// processStopTimeout bounds how long a stopping child may take before it
// is killed.
const processStopTimeout = 10 * time.Second

// RunIfChild runs a server and exits when this process is a test binary
// that NewProcess started; otherwise it returns at once. A package whose
// tests or benchmarks call NewProcess calls it first in TestMain:
//
//	func TestMain(m *testing.M) {
//		natstest.RunIfChild()
//		os.Exit(m.Run())
//	}
//
// The child serves until its standard input ends (the parent stops it or
// dies), then shuts the server down and exits.
func RunIfChild() {
	if os.Getenv(childEnv) != "1" {
		return
	}
	os.Exit(runChild(os.Getenv(childEnv+"_DIR"), os.Getenv(childEnv+"_JS") == "1"))
}

// runChild serves until stdin ends and returns the exit code. The store
// lives in dir, which the parent removes (even when it has to kill this
// process); without one, Close removes the server's own temporary store
// before returning, since os.Exit would skip a deferred removal.
func runChild(dir string, jetStream bool) int {
	opts := []Option{JetStream(jetStream)}
	if dir != "" {
		opts = append(opts, StoreDir(dir))
	}
	s, err := Start(opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Printf("URL %s\n", s.URL())
	_, _ = io.Copy(io.Discard, os.Stdin)
	s.Close()
	return 0
}

// Process is a server running in a child process: the test binary itself,
// started again with RunIfChild taking over. A benchmark or an allocation
// test against it counts the code under test alone, not the server's
// allocations and CPU. It listens on a free loopback port without
// authentication or TLS.
type Process struct {
	cmd *exec.Cmd
	url string
	dir string
}

// NewProcess starts a server in a child process, with JetStream when
// jetStream is true, and returns once it accepts connections. The child
// is stopped and its store (a directory of tb's) removed when tb's test
// ends. The package's TestMain must call RunIfChild; a child that does not
// report its address ends the test with tb.Fatalf.
func NewProcess(tb testing.TB, jetStream bool) *Process {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// TempDir's removal is registered first, so it runs after the process
	// has stopped (cleanups run last-in, first-out).
	dir := tb.TempDir()
	cmd.Env = append(os.Environ(), childEnv+"=1", childEnv+"_DIR="+dir)
	if jetStream {
		cmd.Env = append(cmd.Env, childEnv+"_JS=1")
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatalf("natstest: %v", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatalf("natstest: %v", err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("natstest: starting the server process: %v", err)
	}
	tb.Cleanup(func() {
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(processStopTimeout):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "URL ") {
		tb.Fatalf("natstest: the server process did not report its URL (does TestMain call RunIfChild?): %q %v", line, err)
	}
	return &Process{cmd: cmd, dir: dir, url: strings.TrimSpace(strings.TrimPrefix(line, "URL "))}
}

// URL returns the server's client URL, nats://127.0.0.1:PORT.
func (p *Process) URL() string { return p.url }

// StoreDir returns the server's JetStream store directory, removed when
// the test ends.
func (p *Process) StoreDir() string { return p.dir }

// Pid returns the id of the server process.
func (p *Process) Pid() int { return p.cmd.Process.Pid }
