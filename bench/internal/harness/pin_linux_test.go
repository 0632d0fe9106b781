package harness

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestMain makes the test binary a helper process when
// HARNESS_PIN_HELPER is set: it starts threads of its own, says how many
// it has, and waits for its stdin to end.
func TestMain(m *testing.M) {
	if os.Getenv("HARNESS_PIN_HELPER") == "1" {
		pinHelper()
		return
	}
	os.Exit(m.Run())
}

func pinHelper() {
	const extra = 4
	started := make(chan struct{})
	for range extra {
		go func() {
			runtime.LockOSThread() // a thread of its own, created after main started
			started <- struct{}{}
			select {}
		}()
	}
	for range extra {
		<-started
	}
	tasks, _ := os.ReadDir("/proc/self/task")
	fmt.Printf("threads %d\n", len(tasks))
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// TestStartOnConfinesEveryThread starts a process on one CPU with StartOn
// and reads every one of its threads' Cpus_allowed_list from /proc: the
// threads its runtime made before main and the ones it made later are all
// on that CPU. The CPUs of this process are left as they were.
func TestStartOnConfinesEveryThread(t *testing.T) {
	all, err := SelfCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 2 {
		t.Skipf("needs 2 CPUs, this process may run on %s", all)
	}
	for _, want := range []CPUs{{all[len(all)-1]}, all[:len(all)-1]} {
		t.Run(want.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "HARNESS_PIN_HELPER=1")
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := StartOn(cmd, want); err != nil {
				t.Fatal(err)
			}
			defer func() {
				in.Close()
				if err := cmd.Wait(); err != nil {
					t.Errorf("helper: %v", err)
				}
			}()
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				t.Fatalf("helper said %q: %v", line, err)
			}
			var n int
			if _, err := fmt.Sscanf(line, "threads %d", &n); err != nil || n < 5 {
				t.Fatalf("helper said %q, want 5 threads or more", line)
			}
			statuses, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", cmd.Process.Pid))
			if err != nil || len(statuses) < n {
				t.Fatalf("%d thread statuses (%v), want %d or more", len(statuses), err, n)
			}
			for _, st := range statuses {
				b, err := os.ReadFile(st)
				if err != nil {
					t.Fatal(err)
				}
				_, rest, ok := strings.Cut(string(b), "Cpus_allowed_list:")
				if !ok {
					t.Fatalf("%s has no Cpus_allowed_list", st)
				}
				list, _, _ := strings.Cut(rest, "\n")
				got, err := ParseCPUs(list)
				if err != nil || !slices.Equal(got, want) {
					t.Errorf("%s: Cpus_allowed_list %q, want %s", st, strings.TrimSpace(list), want)
				}
			}
			if got, err := ThreadCPUs(cmd.Process.Pid); err != nil || !slices.Equal(got, want) {
				t.Errorf("ThreadCPUs = %v, %v; want %s", got, err, want)
			}
			if got, err := SelfCPUs(); err != nil || !slices.Equal(got, all) {
				t.Errorf("this process's CPUs after StartOn: %v, %v; want %s", got, err, all)
			}
		})
	}
}
