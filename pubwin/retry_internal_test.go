package pubwin

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/testutil"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
)

// TestRetryServer429Frame feeds the window the stream's 429 reply exactly
// as the server sends it (a status line and a JSON error) for a publish to
// a no_ack stream, which never answers itself: the first arms the retry,
// the second, with the attempts used up, fails the future with
// ErrTooManyRequests.
func TestRetryServer429Frame(t *testing.T) {
	s := natstest.NewServer(t)
	ctx := t.Context()
	nc := testutil.Connect(t, s.URL())
	js, err := jsapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "Q", Subjects: []string{"q.>"}, Storage: jsapi.StorageMemory, NoAck: true}); err != nil {
		t.Fatal(err)
	}
	w, err := New(js, AckTimeout(2*time.Hour), RetryOnNoResponders(1, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f, err := w.Publish(ctx, "q.a", []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	reply := &conn.Msg{
		Subject: w.prefix + strconv.FormatUint(f.token, 10),
		Header:  proto.HeaderFromBlock([]byte("NATS/1.0 429 Too Many Requests\r\n\r\n")),
		Data:    []byte(`{"stream":"Q","error":{"code":429,"err_code":10167,"description":"too many requests"}}`),
	}
	w.onAck(reply)
	if f.Done() || RetryWaiting(w) != 1 || w.Pending() != 1 {
		t.Fatalf("after the first 429: done %v, %d waiting, %d pending", f.Done(), RetryWaiting(w), w.Pending())
	}
	w.onAck(reply)
	if _, err := f.Wait(ctx); !errors.Is(err, jsapi.ErrTooManyRequests) {
		t.Fatalf("got %v, want ErrTooManyRequests", err)
	}
	if RetryWaiting(w) != 0 || w.Pending() != 0 || len(w.slots) != 0 {
		t.Fatalf("%d waiting, %d pending, %d slots held", RetryWaiting(w), w.Pending(), len(w.slots))
	}
	f.mu.Lock()
	fr := f.fr
	f.mu.Unlock()
	if fr != nil {
		t.Fatal("the ended future still holds its message")
	}
}

// TestRetryClassification: exactly the 503 no-responders status and the
// 429 error are retried, as by jsapi.Publish.
func TestRetryClassification(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{jsapi.ErrNoStreamResponse, true},
		{&jsapi.APIError{Code: 429, ErrorCode: 10167}, true},
		{&jsapi.APIError{Code: 400, ErrorCode: 10071}, false},
		{jsapi.ErrBadResponse, false},
		{ErrAckTimeout, false},
	} {
		if got := retryable(c.err); got != c.want {
			t.Errorf("retryable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
