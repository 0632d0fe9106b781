package pull_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// pinOf returns the pin stamped on every message of msgs (failing when
// they differ or one has none) and their stream sequences.
func pinOf(t *testing.T, msgs []*jsapi.Msg) (string, []uint64) {
	t.Helper()
	pin := ""
	var seqs []uint64
	for _, m := range msgs {
		p := m.Header.Get("Nats-Pin-Id")
		if p == "" || (pin != "" && p != pin) {
			t.Fatalf("message pin %q (others %q)", p, pin)
		}
		pin = p
		md, err := m.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, md.StreamSeq)
		if err := m.AckSync(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return pin, seqs
}

func pinnedID(t *testing.T, e *env, c *pull.Consumer) string {
	t.Helper()
	info, err := c.Info(e.ctx)
	if err != nil || len(info.PriorityGroups) != 1 || info.PriorityGroups[0].Group != "g" {
		t.Fatalf("consumer info: %+v %v", info, err)
	}
	return info.PriorityGroups[0].PinnedClientID
}

func fetchWithin(c *pull.Consumer, d time.Duration, n int) ([]*jsapi.Msg, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return c.Fetch(ctx, n, pull.FetchGroup("g"))
}

// F27 (ADR-42 pinned_client): the pin id stamped on the first delivery
// (Nats-Pin-Id) is sent back as "id" in the next pulls, which is what keeps
// client A served (a pull without it is a stand-by while a pin is held);
// client B without the pin gets nothing. After Unpin, B pulls and is
// pinned; A's next pull still carries the stale id and Fetch returns the
// non-terminal 423 ErrPinMismatch; Fetch drops the stale id, so A's
// following pull carries no id and A is an ordinary stand-by again.
func TestPinnedClientPinReplayAndMismatch(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	a := e.consumer(t, jsapi.ConsumerConfig{AckWait: 30 * time.Second, PriorityPolicy: jsapi.PriorityPinnedClient,
		PriorityGroups: []string{"g"}, PriorityTimeout: time.Minute})
	spy := spyPulls(t, e)
	b := e.bindOther(t)
	e.publish(t, 20)
	pulls := 0
	nextPull := func(who string, wantID string) {
		t.Helper()
		pulls++
		p := spy.wait(t, pulls)
		if p.body.Group != "g" || p.body.ID != wantID || p.hasID != (wantID != "") {
			t.Fatalf("pull %d of %s: group %q id %q (has id %v), want id %q", pulls, who, p.body.Group, p.body.ID, p.hasID, wantID)
		}
	}

	// A is pinned by its first pull (sent without an id).
	msgs, err := fetchWithin(a, 2*time.Second, 5)
	if err != nil || len(msgs) != 5 {
		t.Fatalf("A's first fetch: %d %v", len(msgs), err)
	}
	nextPull("A", "")
	pinA, seqs := pinOf(t, msgs)
	if seqs[0] != 1 || seqs[4] != 5 {
		t.Fatalf("A's first fetch got %v", seqs)
	}
	if got := pinnedID(t, e, a); got != pinA {
		t.Fatalf("server's pinned id %q, message pin %q", got, pinA)
	}

	// A pulls again with its pin and is served again.
	msgs, err = fetchWithin(a, 2*time.Second, 5)
	if err != nil || len(msgs) != 5 {
		t.Fatalf("A's second fetch: %d %v", len(msgs), err)
	}
	nextPull("A", pinA)
	if pin, seqs := pinOf(t, msgs); pin != pinA || seqs[0] != 6 || seqs[4] != 10 {
		t.Fatalf("A's second fetch: pin %q seqs %v (pin was %q)", pin, seqs, pinA)
	}

	// B is a stand-by while A holds the pin: its pull expires empty.
	msgs, err = fetchWithin(b, 400*time.Millisecond, 5)
	if err != nil || len(msgs) != 0 {
		t.Fatalf("B while A is pinned: %d %v", len(msgs), err)
	}
	nextPull("B", "")

	// Unpin; B pulls and is pinned with a new id.
	if err := e.js.UnpinConsumer(e.ctx, a.Stream(), a.Name(), "g"); err != nil {
		t.Fatal(err)
	}
	if got := pinnedID(t, e, a); got != "" {
		t.Fatalf("pinned id after unpin: %q", got)
	}
	msgs, err = fetchWithin(b, 2*time.Second, 5)
	if err != nil || len(msgs) != 5 {
		t.Fatalf("B after unpin: %d %v", len(msgs), err)
	}
	nextPull("B", "")
	pinB, seqs := pinOf(t, msgs)
	if pinB == pinA || seqs[0] != 11 || seqs[4] != 15 {
		t.Fatalf("B after unpin: pin %q (A's %q) seqs %v", pinB, pinA, seqs)
	}
	if got := pinnedID(t, e, a); got != pinB {
		t.Fatalf("server's pinned id %q, B's pin %q", got, pinB)
	}

	// A's next pull carries its stale pin: 423, typed, not terminal, no
	// messages.
	msgs, err = fetchWithin(a, 2*time.Second, 5)
	var se *jsapi.StatusError
	if len(msgs) != 0 || !errors.Is(err, pull.ErrPinMismatch) || !errors.As(err, &se) || se.Code != 423 || terminalStatus(se) {
		t.Fatalf("A with a stale pin: %d messages, %v; want a non-terminal 423 ErrPinMismatch", len(msgs), err)
	}
	nextPull("A", pinA)

	// The stale pin was dropped: A's next pull has no id, so A waits as a
	// stand-by (no 423 again) and gets nothing while B holds the pin.
	msgs, err = fetchWithin(a, 400*time.Millisecond, 5)
	if err != nil || len(msgs) != 0 {
		t.Fatalf("A after the mismatch: %d %v", len(msgs), err)
	}
	nextPull("A", "")

	// B keeps its pin and is served the rest.
	msgs, err = fetchWithin(b, 2*time.Second, 5)
	if err != nil || len(msgs) != 5 {
		t.Fatalf("B's second fetch: %d %v", len(msgs), err)
	}
	nextPull("B", pinB)
	if pin, seqs := pinOf(t, msgs); pin != pinB || seqs[0] != 16 || seqs[4] != 20 {
		t.Fatalf("B's second fetch: pin %q seqs %v", pin, seqs)
	}
	if got := pinnedID(t, e, a); got != pinB {
		t.Fatalf("server's pinned id at the end %q, want B's %q", got, pinB)
	}
}
