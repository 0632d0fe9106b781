package pull_test

// Stopping a Consume, or breaking out of a Messages loop, withdraws its
// pulls at the server before it returns: a message published right after,
// by a producer on another connection, goes to the next reader (on a
// connection of its own) at once, not to the stopped pull (which would
// hold it until AckWait ran out).

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

const withdrawRounds = 50

// nextAtOnce fails unless Next returns message want well within AckWait
// (30 s): a message taken by a pull that was not withdrawn would come
// back only after it.
func nextAtOnce(t *testing.T, e *env, c *pull.Consumer, round int, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
	defer cancel()
	m, err := c.Next(ctx)
	if err != nil || string(m.Data) != want {
		t.Fatalf("round %d: Next got %v, %v; want %q at once (taken by the stopped pull?)", round, m, err, want)
	}
	m.Ack()
}

func TestConsumeStopWithdrawsThePull(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{AckWait: 30 * time.Second})
	other, prod := e.bindOther(t), e.otherJS(t)
	for round := range withdrawRounds {
		got := make(chan string, 1)
		cc, err := c.Consume(e.ctx, func(m *jsapi.Msg) {
			m.Ack()
			got <- string(m.Data)
		}, pull.MaxMessages(10), pull.Expires(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		first := fmt.Sprint("a", round)
		if _, err := e.js.Publish(e.ctx, "s.x", []byte(first)); err != nil {
			t.Fatal(err)
		}
		select {
		case d := <-got:
			if d != first {
				t.Fatalf("round %d: handler got %q", round, d)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the handler got nothing", round)
		}
		cc.Stop()
		after := fmt.Sprint("b", round)
		if _, err := prod.Publish(e.ctx, "s.x", []byte(after)); err != nil {
			t.Fatal(err)
		}
		nextAtOnce(t, e, other, round, after)
		<-cc.Closed()
	}
}

func TestMessagesBreakWithdrawsThePull(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{AckWait: 30 * time.Second})
	other, prod := e.bindOther(t), e.otherJS(t)
	for round := range withdrawRounds {
		first := fmt.Sprint("a", round)
		if _, err := e.js.Publish(e.ctx, "s.x", []byte(first)); err != nil {
			t.Fatal(err)
		}
		for m, err := range c.Messages(e.ctx, pull.MaxMessages(10), pull.Expires(time.Minute)) {
			if err != nil || string(m.Data) != first {
				t.Fatalf("round %d: Messages yielded %v, %v", round, m, err)
			}
			m.Ack()
			break
		}
		after := fmt.Sprint("b", round)
		if _, err := prod.Publish(e.ctx, "s.x", []byte(after)); err != nil {
			t.Fatal(err)
		}
		nextAtOnce(t, e, other, round, after)
	}
}

// A NoWait Fetch that the server keeps open (MaxAckPending 1 holds back
// the second stored message) ends once the pull goes quiet, well before
// its context's deadline, with what arrived; its pull is withdrawn, so the
// held-back message goes to the next reader once the first is acked.
func TestNoWaitEndsWhenTheServerKeepsThePullOpen(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	c := e.consumer(t, jsapi.ConsumerConfig{MaxAckPending: 1, AckWait: 30 * time.Second})
	e.publish(t, 2)
	ctx, cancel := context.WithTimeout(e.ctx, 20*time.Second)
	defer cancel()
	msgs, err := c.Fetch(ctx, 3, pull.NoWait())
	if ctx.Err() != nil {
		t.Fatalf("Fetch(3, NoWait) waited for its context's deadline: %d messages, %v", len(msgs), err)
	}
	if err != nil || len(msgs) != 1 || string(msgs[0].Data) != "0" {
		t.Fatalf("Fetch(3, NoWait): %d messages, %v; want message 0 and no error", len(msgs), err)
	}
	msgs[0].AckSync(e.ctx)
	nextAtOnce(t, e, c, 0, "1")
}
