package ordered_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/ordered"
)

func TestMain(m *testing.M) {
	natstest.RunIfChild()
	os.Exit(m.Run())
}

type env struct {
	s   *natstest.Server
	nc  *conn.Conn
	js  *jsapi.JS
	ctx context.Context
}

func newEnv(t testing.TB, storage jsapi.StorageType) *env {
	t.Helper()
	s := natstest.NewServer(t)
	j := testutil.JSEnvOn(t, s, s.URL())
	nc, js, ctx := j.Conn, j.JS, j.Ctx
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "O", Subjects: []string{"o.>"}, Storage: storage}); err != nil {
		t.Fatal(err)
	}
	return &env{s: s, nc: nc, js: js, ctx: ctx}
}

func (e *env) publish(t testing.TB, subj string, n int) {
	t.Helper()
	for i := range n {
		if _, err := e.js.Publish(e.ctx, subj, []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
}

// newOrdered makes an ordered consumer of stream with cfg, failing t if
// New fails.
func newOrdered(t testing.TB, js *jsapi.JS, stream string, cfg ordered.Config) *ordered.Consumer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	oc, err := ordered.New(ctx, js, stream, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return oc
}

// readAll reads with UntilDrained (and opts) and checks order and
// contiguity from first.
func readAll(t testing.TB, oc *ordered.Consumer, ctx context.Context, first uint64, opts ...ordered.Opt) uint64 {
	t.Helper()
	next := first
	for m, err := range oc.Messages(ctx, append(opts, ordered.UntilDrained())...) {
		if err != nil {
			t.Fatal(err)
		}
		md, _ := m.Metadata()
		if md.StreamSeq != next {
			t.Fatalf("got stream seq %d, want %d", md.StreamSeq, next)
		}
		next++
	}
	return next - first
}

func TestUntilDrainedAndResume(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	if n := readAll(t, oc, e.ctx, 1); n != 0 {
		t.Fatalf("empty stream yielded %d", n)
	}
	e.publish(t, "o.a", 1000)
	if n := readAll(t, oc, e.ctx, 1); n != 1000 {
		t.Fatalf("read %d of 1000", n)
	}
	if n := readAll(t, oc, e.ctx, 1001); n != 0 {
		t.Fatalf("second drained read yielded %d", n)
	}
	e.publish(t, "o.a", 10)
	if n := readAll(t, oc, e.ctx, 1001); n != 10 {
		t.Fatalf("resumed read yielded %d", n)
	}
}

func TestUntilDrainedWithConcurrentPublisher(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, "o.a", 200)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 2000 {
			if _, err := e.js.Publish(e.ctx, "o.b", []byte(fmt.Sprint(i))); err != nil {
				return
			}
		}
	}()
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	n := readAll(t, oc, e.ctx, 1)
	if n < 200 {
		t.Fatalf("drained read ended after %d, before the 200 published first", n)
	}
	<-done
	// What was not read yet comes with the next read, contiguously.
	rest := readAll(t, oc, e.ctx, n+1)
	if n+rest != 2200 {
		t.Fatalf("read %d + %d of 2200", n, rest)
	}
}

func TestFilterAndStartSeq(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	for i := range 30 {
		e.js.Publish(e.ctx, fmt.Sprintf("o.%d", i%3), nil)
	}
	oc := newOrdered(t, e.js, "O", ordered.Config{FilterSubjects: []string{"o.1"}, OptStartSeq: 10})
	var seqs []uint64
	for m, err := range oc.Messages(e.ctx, ordered.UntilDrained()) {
		if err != nil {
			t.Fatal(err)
		}
		md, _ := m.Metadata()
		seqs = append(seqs, md.StreamSeq)
		if m.Subject != "o.1" {
			t.Fatalf("subject %s", m.Subject)
		}
	}
	// o.1 is stream seqs 2, 5, 8, …, 29; from 10: 11, 14, …, 29.
	if len(seqs) != 7 || seqs[0] != 11 || seqs[6] != 29 {
		t.Fatalf("got %v", seqs)
	}
}

