package pubwin_test

import (
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pubwin"
)

// TestOptionValidation: every invalid option fails New with
// conn.ErrInvalidOption before anything is
// sent, even after a valid one; valid ones make a working window, a later
// option replacing an earlier one.
func TestOptionValidation(t *testing.T) {
	s := natstest.NewServer(t)
	js, nc, ctx := setup(t, s.URL(), "")
	out := nc.Stats().OutMsgs
	for name, o := range map[string]pubwin.Option{
		"MaxPending 0":            pubwin.MaxPending(0),
		"MaxPending -1":           pubwin.MaxPending(-1),
		"MaxPending 1<<20+1":      pubwin.MaxPending(1<<20 + 1),
		"StallWait -1ns":          pubwin.StallWait(-1),
		"AckTimeout 0":            pubwin.AckTimeout(0),
		"AckTimeout -1s":          pubwin.AckTimeout(-time.Second),
		"retry -1 attempts":       pubwin.RetryOnNoResponders(-1, time.Millisecond),
		"retry 33 attempts":       pubwin.RetryOnNoResponders(33, time.Millisecond),
		"retry no wait":           pubwin.RetryOnNoResponders(1, 0),
		"retry negative wait":     pubwin.RetryOnNoResponders(1, -time.Millisecond),
		"retry wait overflows":    pubwin.RetryOnNoResponders(32, time.Hour),
		"no retry, negative wait": pubwin.RetryOnNoResponders(0, -time.Millisecond),
	} {
		w, err := pubwin.New(js, pubwin.MaxPending(10), o)
		if !errors.Is(err, conn.ErrInvalidOption) || w != nil {
			t.Errorf("%s: %v, want ErrInvalidOption", name, err)
		}
	}
	for name, opts := range map[string][]pubwin.Option{
		"none":                   nil,
		"retry as jsapi":         {pubwin.RetryOnNoResponders(2, 250*time.Millisecond)},
		"retry 32 from 1ms":      {pubwin.RetryOnNoResponders(32, time.Millisecond)},
		"no retry, a wait":       {pubwin.RetryOnNoResponders(0, time.Second)},
		"no stall wait":          {pubwin.StallWait(0)},
		"largest window":         {pubwin.MaxPending(1 << 20)},
		"all":                    {pubwin.MaxPending(3), pubwin.StallWait(time.Second), pubwin.AckTimeout(time.Minute), pubwin.RetryOnNoResponders(1, time.Second)},
		"later replaces earlier": {pubwin.MaxPending(1), pubwin.MaxPending(7)},
	} {
		w, err := pubwin.New(js, opts...)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		f, err := w.Publish(ctx, "w.a", nil)
		if err == nil {
			_, err = f.Wait(ctx)
		}
		if err != nil {
			t.Errorf("%s: publish: %v", name, err)
		}
		w.Close()
	}
	if n := nc.Stats().OutMsgs - out; n != 8 {
		t.Fatalf("%d messages sent, want the 8 valid windows' publishes", n)
	}
	w, err := pubwin.New(js, pubwin.MaxPending(1), pubwin.MaxPending(7))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if st := w.Stats(); st.MaxPending != 7 {
		t.Fatalf("MaxPending(1), MaxPending(7): MaxPending %d", st.MaxPending)
	}
	w2, err := pubwin.New(js)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if st := w2.Stats(); st.MaxPending != pubwin.DefaultMaxPending {
		t.Fatalf("default MaxPending %d", st.MaxPending)
	}
}

// TestStallWaitZero: with StallWait(0) a Publish into a full window fails
// at once with ErrTooManyStalled, counted as a stall that failed.
func TestStallWaitZero(t *testing.T) {
	s := natstest.NewServer(t)
	js, _, ctx := setup(t, s.URL(), `,"no_ack":true`)
	w, err := pubwin.New(js, pubwin.MaxPending(2), pubwin.StallWait(0), pubwin.AckTimeout(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for range 2 {
		if _, err := w.Publish(ctx, "w.a", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Publish(ctx, "w.a", nil); !errors.Is(err, pubwin.ErrTooManyStalled) {
		t.Fatalf("publish into a full window: %v, want ErrTooManyStalled", err)
	}
	if st := w.Stats(); st.Stalls != 1 || st.StallFailures != 1 || st.Published != 2 {
		t.Fatalf("%+v", st)
	}
}
