package extra_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

// pre211Single is a server before 2.11 answering a batch direct get: it
// does not know "batch", so it sends the one message at "seq" with the
// single-get header block (no Nats-Num-Pending / Nats-Last-Sequence) and
// no end-of-batch marker.
var pre211Single = [][]byte{
	[]byte("NATS/1.0\r\nNats-Stream: S\r\nNats-Subject: orders.1\r\nNats-Sequence: 1\r\nNats-Time-Stamp: 2025-01-02T03:04:05.123456789Z\r\n\r\n"),
	// The same with a header of the stored message before the server's.
	[]byte("NATS/1.0\r\nX-Id: a\r\nNats-Stream: S\r\nNats-Subject: orders.1\r\nNats-Sequence: 1\r\nNats-Time-Stamp: 2025-01-02T03:04:05.123456789Z\r\n\r\n"),
}

// fakeDirectGet returns a handler that answers every request to
// $JS.API.DIRECT.GET.S with the HMSG header (and payload "m1"), and sends
// the body of each request on bodies.
func fakeDirectGet(header []byte, bodies chan<- string) func(*fakeserver.Client) {
	return fakeserver.Responder(fakeserver.DefaultInfo().With("jetstream", true), func(op *proto.Op) *fakeserver.Reply {
		if string(op.Subject) != "$JS.API.DIRECT.GET.S" {
			return nil
		}
		bodies <- string(op.Payload)
		return &fakeserver.Reply{Header: header, Body: []byte("m1")}
	})
}

// getAll ranges over it to the end and returns how many messages and
// errors it yielded, and the first error.
func getAll(it func(func(*jsapi.StoredMsg, error) bool)) (msgs, errs int, first error) {
	for m, err := range it {
		if err != nil {
			if errs == 0 {
				first = err
			}
			errs++
			continue
		}
		if m != nil {
			msgs++
		}
	}
	return msgs, errs, first
}

// A server before 2.11 answers a batch direct get with a single message
// without Nats-Num-Pending (FEATURES.md F36). GetBatch reports
// ErrBatchUnsupported at once, rather than yielding the message as a
// batch of one or waiting for an end-of-batch marker that never comes,
// and removes its reply subscription. The same for GetLastMsgsFor and for
// GetBatch from a start time, which such a server, not knowing multi_last
// and start_time, rejects as "408 Empty Request".
func TestGetBatchPre211Fallback(t *testing.T) {
	type getCase struct {
		name     string
		header   []byte
		wantBody string
		get      func(ctx context.Context, c *conn.Conn) func(func(*jsapi.StoredMsg, error) bool)
	}
	batch := func(ctx context.Context, nc *conn.Conn) func(func(*jsapi.StoredMsg, error) bool) {
		return extra.GetBatch(ctx, newJS(t, nc), "S", 3)
	}
	cases := []getCase{
		{"batch", pre211Single[0], `{"batch":3,"seq":1}`, batch},
		{"batch with stored header", pre211Single[1], `{"batch":3,"seq":1}`, batch},
		{"batch from a time", []byte("NATS/1.0 408 Empty Request\r\n\r\n"), `{"batch":3,"start_time":"2026-01-02T03:04:05Z"}`,
			func(ctx context.Context, nc *conn.Conn) func(func(*jsapi.StoredMsg, error) bool) {
				return extra.GetBatch(ctx, newJS(t, nc), "S", 3, extra.StartTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
			}},
		{"multi last", []byte("NATS/1.0 408 Empty Request\r\n\r\n"), `{"multi_last":["orders.>"]}`,
			func(ctx context.Context, nc *conn.Conn) func(func(*jsapi.StoredMsg, error) bool) {
				return extra.GetLastMsgsFor(ctx, newJS(t, nc), "S", []string{"orders.>"})
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bodies := make(chan string, 4)
			fs := fakeserver.New(t, fakeserver.WithHandler(fakeDirectGet(c.header, bodies)))
			nc := connect(t, fs.URL())
			// No deadline: GetBatch's own idle timeout applies, so a client
			// waiting for a marker would end with a timeout, not the
			// typed error.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			msgs, errs, err := getAll(c.get(ctx, nc))
			if !errors.Is(err, extra.ErrBatchUnsupported) || errs != 1 || msgs != 0 {
				t.Fatalf("%d messages, %d errors, first %v; want only ErrBatchUnsupported", msgs, errs, err)
			}
			if errors.Is(err, conn.ErrTimeout) {
				t.Fatalf("%v: waited for the end of the batch", err)
			}
			if got := <-bodies; got != c.wantBody {
				t.Errorf("request %s, want %s", got, c.wantBody)
			}
			// The reply subscription is gone: its UNSUB precedes the PING
			// of this flush.
			if err := nc.Flush(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			fc, err := fs.Client(ctxT(t), 1)
			if err != nil {
				t.Fatal(err)
			}
			if subs, unsubs := fc.Count(proto.KindSub), fc.Count(proto.KindUnsub); subs != 1 || unsubs != 1 {
				t.Errorf("%d SUB and %d UNSUB, want one of each", subs, unsubs)
			}
			if len(bodies) != 0 {
				t.Errorf("%d more requests, want one", len(bodies))
			}
		})
	}
}
