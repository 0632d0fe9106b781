package conn_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/connx"
)

// With readInline, NextBatch reads the socket itself when its queue is
// empty and the reader goroutine has parked: every message still arrives
// once and in order, across many short batches. Without it, NextBatch
// never reads inline.
func TestNextBatchInlineReads(t *testing.T) {
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprint("inline=", inline), func(t *testing.T) {
			s := coreServer(t)
			nc := connect(t, s.URL())
			pub := connect(t, s.URL())
			sub, err := connx.SubscribeBatches(nc, "nb.inline", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := nc.Flush(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			// Bursts separated by the consumer's wait: each burst is a
			// batch the consumer may read itself.
			const bursts, per = 300, 5
			next := 0
			var batch []*conn.Msg
			for b := range bursts {
				for i := range per {
					if err := pub.Publish("nb.inline", fmt.Appendf(nil, "%d", b*per+i)); err != nil {
						t.Fatal(err)
					}
				}
				if err := pub.Flush(ctxT(t)); err != nil {
					t.Fatal(err)
				}
				for next < (b+1)*per {
					if batch, err = connx.NextBatch(sub, ctxT(t), batch, inline); err != nil {
						t.Fatalf("after %d messages: %v", next, err)
					}
					for _, m := range batch {
						if string(m.Data) != fmt.Sprint(next) {
							t.Fatalf("message %d is %q", next, m.Data)
						}
						next++
					}
				}
				if inline && nc.Stats().InlineBatches > 0 && b >= 20 {
					break
				}
			}
			got := nc.Stats().InlineBatches
			if inline && got == 0 {
				t.Fatalf("NextBatch never read the socket itself in %d bursts", bursts)
			}
			if !inline && got != 0 {
				t.Fatalf("NextBatch read the socket %d times without readInline", got)
			}
			// An inline NextBatch is interrupted by its ctx and by the end
			// of the subscription, as the reader goroutine's is.
			ctx, cancel := context.WithCancelCause(context.Background())
			cause := errors.New("stop")
			done := make(chan error, 1)
			go func() {
				_, err := connx.NextBatch(sub, ctx, nil, inline)
				done <- err
			}()
			cancel(cause)
			if err := <-done; !errors.Is(err, cause) {
				t.Fatalf("NextBatch after its ctx was cancelled: %v", err)
			}
			go func() {
				_, err := connx.NextBatch(sub, context.Background(), nil, inline)
				done <- err
			}()
			if err := sub.Unsubscribe(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; !errors.Is(err, conn.ErrBadSubscription) {
				t.Fatalf("NextBatch after Unsubscribe: %v", err)
			}
		})
	}
}

// PublishRequestNow delivers like PublishRequest, reply subject included,
// and refuses what PublishRequest refuses before anything is written.
func TestPublishRequestNow(t *testing.T) {
	s := coreServer(t)
	nc := connect(t, s.URL())
	sub, err := nc.Subscribe("now.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if err := connx.PublishNow(nc, fmt.Sprintf("now.%d", i), "reply.here", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 50 {
		m, err := sub.NextMsg(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		if m.Subject != fmt.Sprintf("now.%d", i) || m.Reply != "reply.here" || string(m.Data) != "x" {
			t.Fatalf("message %d: %q reply %q data %q", i, m.Subject, m.Reply, m.Data)
		}
	}
	before := nc.Stats().OutMsgs
	if err := connx.PublishNow(nc, "bad subject", "r", nil); !errors.Is(err, conn.ErrBadSubject) {
		t.Fatalf("bad subject: %v", err)
	}
	if err := connx.PublishNow(nc, "ok", "bad reply", nil); !errors.Is(err, conn.ErrBadSubject) {
		t.Fatalf("bad reply: %v", err)
	}
	if after := nc.Stats().OutMsgs; after != before {
		t.Fatalf("refused publishes counted: %d → %d", before, after)
	}
	nc.Close()
	if err := connx.PublishNow(nc, "ok", "r", nil); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
