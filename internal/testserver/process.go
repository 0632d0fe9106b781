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

	"github.com/nats-io/nats-server/v2/server"
)

// childEnv marks a test binary re-executed by StartProcess to run a server.
const childEnv = "NATSIO_TESTSERVER_CHILD"

// RunIfChild runs a server and exits when this process was started by
// StartProcess; otherwise it returns at once. Call it first in TestMain:
//
//	func TestMain(m *testing.M) { testserver.RunIfChild(); os.Exit(m.Run()) }
func RunIfChild() {
	if os.Getenv(childEnv) != "1" {
		return
	}
	dir, err := os.MkdirTemp("", "natsio-child-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer os.RemoveAll(dir)
	opts := &server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		JetStream: os.Getenv(childEnv+"_JS") == "1", StoreDir: dir}
	s, err := server.NewServer(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	go s.Start()
	if !s.ReadyForConnections(readyTimeout) {
		fmt.Fprintln(os.Stderr, "server not ready")
		os.Exit(2)
	}
	fmt.Printf("URL %s\n", s.ClientURL())
	// The parent closes stdin (or dies): shut down.
	_, _ = io.Copy(io.Discard, os.Stdin)
	s.Shutdown()
	s.WaitForShutdown()
	os.Exit(0)
}

// Process is a nats-server running in a child process, so that a
// benchmark's allocation and CPU figures count the client alone.
type Process struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	url   string
}

// URL returns the server's client URL.
func (p *Process) URL() string { return p.url }

// Pid returns the server process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// StartProcess re-executes the test binary as a server process (the package's
// TestMain must call RunIfChild) and stops it at cleanup.
func StartProcess(t testing.TB, jetstream bool) *Process {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
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
	p := &Process{cmd: cmd, stdin: stdin}
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