// A gap: another client steals messages from the ordered consumer.
func TestGapRecovery(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, "o.a", 50)
	var resets []error
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	next := uint64(1)
	stole := false
	for m, err := range oc.Messages(e.ctx, ordered.UntilDrained(), ordered.MaxMessages(1),
		ordered.OnReset(func(err error) { resets = append(resets, err) })) {
		if err != nil {
			t.Fatal(err)
		}
		md, _ := m.Metadata()
		if md.StreamSeq != next {
			t.Fatalf("got %d, want %d", md.StreamSeq, next)
		}
		next++
		if md.StreamSeq == 10 && !stole {
			stole = true
			// Pull two messages of the consumer from elsewhere.
			inbox := e.nc.NewInbox()
			sub, _ := e.nc.Subscribe(inbox)
			e.nc.PublishMsg("$JS.API.CONSUMER.MSG.NEXT.O."+oc.Name(), inbox, nil, []byte(`{"batch":2}`))
			for range 2 {
				if _, err := sub.NextMsg(e.ctx); err != nil {
					t.Fatal(err)
				}
			}
			sub.Unsubscribe()
		}
	}
	if next != 51 || oc.Resets() == 0 {
		t.Fatalf("read up to %d, resets %d", next-1, oc.Resets())
	}
}

func TestRecreateAfterConsumerDeletion(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, "o.a", 100)
	// Pulls waiting at the deleted consumer vanish without a status: the
	// missed heartbeats tell.
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	next := uint64(1)
	for m, err := range oc.Messages(e.ctx, ordered.UntilDrained(), ordered.MaxMessages(10), ordered.Heartbeat(300*time.Millisecond)) {
		if err != nil {
			t.Fatal(err)
		}
		md, _ := m.Metadata()
		if md.StreamSeq != next {
			t.Fatalf("got %d, want %d", md.StreamSeq, next)
		}
		next++
		if md.StreamSeq == 30 {
			if err := e.js.DeleteConsumer(e.ctx, "O", oc.Name()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if next != 101 || oc.Resets() == 0 {
		t.Fatalf("read to %d, resets %d", next-1, oc.Resets())
	}
}

func TestRecreateAfterRestart(t *testing.T) {
	e := newEnv(t, jsapi.StorageFile)
	e.publish(t, "o.a", 100)
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	next := uint64(1)
	for m, err := range oc.Messages(e.ctx, ordered.UntilDrained(), ordered.MaxMessages(10), ordered.Heartbeat(500*time.Millisecond)) {
		if err != nil {
			t.Fatal(err)
		}
		md, _ := m.Metadata()
		if md.StreamSeq != next {
			t.Fatalf("got %d, want %d", md.StreamSeq, next)
		}
		next++
		if md.StreamSeq == 30 {
			if err := e.s.Restart(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if next != 101 {
		t.Fatalf("read to %d", next-1)
	}
}

func TestIdleTimeout(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, "o.a", 3)
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	n := 0
	var last error
	for _, err := range oc.Messages(e.ctx, ordered.IdleTimeout(300*time.Millisecond)) {
		if err != nil {
			last = err
			break
		}
		n++
	}
	if n != 3 || !errors.Is(last, ordered.ErrNoMessages) {
		t.Fatalf("got %d then %v", n, last)
	}
}

func TestStreamDeletedIsTerminal(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, "o.a", 5)
	base := runtime.NumGoroutine()
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	var last error
	n := 0
	for _, err := range oc.Messages(e.ctx, ordered.Heartbeat(300*time.Millisecond)) {
		if err != nil {
			last = err
			break
		}
		if n++; n == 5 {
			if err := e.js.DeleteStream(e.ctx, "O"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !errors.Is(last, jsapi.ErrStreamNotFound) {
		t.Fatalf("ended with %v", last)
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > base {
		t.Fatalf("%d goroutines left, %d before", g, base)
	}
}

// DeliverLastPerSubject without a filter means every subject: the server
// wants a filter with this policy, so the consumer asks for ">".
func TestLastPerSubjectWithoutFilter(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	for i := range 9 {
		e.js.Publish(e.ctx, fmt.Sprintf("o.%d", i%3), []byte(fmt.Sprint(i)))
	}
	oc := newOrdered(t, e.js, "O", ordered.Config{DeliverPolicy: jsapi.DeliverLastPerSubject})
	got := map[string]string{}
	for m, err := range oc.Messages(e.ctx, ordered.UntilDrained()) {
		if err != nil {
			t.Fatal(err)
		}
		got[m.Subject] = string(m.Data)
	}
	if len(got) != 3 || got["o.0"] != "6" || got["o.1"] != "7" || got["o.2"] != "8" {
		t.Fatalf("got %v, want the last message of each of o.0, o.1, o.2", got)
	}
}

// Borrowed read-through: every message once, in order, intact within its
// loop body, most of them lent.
func TestBorrowedReadThrough(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	const n = 3000
	payload := func(i int) []byte { return bytes.Repeat(fmt.Appendf(nil, "{%d}", i), 40) }
	for i := range n {
		if _, err := e.js.Publish(e.ctx, "o.b", payload(i)); err != nil {
			t.Fatal(err)
		}
	}
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	next := 0
	for m, err := range oc.Messages(e.ctx, ordered.UntilDrained(), ordered.Borrowed(), ordered.MaxMessages(200)) {
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(m.Data, payload(next)) {
			t.Fatalf("message %d: %.30q", next, m.Data)
		}
		next++
	}
	if next != n {
		t.Fatalf("read %d of %d", next, n)
	}
	if st := e.nc.Stats(); st.BorrowedMsgs == 0 {
		t.Fatalf("nothing lent over %d messages", n)
	}
}

// Borrowed messages across server restarts and forced reconnects: still
// every stream sequence once, in order, each message intact in its loop
// body (a lent message read before a reconnect refers to the old link's
// buffer, which nobody reads into again).
func TestBorrowedAcrossRestart(t *testing.T) {
	e := newEnv(t, jsapi.StorageFile)
	const n = 600
	payload := func(i int) []byte { return bytes.Repeat(fmt.Appendf(nil, "<%d>", i), 30) }
	for i := range n {
		if _, err := e.js.Publish(e.ctx, "o.r", payload(i)); err != nil {
			t.Fatal(err)
		}
	}
	oc := newOrdered(t, e.js, "O", ordered.Config{})
	next := 0
	for m, err := range oc.Messages(e.ctx, ordered.UntilDrained(), ordered.Borrowed(), ordered.MaxMessages(50),
		ordered.Heartbeat(500*time.Millisecond)) {
		if err != nil {
			t.Fatal(err)
		}
		md, merr := m.Metadata()
		if merr != nil || md.StreamSeq != uint64(next+1) || !bytes.Equal(m.Data, payload(next)) {
			t.Fatalf("message %d: seq %d (%v), %.30q", next, md.StreamSeq, merr, m.Data)
		}
		next++
		switch next {
		case 150:
			if err := e.s.Restart(); err != nil {
				t.Fatal(err)
			}
		case 300, 450:
			e.nc.ForceReconnect()
		}
	}
	if next != n {
		t.Fatalf("read %d of %d", next, n)
	}
	if e.nc.Stats().BorrowedMsgs == 0 {
		t.Fatal("nothing lent")
	}
}

// UntilDrained stops when the read is caught up at delivery time (seed
// 000), not at what the stream held when the server-side consumer was
// made: messages stored after New and before the read are read, and so
// are those stored before the delivery that reports nothing pending.
func TestUntilDrainedIsCaughtUpAtReadTime(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	oc := newOrdered(t, e.js, "O", ordered.Config{}) // the stream is empty now
	e.publish(t, "o.a", 3)
	if n := readAll(t, oc, e.ctx, 1); n != 3 {
		t.Fatalf("a drained read after 3 were published yielded %d; want 3", n)
	}

	// Stored before New: 2; after New, before the read: 3 more.
	e.publish(t, "o.a", 2)
	oc2 := newOrdered(t, e.js, "O", ordered.Config{OptStartSeq: 4})
	e.publish(t, "o.a", 3)
	if n := readAll(t, oc2, e.ctx, 4); n != 5 {
		t.Fatalf("drained read yielded %d; want 5 (2 before New, 3 after)", n)
	}
}
