package pull_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
)

// pullSpy sees the pull requests the server receives for consumer C of
// stream S, in arrival order, through a subscription of its own on the
// pull subject (the server's handler gets them too). Only the test's
// goroutine uses it.
type pullSpy struct {
	ctx   context.Context
	nc    *conn.Conn
	sub   *conn.Subscription
	pulls []spiedPull
	read  int // pulls already returned by next or seen
}

type spiedPull struct {
	reply string
	body  struct {
		Group string `json:"group"`
		ID    string `json:"id"`
	}
	hasID bool
}

func spyPulls(t *testing.T, e *env) *pullSpy {
	t.Helper()
	nc, err := conn.Connect(e.ctx, e.s.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	sub, err := nc.Subscribe("$JS.API.CONSUMER.MSG.NEXT.S.C")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(e.ctx); err != nil {
		t.Fatal(err)
	}
	return &pullSpy{ctx: e.ctx, nc: nc, sub: sub}
}

func (s *pullSpy) record(t *testing.T, m *conn.Msg) {
	t.Helper()
	p := spiedPull{reply: m.Reply}
	if err := json.Unmarshal(m.Data, &p.body); err != nil {
		t.Fatalf("pull body %q: %v", m.Data, err)
	}
	p.hasID = strings.Contains(string(m.Data), `"id"`)
	s.pulls = append(s.pulls, p)
}

// wait returns the n-th pull (1-based), waiting up to 10 s for it.
func (s *pullSpy) wait(t *testing.T, n int) spiedPull {
	t.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	for len(s.pulls) < n {
		m, err := s.sub.NextMsg(ctx)
		if err != nil {
			t.Fatalf("pull %d not seen (%d were): %v", n, len(s.pulls), err)
		}
		s.record(t, m)
	}
	return s.pulls[n-1]
}

// next returns the reply subject of the pull after the last one returned.
func (s *pullSpy) next(t *testing.T) string {
	t.Helper()
	s.read++
	return s.wait(t, s.read).reply
}

// seen returns the reply subjects of the pulls received since the last
// next or seen, after a round trip of the spy's own (so that a pull the
// server routed before that has arrived).
func (s *pullSpy) seen(t *testing.T) []string {
	t.Helper()
	if err := s.nc.Flush(s.ctx); err != nil {
		t.Fatal(err)
	}
	for {
		m, ok := s.sub.TryNextMsg() // what is queued, no wait
		if !ok {
			break
		}
		s.record(t, m)
	}
	var out []string
	for _, p := range s.pulls[s.read:] {
		out = append(out, p.reply)
	}
	s.read = len(s.pulls)
	return out
}
