package compat

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// server is a nats-server child process with JetStream, its store in a
// test's temporary directory.
type server struct {
	t       testing.TB
	bin     string
	dir     string // store and config
	port    int    // 0 until the first start picked one
	cmd     *exec.Cmd
	exited  chan struct{}
	logMu   sync.Mutex
	logTail []string // the last lines the server logged, for failures
}

// startTimeout bounds a server's start (building the binary is not part
// of it); a busy machine may be slow.
const startTimeout = 2 * time.Minute

// domain is the JetStream domain every server runs with, so that the
// suite can reach JetStream through $JS.<domain>.API as well.
const domain = "compat"

var (
	reListen = regexp.MustCompile(`Listening for client connections on [^ ]*:(\d+)`)
	reReady  = "Server is ready"
)

// startServer starts bin on a free port with JetStream; the process is
// killed when the test ends.
func startServer(t testing.TB, bin string) *server {
	t.Helper()
	s := &server{t: t, bin: bin, dir: t.TempDir()}
	s.start()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s: the server's last log lines:\n%s", s.bin, s.log())
		}
		s.stop()
	})
	return s
}

// URL is the server's client URL.
func (s *server) URL() string { return "nats://127.0.0.1:" + strconv.Itoa(s.port) }

// start writes the configuration (the port picked by the first start is
// kept, so that clients reconnect to a restarted server) and waits until
// the server logs that it is ready.
func (s *server) start() {
	t := s.t
	t.Helper()
	port := "-1"
	if s.port != 0 {
		port = strconv.Itoa(s.port)
	}
	conf := fmt.Sprintf("listen: \"127.0.0.1:%s\"\njetstream {\n  store_dir: %q\n  domain: %s\n  max_memory_store: 256MB\n  max_file_store: 1GB\n}\n",
		port, filepath.Join(s.dir, "store"), domain)
	cf := filepath.Join(s.dir, "server.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(s.bin, "-c", cf)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", s.bin, err)
	}
	s.cmd = cmd
	s.exited = make(chan struct{})
	ready := make(chan int, 1)
	go s.readLog(stderr, ready)
	go func(exited chan struct{}) {
		_ = cmd.Wait()
		close(exited)
	}(s.exited)
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case p := <-ready:
		s.port = p
	case <-s.exited:
		t.Fatalf("%s exited before it was ready:\n%s", s.bin, s.log())
	case <-timer.C:
		t.Fatalf("%s not ready after %v:\n%s", s.bin, startTimeout, s.log())
	}
}

// readLog keeps the server's last log lines and sends the client port on
// ready once the server says it is ready.
func (s *server) readLog(r io.Reader, ready chan<- int) {
	sc := bufio.NewScanner(r)
	port, sent := 0, false
	for sc.Scan() {
		line := sc.Text()
		s.logMu.Lock()
		if len(s.logTail) == 50 {
			s.logTail = s.logTail[1:]
		}
		s.logTail = append(s.logTail, line)
		s.logMu.Unlock()
		if m := reListen.FindStringSubmatch(line); m != nil {
			port, _ = strconv.Atoi(m[1])
		}
		if !sent && port != 0 && strings.Contains(line, reReady) {
			ready <- port
			sent = true
		}
	}
	_, _ = io.Copy(io.Discard, r)
}

func (s *server) log() string {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return strings.Join(s.logTail, "\n")
}

// stop kills the server and waits for it to exit.
func (s *server) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

// restart stops the server and starts it again on the same port with the
// same store.
func (s *server) restart() {
	s.stop()
	s.start()
}

// testCtx is the bound of one check: generous, for a busy machine; a
// check that fails ends by its error long before it.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}
