package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Server is the nats-server child process started from cmd/benchserver.
type Server struct {
	URL     string // nats://127.0.0.1:PORT
	Monitor string // http://127.0.0.1:PORT
	PID     int

	cmd      *exec.Cmd
	stdin    io.WriteCloser
	done     chan error
	stopOnce sync.Once
}

// BuildServer compiles ./cmd/benchserver of the bench module in moduleDir
// into dir and returns the binary's path.
func BuildServer(ctx context.Context, moduleDir, dir string) (string, error) {
	out := filepath.Join(dir, "benchserver")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/benchserver")
	cmd.Dir = moduleDir
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building benchserver: %v\n%s", err, b)
	}
	return out, nil
}

// ModuleDir returns the directory of the bench module: the one of the go.mod
// that the go command finds from the working directory, which must be the
// bench module.
func ModuleDir(ctx context.Context) (string, error) {
	b, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(b))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside a Go module: run from the bench directory or pass -server")
	}
	data, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	if !strings.Contains(string(data), "module github.com/natsio/natsio/bench\n") {
		return "", fmt.Errorf("%s is not the bench module: run from the bench directory or pass -server", gomod)
	}
	return filepath.Dir(gomod), nil
}

// StartServer starts the server binary at path and waits (up to 30 s) for its
// URL line.
func StartServer(path string) (*Server, error) { return StartServerOn(path, nil) }

// StartServerOn is StartServer with the server process confined to cpus
// (StartOn); nil cpus leave it free.
func StartServerOn(path string, cpus CPUs) (*Server, error) {
	cmd := exec.Command(path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := Start(cmd, cpus); err != nil {
		return nil, err
	}
	s := &Server{PID: cmd.Process.Pid, cmd: cmd, stdin: stdin, done: make(chan error, 1)}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
		s.done <- cmd.Wait()
	}()
	select {
	case line, ok := <-lines:
		if !ok {
			s.Stop()
			return nil, errors.New("benchserver exited before printing its URL")
		}
		var pid int
		if _, err := fmt.Sscanf(line, "URL %s MONITOR %s PID %d", &s.URL, &s.Monitor, &pid); err != nil {
			s.Stop()
			return nil, fmt.Errorf("benchserver printed %q: %v", line, err)
		}
		if pid != s.PID {
			s.Stop()
			return nil, fmt.Errorf("benchserver reports pid %d, started %d", pid, s.PID)
		}
		return s, nil
	case <-time.After(30 * time.Second):
		s.Stop()
		return nil, errors.New("benchserver printed no URL within 30s")
	}
}

// Stop asks the server to shut down (SIGTERM, and closing its stdin) and
// kills it if it has not exited within 10 s. It is safe to call more than
// once.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		_ = s.stdin.Close()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
}

// Varz holds the server counters the harness checks.
type Varz struct {
	Version    string `json:"version"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	InMsgs     int64  `json:"in_msgs"`
	OutMsgs    int64  `json:"out_msgs"`
}

// Varz reads the server's /varz counters.
func (s *Server) Varz() (Varz, error) {
	var v Varz
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(s.Monitor + "/varz")
	if err != nil {
		return v, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return v, fmt.Errorf("/varz: %s", resp.Status)
	}
	err = json.NewDecoder(resp.Body).Decode(&v)
	return v, err
}
