package pull_test

import (
	"context"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// The pulls of one Messages call share a reply subject until the engine
// forgets them (here: a reconnect after a server restart), and the pulls
// sent after that reply to a new one. Nothing is kept per pull, and the
// server routes every delivery to a subject it has seen before.
func TestPullsShareReplySubject(t *testing.T) {
	e := newEnv(t, jsapi.StorageFile)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	spy, err := conn.Connect(e.ctx, e.s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer spy.Close()
	pulls, err := spy.Subscribe("$JS.API.CONSUMER.MSG.NEXT.S.C")
	if err != nil {
		t.Fatal(err)
	}
	if err := spy.Flush(e.ctx); err != nil {
		t.Fatal(err)
	}
	const n = 100
	e.publish(t, n)
	got := 0
	var first []string
	for m, err := range c.Messages(e.ctx, pull.MaxMessages(10)) {
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Ack(); err != nil {
			t.Fatal(err)
		}
		got++
		if got < n {
			continue
		}
		if got > n {
			break // the message published after the reconnect
		}
		// All n read: every pull so far shares one reply subject.
		if err := spy.Flush(e.ctx); err != nil {
			t.Fatal(err)
		}
		first = replies(t, pulls)
		if len(first) < n/10 {
			t.Fatalf("%d pulls for %d messages in batches of 10", len(first), n)
		}
		for _, r := range first[1:] {
			if r != first[0] {
				t.Fatalf("pulls of one Messages call replied to %q and %q", first[0], r)
			}
		}
		// A reconnect forgets the pulls: those sent after it use a new
		// subject.
		reconnected := make(chan struct{}, 1)
		remove := e.nc.OnReconnect(func() { reconnected <- struct{}{} })
		e.nc.ForceReconnect()
		select {
		case <-reconnected:
		case <-e.ctx.Done():
			t.Fatal("no reconnect")
		}
		remove()
		e.publish(t, 1)
	}
	if err := spy.Flush(e.ctx); err != nil {
		t.Fatal(err)
	}
	second := replies(t, pulls)
	if len(second) == 0 {
		t.Fatal("no pull after the reconnect")
	}
	if last := second[len(second)-1]; last == first[0] {
		t.Fatalf("pulls before and after the reconnect both replied to %q", last)
	}
}

// replies drains the pull requests the spy has seen so far.
func replies(t *testing.T, pulls *conn.Subscription) []string {
	t.Helper()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	var out []string
	for {
		m, err := pulls.NextMsg(done)
		if err != nil {
			return out
		}
		out = append(out, m.Reply)
	}
}
