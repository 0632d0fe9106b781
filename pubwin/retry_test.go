package pubwin_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/leakcheck"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
	"github.com/natsio/natsio/pubwin"
)

// Shared test helpers (internal/testutil).
var (
	eventually = testutil.Eventually
)

// TestRetryStreamCreatedLate: 50 publishes to a subject no stream captures
// yet get 503s; the stream is created once the first 503 has arrived, and
// the retries store every message exactly once.
func TestRetryStreamCreatedLate(t *testing.T) {
	s := natstest.NewServer(t)
	js, nc, ctx := setup(t, s.URL(), "")
	// Generous retries: the stream's creation must land between two.
	w, err := pubwin.New(js, pubwin.MaxPending(64), pubwin.AckTimeout(30*time.Second),
		pubwin.RetryOnNoResponders(8, 50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	in := nc.Stats().InMsgs
	const n = 50
	fs := make([]*pubwin.Future, n)
	for i := range n {
		if fs[i], err = w.Publish(ctx, "late.x", []byte(fmt.Sprint(i)), jsapi.MsgID(fmt.Sprint("late-", i))); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the first 503", func() bool { return nc.Stats().InMsgs > in })
	st, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "LATE", Subjects: []string{"late.>"}, Storage: jsapi.StorageMemory})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Complete(ctx); err != nil {
		t.Fatal(err)
	}
	seen := make(map[uint64]bool)
	for i, f := range fs {
		ack, err := f.Wait(ctx)
		if err != nil {
			t.Fatalf("future %d: %v", i, err)
		}
		if ack.Stream != "LATE" || ack.Duplicate || ack.Sequence < 1 || ack.Sequence > n || seen[ack.Sequence] {
			t.Fatalf("future %d: %+v", i, ack)
		}
		seen[ack.Sequence] = true
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != n || info.State.LastSeq != n {
		t.Fatalf("stream holds %d messages up to sequence %d, want %d", info.State.Msgs, info.State.LastSeq, n)
	}
	if w.Pending() != 0 {
		t.Fatalf("%d pending", w.Pending())
	}
}

// TestRetryDisabled: with retries off (the default) a 503 fails the future at once, each
// message is sent once, and every slot comes back.
func TestRetryDisabled(t *testing.T) {
	s := natstest.NewServer(t)
	js, nc, _ := setup(t, s.URL(), "")
	const n = 20
	w, err := pubwin.New(js, pubwin.MaxPending(n), pubwin.StallWait(time.Second)) // retries off: the default
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	failAll(t, w, nc, n, 1)
}

// TestRetryExhausted: a stream that never appears; each message is sent
// 1+Attempts times, then fails with ErrNoStreamResponse, freeing its slot
// once.
func TestRetryExhausted(t *testing.T) {
	s := natstest.NewServer(t)
	js, nc, _ := setup(t, s.URL(), "")
	const n = 20
	w, err := pubwin.New(js, pubwin.MaxPending(n), pubwin.StallWait(time.Second),
		pubwin.RetryOnNoResponders(2, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	failAll(t, w, nc, n, 3)
}

// failAll publishes n messages that no stream captures and checks that each
// fails with ErrNoStreamResponse after sends attempts, then that the whole
// window is free again and Complete reports the failures.
func failAll(t *testing.T, w *pubwin.Window, nc *conn.Conn, n, sends int) {
	t.Helper()
	ctx := t.Context()
	out := nc.Stats().OutMsgs
	var fs []*pubwin.Future
	for i := range n {
		f, err := w.Publish(ctx, "none.x", []byte("x"), jsapi.MsgID(fmt.Sprint("none-", i)))
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	for i, f := range fs {
		if _, err := f.Wait(ctx); !errors.Is(err, jsapi.ErrNoStreamResponse) {
			t.Fatalf("future %d: %v, want ErrNoStreamResponse", i, err)
		}
	}
	// A send is counted before its reply can arrive.
	if got := nc.Stats().OutMsgs - out; got != uint64(n*sends) {
		t.Fatalf("%d sends of %d messages, want %d each", got, n, sends)
	}
	if w.Pending() != 0 || pubwin.RetryWaiting(w) != 0 {
		t.Fatalf("%d pending, %d waiting", w.Pending(), pubwin.RetryWaiting(w))
	}
	// Every slot is free: a full window's worth goes out without stalling
	// and is acknowledged.
	for i := range n {
		if _, err := w.Publish(ctx, "w.a", nil); err != nil {
			t.Fatalf("publish %d after the failures: %v", i, err)
		}
	}
	// Complete reports the failures, once.
	err := w.Complete(ctx)
	if ce, ok := errors.AsType[*pubwin.CompleteError](err); !ok || ce.Failed != n || ce.Total != 2*n || !errors.Is(err, jsapi.ErrNoStreamResponse) {
		t.Fatalf("Complete: %v, want %d of %d failed with ErrNoStreamResponse", err, n, 2*n)
	}
	if err := w.Complete(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRetryNotPastAckTimeout: a retry that could not be sent before the
// ack timeout is not made; the future fails with the reply's error at once.
func TestRetryNotPastAckTimeout(t *testing.T) {
	s := natstest.NewServer(t)
	js, _, ctx := setup(t, s.URL(), "")
	w, _ := pubwin.New(js, pubwin.AckTimeout(time.Minute), pubwin.RetryOnNoResponders(3, time.Hour))
	defer w.Close()
	f, err := w.Publish(ctx, "none.x", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Wait(ctx); !errors.Is(err, jsapi.ErrNoStreamResponse) {
		t.Fatalf("got %v, want ErrNoStreamResponse", err)
	}
}

// waitingWindow returns a window whose one publish waits an hour for its
// retry.
func waitingWindow(t *testing.T, js *jsapi.JS) (*pubwin.Window, *pubwin.Future) {
	t.Helper()
	w, err := pubwin.New(js, pubwin.AckTimeout(2*time.Hour), pubwin.RetryOnNoResponders(1, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	f, err := w.Publish(t.Context(), "none.x", []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the retry to be scheduled", func() bool { return pubwin.RetryWaiting(w) == 1 })
	return w, f
}

// TestRetryCloseDuringWait: Close fails a message waiting for its retry
// with ErrClosed, frees its slot and leaves no goroutine behind.
func TestRetryCloseDuringWait(t *testing.T) {
	s := natstest.NewServer(t)
	before := leakcheck.Snapshot()
	js, nc, ctx := setup(t, s.URL(), "")
	w, f := waitingWindow(t, js)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Wait(ctx); !errors.Is(err, pubwin.ErrClosed) {
		t.Fatalf("got %v, want ErrClosed", err)
	}
	if w.Pending() != 0 || pubwin.RetryWaiting(w) != 0 {
		t.Fatalf("%d pending, %d waiting after Close", w.Pending(), pubwin.RetryWaiting(w))
	}
	nc.Close()
	leakcheck.Wait(t, before, 10*time.Second)
}

// TestRetryDisconnectDuringWait: a disconnect fails a message waiting for
// its retry like any pending one, and the window works after the
// reconnect.
func TestRetryDisconnectDuringWait(t *testing.T) {
	s := natstest.NewServer(t)
	js, nc, ctx := setup(t, s.URL(), "")
	w, f := waitingWindow(t, js)
	defer w.Close()
	nc.ForceReconnect()
	if _, err := f.Wait(ctx); !errors.Is(err, pubwin.ErrAckLost) || !errors.Is(err, conn.ErrDisconnected) {
		t.Fatalf("got %v, want ErrAckLost", err)
	}
	if w.Pending() != 0 || pubwin.RetryWaiting(w) != 0 {
		t.Fatalf("%d pending, %d waiting after the disconnect", w.Pending(), pubwin.RetryWaiting(w))
	}
	eventually(t, "the reconnect", nc.IsConnected)
	f, err := w.Publish(ctx, "w.a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

// tooMany is the body of the stream's 429 reply.
var tooMany = []byte(`{"error":{"code":429,"err_code":10167,"description":"too many requests"},"stream":"TMR"}`)

// responder subscribes a second connection to subject: it stands in for a
// stream only to answer 429.
func responder(t *testing.T, url, subject string) (*conn.Conn, *conn.Subscription) {
	t.Helper()
	rc, err := conn.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	sub, err := rc.Subscribe(subject)
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	return rc, sub
}

// TestRetryTooManyRequests: a message pushed back with 429 is sent again,
// byte for byte under the same reply subject, and its future ends with the
// PubAck of the retry.
func TestRetryTooManyRequests(t *testing.T) {
	s := natstest.NewServer(t)
	js, _, ctx := setup(t, s.URL(), "")
	rc, sub := responder(t, s.URL(), "tmr.x")
	w, _ := pubwin.New(js, pubwin.RetryOnNoResponders(3, 10*time.Millisecond))
	defer w.Close()
	var h proto.Header
	h.Add("App", "v1")
	f, err := w.PublishMsg(ctx, "tmr.x", &h, []byte("payload"), jsapi.MsgID("m-1"))
	if err != nil {
		t.Fatal(err)
	}
	h.Set("App", "changed") // the caller's header is its own again
	m, err := sub.NextMsg(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The stream takes over before the 429 goes back.
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "TMR", Subjects: []string{"tmr.>"}, Storage: jsapi.StorageMemory})
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Publish(m.Reply, tooMany); err != nil {
		t.Fatal(err)
	}
	ack, err := f.Wait(ctx)
	if err != nil || ack.Stream != "TMR" || ack.Sequence != 1 || ack.Duplicate {
		t.Fatalf("after a 429: %+v %v", ack, err)
	}
	sm, err := st.GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if sm.Subject != "tmr.x" || sm.Header.String() != m.Header.String() || string(sm.Data) != "payload" {
		t.Fatalf("stored %q %q %q, first sent %q %q", sm.Subject, sm.Header, sm.Data, m.Header, m.Data)
	}
	if id := m.Header.Get(jsapi.HeaderMsgID); id != "m-1" {
		t.Fatalf("message ID %q", id)
	}
	if v := m.Header.Get("App"); v != "v1" {
		t.Fatalf("App header %q", v)
	}
}

// TestRetryTooManyRequestsExhausted: a stream that keeps pushing back;
// after its one retry the future fails with ErrTooManyRequests, and both
// sends were the same message.
func TestRetryTooManyRequestsExhausted(t *testing.T) {
	s := natstest.NewServer(t)
	js, _, ctx := setup(t, s.URL(), "")
	rc, sub := responder(t, s.URL(), "tmr.x")
	w, _ := pubwin.New(js, pubwin.RetryOnNoResponders(1, time.Millisecond))
	defer w.Close()
	f, err := w.Publish(ctx, "tmr.x", []byte("payload"), jsapi.MsgID("m-1"))
	if err != nil {
		t.Fatal(err)
	}
	var got []*conn.Msg
	for range 2 {
		m, err := sub.NextMsg(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
		if err := rc.Publish(m.Reply, tooMany); err != nil {
			t.Fatal(err)
		}
	}
	_, err = f.Wait(ctx)
	if apiErr, ok := errors.AsType[*jsapi.APIError](err); !errors.Is(err, jsapi.ErrTooManyRequests) || !ok || apiErr.Code != 429 {
		t.Fatalf("got %v, want ErrTooManyRequests", err)
	}
	a, b := got[0], got[1]
	if a.Subject != b.Subject || a.Reply != b.Reply || a.Header.String() != b.Header.String() || !bytes.Equal(a.Data, b.Data) {
		t.Fatalf("the retry differs: %q %q %q %q, then %q %q %q %q", a.Subject, a.Reply, a.Header, a.Data, b.Subject, b.Reply, b.Header, b.Data)
	}
	if w.Pending() != 0 || pubwin.RetryWaiting(w) != 0 {
		t.Fatalf("%d pending, %d waiting", w.Pending(), pubwin.RetryWaiting(w))
	}
}
