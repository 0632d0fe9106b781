package extra_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"

	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/jsapi"
)

// TestRetryStartWaitsForTheStream: the first message of a batch that finds
// no stream is sent again (RetryStart), so a batch started while its
// stream is not there yet (a leader election, a stream being created)
// begins once it is, and stores each message once. The test creates the
// stream only after the publisher's connection received the first 503.
func TestRetryStartWaitsForTheStream(t *testing.T) {
	for _, kind := range []string{"fast", "atomic"} {
		t.Run(kind, func(t *testing.T) {
			_, nc, js := startJS(t)
			ctx := ctxT(t)
			in := nc.Stats().InMsgs
			type result struct {
				size int
				seq  uint64
				err  error
			}
			done := make(chan result, 1)
			go func() {
				// Generous retries: the test's stream creation must land
				// between two of them.
				var r result
				switch kind {
				case "fast":
					p, err := extra.NewFastPublisher(js, extra.FastRetryStart(8, 50*time.Millisecond))
					if err != nil {
						r.err = err
						break
					}
					if _, r.err = p.Add(ctx, "late.a", []byte("1")); r.err == nil {
						var ack *jsapi.PubAck
						if ack, r.err = p.Commit(ctx, "late.a", []byte("2")); r.err == nil {
							r.size, r.seq = ack.BatchSize, ack.Sequence
						}
					}
				case "atomic":
					p, err := extra.NewBatchPublisher(js, extra.RetryStart(8, 50*time.Millisecond))
					if err != nil {
						r.err = err
						break
					}
					if r.err = p.Add(ctx, "late.a", []byte("1")); r.err == nil {
						var ba *extra.BatchAck
						if ba, r.err = p.Commit(ctx, "late.a", []byte("2")); r.err == nil {
							r.size, r.seq = ba.BatchSize, ba.Sequence
						}
					}
				}
				done <- r
			}()
			eventually(t, "the first 503", func() bool { return nc.Stats().InMsgs > in })
			cfg := jsapi.StreamConfig{Name: "LATE", Subjects: []string{"late.>"}}
			if kind == "fast" {
				cfg.AllowBatchPublish = true
			} else {
				cfg.AllowAtomicPublish = true
			}
			st := stream(t, js, cfg)
			r := <-done
			if r.err != nil {
				t.Fatalf("batch started before its stream existed: %v", r.err)
			}
			if r.size != 2 || r.seq != 2 {
				t.Fatalf("ack of a batch of %d ending at sequence %d, want 2 and 2", r.size, r.seq)
			}
			if n := msgCount(t, st); n != 2 {
				t.Fatalf("stream holds %d messages, want 2", n)
			}
		})
	}
}

// TestRetryStartGivesUp: without a stream the first message fails with
// jsapi.ErrNoStreamResponse after its retries (none with RetryStart(0, 0)),
// ctx ends the waits between them, and bad values are rejected.
func TestRetryStartGivesUp(t *testing.T) {
	_, nc, js := startJS(t)
	ctx := ctxT(t)
	for _, tc := range []struct {
		attempts int
		wait     time.Duration
	}{{0, 0}, {2, time.Millisecond}} {
		in := nc.Stats().InMsgs
		fp, err := extra.NewFastPublisher(js, extra.FastRetryStart(tc.attempts, tc.wait))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fp.Add(ctx, "nowhere.a", nil); !errors.Is(err, jsapi.ErrNoStreamResponse) {
			t.Fatalf("fast, %d attempts: %v", tc.attempts, err)
		}
		bp, err := extra.NewBatchPublisher(js, extra.RetryStart(tc.attempts, tc.wait))
		if err != nil {
			t.Fatal(err)
		}
		if err := bp.Add(ctx, "nowhere.a", nil); !errors.Is(err, jsapi.ErrNoStreamResponse) {
			t.Fatalf("atomic, %d attempts: %v", tc.attempts, err)
		}
		// One 503 per attempt, for each publisher.
		if got, want := nc.Stats().InMsgs-in, 2*uint64(tc.attempts+1); got != want {
			t.Fatalf("%d replies, want %d (%d retries each)", got, want, tc.attempts)
		}
	}

	// ctx ends the pause between attempts; the 503 stands.
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	fp, _ := extra.NewFastPublisher(js, extra.FastRetryStart(5, time.Hour))
	if _, err := fp.Add(cctx, "nowhere.a", nil); !errors.Is(err, jsapi.ErrNoStreamResponse) {
		t.Fatalf("fast, ctx ending during the pause: %v", err)
	}
	cctx2, cancel2 := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel2()
	bp, _ := extra.NewBatchPublisher(js, extra.RetryStart(5, time.Hour))
	if err := bp.Add(cctx2, "nowhere.a", nil); !errors.Is(err, jsapi.ErrNoStreamResponse) {
		t.Fatalf("atomic, ctx ending during the pause: %v", err)
	}

	for _, bad := range []struct {
		attempts int
		wait     time.Duration
	}{{-1, time.Second}, {1, 0}} {
		if _, err := extra.NewFastPublisher(js, extra.FastRetryStart(bad.attempts, bad.wait)); !errors.Is(err, conn.ErrInvalidOption) {
			t.Fatalf("fast %+v: %v", bad, err)
		}
		if _, err := extra.NewBatchPublisher(js, extra.RetryStart(bad.attempts, bad.wait)); !errors.Is(err, conn.ErrInvalidOption) {
			t.Fatalf("atomic %+v: %v", bad, err)
		}
	}
}
