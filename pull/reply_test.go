package pull_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// The pulls of one Messages call share a reply subject until the engine
// forgets them (here: a reconnect), and the pulls
// sent after that reply to a new one. Nothing is kept per pull, and the
// server routes every delivery to a subject it has seen before.
func TestPullsShareReplySubject(t *testing.T) {
	e := newEnv(t, jsapi.StorageFile)
	c := e.consumer(t, jsapi.ConsumerConfig{})
	spy := spyPulls(t, e)
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
		first = spy.seen(t)
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
		e.reconnect(t)
		e.publish(t, 1)
	}
	second := spy.seen(t)
	if len(second) == 0 {
		t.Fatal("no pull after the reconnect")
	}
	if last := second[len(second)-1]; last == first[0] {
		t.Fatalf("pulls before and after the reconnect both replied to %q", last)
	}
}

// A pull the server has no room for (MaxWaiting reached) is dropped
// without a reply when it asks for heartbeats (the server's rule, to avoid
// a hot loop of refusals). Messages notices the missing heartbeats,
// forgets the generation, pulls again on a new reply subject, and delivers
// once the server has room.
func TestMessagesRecoversFromMaxWaiting(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{MaxWaiting: 1})
	spy := spyPulls(t, e)

	// A Fetch holds the only waiting slot for about a second.
	fetchDone := make(chan struct{})
	go func() {
		defer close(fetchDone)
		ctx, cancel := context.WithTimeout(e.ctx, time.Second)
		defer cancel()
		_, _ = c.Fetch(ctx, 1)
	}()
	fetchReply := spy.next(t)

	errs := make(chan error, 64)
	got := make(chan *jsapi.Msg, 16)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range c.Messages(ctx, pull.MaxMessages(10), pull.Expires(2*time.Second),
			pull.Heartbeat(250*time.Millisecond), pull.OnError(func(err error) {
				select {
				case errs <- err:
				default:
				}
			})) {
			if err != nil {
				return
			}
			_ = m.Ack()
			got <- m
		}
	}()
	first := spy.next(t)
	select {
	case err := <-errs:
		if !errors.Is(err, pull.ErrNoHeartbeat) {
			t.Fatalf("reported %v, want ErrNoHeartbeat", err)
		}
	case <-e.ctx.Done():
		t.Fatal("the dropped pull went unnoticed")
	}
	again := spy.next(t)
	if again == first || again == fetchReply {
		t.Fatalf("the pull after the reset replied to %q (first pull %q)", again, first)
	}
	<-fetchDone
	e.publish(t, 5)
	for i := range 5 {
		select {
		case <-got:
		case <-e.ctx.Done():
			t.Fatalf("%d of 5 messages after the dropped pull", i)
		}
	}
	cancel()
	<-done
}
