package pubwin_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pubwin"
)

// completeError returns err as a *CompleteError, failing the test if it is
// not one.
func completeError(t *testing.T, err error) *pubwin.CompleteError {
	t.Helper()
	ce, ok := errors.AsType[*pubwin.CompleteError](err)
	if !ok {
		t.Fatalf("Complete: %v, want a *CompleteError", err)
	}
	return ce
}

// causeCount sums the counts of ce's causes that match target.
func causeCount(ce *pubwin.CompleteError, target error) int {
	n := 0
	for _, c := range ce.Causes {
		if errors.Is(c.Err, target) {
			n += c.Count
		}
	}
	return n
}

// TestCompleteReportsFailures: Complete reports the futures that failed
// since the previous Complete, counted by cause, matchable with errors.Is
// and errors.As; a Complete with nothing new to report returns nil, and a
// ctx that ends first leaves the report for the next Complete.
func TestCompleteReportsFailures(t *testing.T) {
	s := natstest.NewServer(t)
	js, nc, ctx := setup(t, s.URL(), "")
	// "silent.x": a plain subscriber takes the message and never answers.
	if _, err := nc.Subscribe("silent.>"); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	w, err := pubwin.New(js, pubwin.MaxPending(64), pubwin.StallWait(time.Minute), pubwin.AckTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	// 300 publishes: 100 expect a sequence the stream never reaches, 50
	// go where no stream listens (no retries: a 503 fails them), 150 are
	// stored.
	const n, wrongSeq, noStream = 300, 100, 50
	fs := make([]*pubwin.Future, n)
	for i := range n {
		switch {
		case i%3 == 0:
			fs[i], err = w.Publish(ctx, "w.a", []byte("x"), jsapi.ExpectLastSeq(1<<40))
		case i%6 == 1:
			fs[i], err = w.Publish(ctx, "nostream.x", []byte("x"))
		default:
			fs[i], err = w.Publish(ctx, "w.a", []byte("x"))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	err = w.Complete(ctx)
	ce := completeError(t, err)
	if ce.Failed != wrongSeq+noStream || ce.Total != n || ce.Other != 0 || len(ce.Causes) != 2 {
		t.Fatalf("Complete: %+v, want %d of %d failed in 2 causes", ce, wrongSeq+noStream, n)
	}
	if c := causeCount(ce, jsapi.ErrWrongLastSequence); c != wrongSeq {
		t.Errorf("%d wrong-last-sequence failures, want %d", c, wrongSeq)
	}
	if c := causeCount(ce, jsapi.ErrNoStreamResponse); c != noStream {
		t.Errorf("%d no-stream failures, want %d", c, noStream)
	}
	if !errors.Is(err, jsapi.ErrWrongLastSequence) || !errors.Is(err, jsapi.ErrNoStreamResponse) || errors.Is(err, pubwin.ErrAckTimeout) {
		t.Errorf("errors.Is does not see the causes of %v", err)
	}
	if apiErr, ok := errors.AsType[*jsapi.APIError](err); !ok || apiErr.ErrorCode != 10071 {
		t.Errorf("errors.As *jsapi.APIError: %v %v", apiErr, ok)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "pubwin: 150 of 300 publishes failed: ") ||
		!strings.Contains(msg, "100 × jsapi: wrong last sequence") || !strings.Contains(msg, "50 × "+jsapi.ErrNoStreamResponse.Error()) {
		t.Errorf("message %q", msg)
	}
	// The report agrees with the futures and with Stats.
	failed := 0
	for i, f := range fs {
		if !f.Done() {
			t.Fatalf("future %d not done after Complete", i)
		}
		if _, err := f.Wait(ctx); err != nil {
			failed++
		}
	}
	if st := w.Stats(); failed != ce.Failed || st.Failed != uint64(ce.Failed) || st.Acked != n-uint64(ce.Failed) {
		t.Fatalf("%d futures failed, Complete says %d, Stats %+v", failed, ce.Failed, st)
	}

	// Nothing new: nil.
	if err := w.Complete(ctx); err != nil {
		t.Fatalf("second Complete: %v", err)
	}
	// A new round is reported on its own.
	for i := range 11 {
		var opts []jsapi.PubOpt
		if i == 5 {
			opts = append(opts, jsapi.ExpectLastSeq(1<<40))
		}
		if _, err := w.Publish(ctx, "w.a", nil, opts...); err != nil {
			t.Fatal(err)
		}
	}
	err = w.Complete(ctx)
	if ce := completeError(t, err); ce.Failed != 1 || ce.Total != 11 || !errors.Is(err, jsapi.ErrWrongLastSequence) ||
		!strings.HasPrefix(err.Error(), "pubwin: 1 of 11 publishes failed: 1 × ") {
		t.Fatalf("second round: %v", err)
	}

	// A ctx that ends first returns its error and reports nothing; the
	// failure and the one still pending are reported later.
	wrong, err := w.Publish(ctx, "w.a", nil, jsapi.ExpectLastSeq(1<<40))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wrong.Wait(ctx); !errors.Is(err, jsapi.ErrWrongLastSequence) {
		t.Fatalf("got %v", err)
	}
	silent, err := w.Publish(ctx, "silent.x", nil)
	if err != nil {
		t.Fatal(err)
	}
	dead, cancel := context.WithCancel(ctx)
	cancel()
	if err := w.Complete(dead); !errors.Is(err, context.Canceled) {
		t.Fatalf("Complete with a dead ctx and a publish pending: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := silent.Wait(ctx); !errors.Is(err, pubwin.ErrClosed) {
		t.Fatalf("pending publish after Close: %v", err)
	}
	// Nothing is pending any more: a dead ctx still gets the report.
	err = w.Complete(dead)
	if ce := completeError(t, err); ce.Failed != 2 || ce.Total != 2 || causeCount(ce, pubwin.ErrClosed) != 1 ||
		causeCount(ce, jsapi.ErrWrongLastSequence) != 1 {
		t.Fatalf("after Close: %v", err)
	}
	if err := w.Complete(ctx); err != nil {
		t.Fatalf("after the report: %v", err)
	}
}

// TestCompleteCausesBounded: a CompleteError keeps the first 16 distinct
// causes, in order; an *jsapi.APIError's cause is its err_code whatever
// its description, and failures of causes beyond 16 are counted as other.
func TestCompleteCausesBounded(t *testing.T) {
	s := natstest.NewServer(t)
	js, _, ctx := setup(t, s.URL(), "")
	rc, sub := responder(t, s.URL(), "fake.>")
	w, err := pubwin.New(js, pubwin.AckTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// 20 distinct err_codes, then 5 more of the first code with other
	// descriptions, all answered in order on one connection.
	const distinct, again = 20, 5
	for i := range distinct + again {
		if _, err := w.Publish(ctx, "fake.x", nil); err != nil {
			t.Fatal(err)
		}
		m, err := sub.NextMsg(ctx)
		if err != nil {
			t.Fatal(err)
		}
		code := 20000 + i
		if i >= distinct {
			code = 20000
		}
		reply := fmt.Sprintf(`{"error":{"code":400,"err_code":%d,"description":"refused %d"}}`, code, i)
		if err := rc.Publish(m.Reply, []byte(reply)); err != nil {
			t.Fatal(err)
		}
	}
	err = w.Complete(ctx)
	ce := completeError(t, err)
	if ce.Failed != distinct+again || ce.Total != distinct+again || len(ce.Causes) != 16 || ce.Other != distinct-16 {
		t.Fatalf("Complete: %+v", ce)
	}
	for i, c := range ce.Causes {
		apiErr, ok := errors.AsType[*jsapi.APIError](c.Err)
		want := 1
		if i == 0 {
			want = 1 + again
		}
		if !ok || apiErr.ErrorCode != 20000+i || c.Count != want || apiErr.Description != fmt.Sprint("refused ", i) {
			t.Errorf("cause %d: %v ×%d, want err_code %d ×%d, the first of its kind", i, c.Err, c.Count, 20000+i, want)
		}
	}
	if !errors.Is(err, &jsapi.APIError{ErrorCode: 20015}) || errors.Is(err, &jsapi.APIError{ErrorCode: 20016}) {
		t.Error("errors.Is matches a cause not kept, or misses a kept one")
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "pubwin: 25 of 25 publishes failed: 6 × jsapi: refused 0 ") ||
		!strings.HasSuffix(msg, "; 4 × other causes") {
		t.Fatalf("message %q", msg)
	}
}

// outcome is what a waiter saw the moment Complete returned its report.
type outcome struct {
	err    error
	st     pubwin.Stats
	newest bool // the newest future was Done
}

// ended is how many futures st counts as ended.
func ended(st pubwin.Stats) uint64 { return st.Acked + st.Failed + st.TimedOut + st.Lost }

// settledOK checks that an outcome's Stats counted every one of published
// futures as ended, and that the newest was Done.
func (o outcome) settledOK(t *testing.T, who string, published uint64) {
	t.Helper()
	st := o.st
	if st.Published != published || st.Pending != 0 || ended(st) != published || !o.newest {
		t.Errorf("%s: when Complete returned, Stats %+v and the newest future done %v; want all %d ended", who, st, o.newest, published)
	}
}

// spinComplete polls Complete with a done context until the window reports
// (nothing pending), and takes Stats at once; it closes busy (if not nil)
// when it first finds the window busy. It is a waiter that needs no
// wake-up: it sees the idle signal the instant it is given.
func spinComplete(w *pubwin.Window, newest *pubwin.Future, busy chan<- struct{}) <-chan outcome {
	res := make(chan outcome, 1)
	dead, cancel := context.WithCancel(context.Background())
	cancel()
	go func() {
		for {
			err := w.Complete(dead)
			if errors.Is(err, context.Canceled) {
				if busy != nil {
					close(busy)
					busy = nil
				}
				continue
			}
			st := w.Stats()
			res <- outcome{err, st, newest.Done()}
			return
		}
	}()
	return res
}

// TestCompleteAgreesWithStats: the moment Complete returns, Stats counts
// every publish made before it as ended and the newest such future is
// Done. The test publishes 100 rounds of 1000 messages and waits for each
// round in Complete; all along, a second goroutine polls Complete with a
// done context (it reports only when nothing is pending) and checks the
// same at each moment the window is idle.
func TestCompleteAgreesWithStats(t *testing.T) {
	s := natstest.NewServer(t)
	js, _, ctx := setup(t, s.URL(), "")
	w, err := pubwin.New(js)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const rounds, per = 100, 1000
	fs := make([]*pubwin.Future, rounds*per)
	var published atomic.Int64 // fs[:published] are set
	stop := make(chan struct{})
	polled := make(chan error, 1)
	go func() {
		dead, cancel := context.WithCancel(context.Background())
		cancel()
		for {
			select {
			case <-stop:
				polled <- nil
				return
			default:
			}
			n := published.Load()
			err := w.Complete(dead)
			if errors.Is(err, context.Canceled) {
				continue // busy
			}
			st := w.Stats()
			// Publishes made after Complete may be pending in st.
			if err != nil || ended(st) < uint64(n) || ended(st)+uint64(st.Pending) != st.Published || (n > 0 && !fs[n-1].Done()) {
				polled <- fmt.Errorf("polling: Complete returned %v after %d publishes; then Stats %+v, future %d done %v",
					err, n, st, n-1, n > 0 && fs[n-1].Done())
				return
			}
		}
	}()
	data := []byte("x")
	for r := range rounds {
		for i := r * per; i < (r+1)*per; i++ {
			if fs[i], err = w.Publish(ctx, "w.a", data); err != nil {
				t.Fatal(err)
			}
			published.Store(int64(i + 1))
		}
		err := w.Complete(ctx)
		st := w.Stats()
		o := outcome{err, st, fs[(r+1)*per-1].Done()}
		if o.err != nil {
			t.Fatalf("round %d: %v", r, o.err)
		}
		o.settledOK(t, fmt.Sprint("round ", r), uint64((r+1)*per))
		if t.Failed() {
			break
		}
	}
	close(stop)
	if err := <-polled; err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Acked != rounds*per {
		t.Fatalf("%d acked of %d", st.Acked, rounds*per)
	}
}

// endAll runs endAllOnce in 10 subtests: each catches a waiter that
// wakes before the futures are counted with a fair chance, so together
// they catch it almost surely.
func endAll(t *testing.T, ackTimeout time.Duration, end func(*pubwin.Window, *conn.Conn), cause error, count func(pubwin.Stats) uint64) {
	for i := range 10 {
		t.Run(fmt.Sprint(i), func(t *testing.T) { endAllOnce(t, ackTimeout, end, cause, count) })
	}
}

// endAllOnce publishes n messages to a stream that never acks, starts two
// waiters (one blocked in Complete, one polling it), calls end (if not nil)
// to fail every future at once, and checks that both waiters found every
// future ended and counted (by count) the moment their Complete returned,
// and that exactly one of them reported the n failures, each matching
// cause.
func endAllOnce(t *testing.T, ackTimeout time.Duration, end func(*pubwin.Window, *conn.Conn), cause error, count func(pubwin.Stats) uint64) {
	s := natstest.NewServer(t)
	js, nc, ctx := setup(t, s.URL(), `,"no_ack":true`)
	const n = 1000
	w, err := pubwin.New(js, pubwin.MaxPending(n), pubwin.AckTimeout(ackTimeout))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var last *pubwin.Future
	for range n {
		if last, err = w.Publish(ctx, "w.a", nil); err != nil {
			t.Fatal(err)
		}
	}
	blocked := make(chan outcome, 1)
	go func() {
		err := w.Complete(ctx)
		st := w.Stats()
		blocked <- outcome{err, st, last.Done()}
	}()
	var busy chan struct{}
	if end != nil {
		busy = make(chan struct{})
	}
	polled := spinComplete(w, last, busy)
	if end != nil {
		<-busy
		end(w, nc)
	}
	reports := 0
	for _, c := range []struct {
		who string
		ch  <-chan outcome
	}{{"waiting Complete", blocked}, {"polling Complete", polled}} {
		o := <-c.ch
		o.settledOK(t, c.who, n)
		if got := count(o.st); got != n {
			t.Errorf("%s: %d counted, want %d: %+v", c.who, got, n, o.st)
		}
		if o.err == nil {
			continue
		}
		reports++
		if ce := completeError(t, o.err); ce.Failed != n || ce.Total != n || causeCount(ce, cause) != n {
			t.Errorf("%s: %v", c.who, o.err)
		}
	}
	if reports != 1 {
		t.Errorf("%d waiters reported the failures, want 1", reports)
	}
	if _, err := last.Wait(ctx); !errors.Is(err, cause) {
		t.Fatalf("newest future: %v, want %v", err, cause)
	}
}

// TestCompleteAgreesWithStatsAfterExpiry: futures that time out are
// counted, and Done, by the time Complete returns.
func TestCompleteAgreesWithStatsAfterExpiry(t *testing.T) {
	endAll(t, 50*time.Millisecond, nil, pubwin.ErrAckTimeout, func(st pubwin.Stats) uint64 { return st.TimedOut })
}

// TestCompleteAgreesWithStatsAfterDisconnect: a disconnect fails every
// pending future with ErrAckLost; each is counted, and Done, by the time
// Complete returns.
func TestCompleteAgreesWithStatsAfterDisconnect(t *testing.T) {
	endAll(t, time.Hour, func(_ *pubwin.Window, nc *conn.Conn) { nc.ForceReconnect() },
		conn.ErrDisconnected, func(st pubwin.Stats) uint64 { return st.Lost })
}

// TestCompleteAgreesWithStatsAfterClose: Close fails every pending future
// with ErrClosed; each is counted, and Done, by the time Complete returns.
func TestCompleteAgreesWithStatsAfterClose(t *testing.T) {
	endAll(t, time.Hour, func(w *pubwin.Window, _ *conn.Conn) {
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	}, pubwin.ErrClosed, func(st pubwin.Stats) uint64 { return st.Lost })
}
