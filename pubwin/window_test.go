package pubwin_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pubwin"
)

func TestMain(m *testing.M) {
	natstest.RunIfChild()
	os.Exit(m.Run())
}

func setup(t testing.TB, url string, streamCfg string) (*jsapi.JS, *conn.Conn, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	nc, err := conn.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	js, err := jsapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	m, err := nc.Request(ctx, "$JS.API.STREAM.CREATE.W", []byte(`{"name":"W","subjects":["w.>"],"storage":"memory"`+streamCfg+`}`))
	if err != nil || strings.Contains(string(m.Data), `"error"`) {
		t.Fatalf("create stream: %v %s", err, m.Data)
	}
	return js, nc, ctx
}

func TestWindowPublishesAndAcks(t *testing.T) {
	s := natstest.NewServer(t)
	js, _, ctx := setup(t, s.URL(), "")
	w, err := pubwin.New(js, pubwin.MaxPending(64))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const n = 2000
	futures := make([]*pubwin.Future, n)
	for i := range n {
		if futures[i], err = w.Publish(ctx, "w.a", []byte(fmt.Sprint(i)), jsapi.MsgID(fmt.Sprint("id-", i))); err != nil {
			t.Fatal(err)
		}
		if p := w.Pending(); p > 64 {
			t.Fatalf("%d pending, window is 64", p)
		}
	}
	if err := w.Complete(ctx); err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	for i, f := range futures {
		ack, err := f.Wait(ctx)
		if err != nil {
			t.Fatalf("future %d: %v", i, err)
		}
		if ack.Stream != "W" || ack.Sequence == 0 || seen[ack.Sequence] {
			t.Fatalf("future %d: %+v", i, ack)
		}
		seen[ack.Sequence] = true
	}
	// A retry with the same ID is a duplicate with the original sequence.
	f, _ := w.Publish(ctx, "w.a", []byte("0"), jsapi.MsgID("id-0"))
	ack, err := f.Wait(ctx)
	if err != nil || !ack.Duplicate {
		t.Fatalf("retry: %+v %v", ack, err)
	}
	if w.Pending() != 0 {
		t.Fatalf("%d pending after completion", w.Pending())
	}
}

func TestWindowStreamErrors(t *testing.T) {
	s := natstest.NewServer(t)
	js, _, ctx := setup(t, s.URL(), "")
	w, _ := pubwin.New(js)
	defer w.Close()
	f, err := w.Publish(ctx, "w.a", nil, jsapi.ExpectLastSeq(42))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Wait(ctx); !errors.Is(err, jsapi.ErrWrongLastSequence) {
		t.Fatalf("got %v", err)
	}
	f, _ = w.Publish(ctx, "nostream.x", nil)
	if _, err := f.Wait(ctx); !errors.Is(err, jsapi.ErrNoStreamResponse) {
		t.Fatalf("no stream: %v", err)
	}
	if _, err := w.Publish(ctx, "w.a", nil, jsapi.TTL(time.Millisecond)); !errors.Is(err, conn.ErrInvalidOption) {
		t.Fatalf("bad option: %v", err)
	}
	if w.Pending() != 0 {
		t.Fatal("slots leaked")
	}
}

// A stream that never acks (no_ack): the window fills, stalls, and futures
// time out, freeing their slots.
func TestWindowNoAckStreamTimesOut(t *testing.T) {
	s := natstest.NewServer(t)
	js, _, ctx := setup(t, s.URL(), `,"no_ack":true`)
	w, _ := pubwin.New(js, pubwin.MaxPending(5), pubwin.StallWait(20*time.Millisecond), pubwin.AckTimeout(300*time.Millisecond))
	defer w.Close()
	var fs []*pubwin.Future
	for range 5 {
		f, err := w.Publish(ctx, "w.a", nil)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	if _, err := w.Publish(ctx, "w.a", nil); !errors.Is(err, pubwin.ErrTooManyStalled) {
		t.Fatalf("full window: %v", err)
	}
	for _, f := range fs {
		if _, err := f.Wait(ctx); !errors.Is(err, pubwin.ErrAckTimeout) {
			t.Fatalf("got %v", err)
		}
	}
	if w.Pending() != 0 {
		t.Fatalf("%d slots leaked", w.Pending())
	}
	// The window is usable again.
	if _, err := w.Publish(ctx, "w.a", nil); err != nil {
		t.Fatal(err)
	}
}

func TestWindowFailsOnDisconnect(t *testing.T) {
	s := natstest.NewServer(t)
	js, nc, ctx := setup(t, s.URL(), `,"no_ack":true`)
	w, _ := pubwin.New(js, pubwin.MaxPending(100), pubwin.AckTimeout(time.Hour))
	defer w.Close()
	var fs []*pubwin.Future
	for range 50 {
		f, err := w.Publish(ctx, "w.a", nil)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	nc.Flush(ctx)
	nc.ForceReconnect()
	for _, f := range fs {
		_, err := f.Wait(ctx)
		if !errors.Is(err, pubwin.ErrAckLost) || !errors.Is(err, conn.ErrDisconnected) {
			t.Fatalf("got %v", err)
		}
	}
	if w.Pending() != 0 {
		t.Fatal("slots leaked across the disconnect")
	}
	// Close fails what is left with ErrClosed.
	f, _ := w.Publish(ctx, "w.a", nil)
	w.Close()
	if _, err := f.Wait(ctx); !errors.Is(err, pubwin.ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
	if _, err := w.Publish(ctx, "w.a", nil); !errors.Is(err, pubwin.ErrClosed) {
		t.Fatalf("publish after close: %v", err)
	}
}
