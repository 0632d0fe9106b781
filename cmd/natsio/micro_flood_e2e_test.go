package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/micro"
)

// floodInfo makes another connection answer every $SRV.INFO request with
// INFO replies sent without pause by a few goroutines, until stop.
func floodInfo(t *testing.T, s *testServer) (stop func()) {
	t.Helper()
	nc, _ := serviceConn(t, s)
	body := fmt.Appendf(nil, `{"type":%q,"name":"flood","id":"F1","version":"1.0.0","metadata":{},"endpoints":[]}`, micro.InfoResponseType)
	return testutil.FloodReplies(t, nc, "$SRV.INFO", body)
}

// `micro ls --timeout 2s` under a flood of responders returns in about
// 2 s, showing what it kept, instead of gathering replies for as long as
// they come (4.3 GB in 13 s before).
func TestMicroLsUnderFloodReturnsInTime(t *testing.T) {
	t.Parallel()
	const (
		timeout = 2 * time.Second
		// Start-up and connection of the process, on a loaded machine;
		// far below the flood's length.
		slack = 3 * time.Second
		// The flood stops at last so that a command that does not end
		// still ends and the test reports it.
		watchdog = 20 * time.Second
	)
	s := startServer(t)
	stop := floodInfo(t, s)
	dog := time.AfterFunc(watchdog, stop)
	defer dog.Stop()
	start := time.Now()
	r := runCLI(t, s.args("micro", "ls", "--timeout", timeout.String())...)
	took := time.Since(start)
	stop()
	if r.code != 0 || !strings.Contains(r.stdout, "flood") {
		t.Fatalf("micro ls under a flood:\n%s", r)
	}
	if took > timeout+slack {
		t.Fatalf("micro ls --timeout %v under a flood took %v", timeout, took)
	}
	t.Logf("micro ls --timeout %v under a flood: %v; %s", timeout, took.Round(time.Millisecond), strings.TrimSpace(r.stderr))
}
