package conn_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/fakeserver"
	"github.com/natsio/natsio/proto"
)

// borrowPayload is message i's body: long enough that a burst of them
// takes several socket reads, and different in every byte position.
func borrowPayload(i int) []byte {
	return bytes.Repeat(fmt.Appendf(nil, "<%d>", i), 40)
}

// With lending (SubscribeBatches with lent), messages are lent, and
// each batch stays intact until the next NextBatch call while more
// messages and responses to requests on the same connection arrive, which
// would land on the lent messages if their memory were reused too soon.
func TestNextBatchBorrowed(t *testing.T) {
	s := coreServer(t)
	nc := connect(t, s.URL())
	pub := connect(t, s.URL())
	if _, err := pub.SubscribeFunc("borrow.echo", func(m *conn.Msg) {
		_ = m.Respond(bytes.Repeat([]byte("X"), 3000))
	}); err != nil {
		t.Fatal(err)
	}
	sub, err := nc.SubscribeBatches("borrow.data", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	const bursts, per = 200, 40
	next := 0
	var batch []*conn.Msg
	for b := range bursts {
		for i := range per {
			if err := pub.Publish("borrow.data", borrowPayload(b*per+i)); err != nil {
				t.Fatal(err)
			}
		}
		for next < (b+1)*per {
			if batch, err = sub.NextBatch(ctxT(t), batch); err != nil {
				t.Fatalf("after %d messages: %v", next, err)
			}
			first := next
			for _, m := range batch {
				if !bytes.Equal(m.Data, borrowPayload(next)) || m.Subject != "borrow.data" {
					t.Fatalf("message %d: %q on %q", next, m.Data, m.Subject)
				}
				next++
			}
			// Responses arrive on the same connection while the batch is held.
			if b%4 == 0 {
				if _, err := nc.Request(ctxT(t), "borrow.echo", nil); err != nil {
					t.Fatal(err)
				}
			}
			for i, m := range batch {
				if !bytes.Equal(m.Data, borrowPayload(first+i)) || m.Subject != "borrow.data" {
					t.Fatalf("message %d changed while its batch was held: %.40q on %q", first+i, m.Data, m.Subject)
				}
			}
		}
		st := nc.Stats()
		if b >= 40 && st.BorrowedMsgs > 0 && conn.LentBuffers(nc) > 0 {
			break
		}
	}
	st := nc.Stats()
	if st.BorrowedMsgs == 0 || conn.LentBuffers(nc) == 0 {
		t.Fatalf("%d messages lent, %d buffers made, in %d messages",
			st.BorrowedMsgs, conn.LentBuffers(nc), next)
	}
	if st.BorrowedMsgs > uint64(next) {
		t.Fatalf("%d messages lent of %d received", st.BorrowedMsgs, next)
	}
}

// Without lending nothing is lent.
func TestNextBatchNotBorrowed(t *testing.T) {
	for _, tc := range []struct{ borrow bool }{{false}} {
		t.Run(fmt.Sprintf("borrow=%v", tc.borrow), func(t *testing.T) {
			s := coreServer(t)
			nc := connect(t, s.URL())
			sub, err := nc.SubscribeBatches("nb.copy", tc.borrow)
			if err != nil {
				t.Fatal(err)
			}
			if err := nc.Flush(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			var batch []*conn.Msg
			for i := range 300 {
				if err := nc.Publish("nb.copy", borrowPayload(i)); err != nil {
					t.Fatal(err)
				}
				if batch, err = sub.NextBatch(ctxT(t), batch); err != nil || len(batch) != 1 || !bytes.Equal(batch[0].Data, borrowPayload(i)) {
					t.Fatalf("message %d: %v %d", i, err, len(batch))
				}
			}
			if st := nc.Stats(); st.BorrowedMsgs != 0 {
				t.Fatalf("%d messages lent", st.BorrowedMsgs)
			}
		})
	}
}

// A read that ends in the middle of a message delivers what is complete
// at once: the rest completes the message in a later batch. Every message
// arrives whole, lent or copied, whichever read brought its last bytes.
func TestNextBatchCutMessage(t *testing.T) {
	for _, tc := range []struct {
		borrow bool
		before int // whole messages sent ahead of the cut one
	}{{true, 1}, {true, 50}, {false, 8300}} {
		t.Run(fmt.Sprintf("borrow=%v,before=%d", tc.borrow, tc.before), func(t *testing.T) {
			testCutMessage(t, tc.borrow, tc.before)
		})
	}
}

func testCutMessage(t *testing.T, borrow bool, before int) {
	clients := make(chan *fakeserver.Client, 4)
	fs := startFake(t, withScript(func(c *fakeserver.Client) {
		if _, err := c.Handshake(c.Context(), nil); err != nil {
			return
		}
		clients <- c
		c.ServeBasic()
	}))
	// No keepalive: under load a PONG stuck behind 8,300 messages would
	// make the connection stale, and the test counts on one connection.
	nc := fs.connect(t, conn.PingInterval(time.Hour))
	cl := <-clients
	defer func() {
		if fs.Accepted() != 1 {
			t.Errorf("the client reconnected: %d connections", fs.Accepted())
		}
	}()
	sub, err := nc.SubscribeBatches("cut", borrow)
	if err != nil {
		t.Fatal(err)
	}
	op, err := cl.Expect(ctxT(t), proto.KindSub)
	if err != nil {
		t.Fatal(err)
	}
	sid := op.SID
	var batch []*conn.Msg
	for round := range 20 {
		// Whole messages and the head of another, for one write.
		var head []byte
		for i := range before {
			a := fmt.Sprintf("m-%d-%d", round, i)
			head = fmt.Appendf(head, "MSG cut %d %d\r\n%s\r\n", sid, len(a), a)
		}
		b := fmt.Sprintf("cut-%d", round)
		head = fmt.Appendf(head, "MSG cut %d %d\r\n%s", sid, len(b), b[:3])
		whole := fmt.Sprintf("whole-%d", round)
		if err := cl.SendMsg("cut", sid, "", []byte(whole)); err != nil {
			t.Fatal(err)
		}
		if batch, err = sub.NextBatch(ctxT(t), batch); err != nil || len(batch) != 1 || string(batch[0].Data) != whole {
			t.Fatalf("round %d: %v %d", round, err, len(batch))
		}
		in := nc.Stats().InMsgs
		if err := cl.Send(head); err != nil {
			t.Fatal(err)
		}
		// The rest of the cut message follows once the client has read
		// every whole one (its inbound count, published before each
		// socket read, says so).
		rest := make(chan error, 1)
		go func() {
			for nc.Stats().InMsgs < in+uint64(before) {
				runtime.Gosched()
			}
			rest <- cl.Send([]byte(b[3:] + "\r\n"))
		}()
		for got := 0; got <= before; {
			if batch, err = sub.NextBatch(ctxT(t), batch); err != nil {
				t.Fatalf("round %d, after %d messages: %v", round, got, err)
			}
			for _, m := range batch {
				want := fmt.Sprintf("m-%d-%d", round, got)
				if got == before {
					want = b
				}
				if string(m.Data) != want {
					t.Fatalf("round %d: %q, want %q", round, m.Data, want)
				}
				got++
			}
		}
		if err := <-rest; err != nil {
			t.Fatal(err)
		}
	}
}

// A ctx passed to many NextBatch calls still ends the one blocked waiting
// when it is cancelled, with its cause, and a Background ctx in between
// changes nothing.
func TestNextBatchSameCtxInterrupted(t *testing.T) {
	s := coreServer(t)
	nc := connect(t, s.URL())
	sub, err := nc.SubscribeBatches("nb.ctx", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(ctxT(t))
	var batch []*conn.Msg
	for i := range 100 {
		if err := nc.Publish("nb.ctx", []byte("x")); err != nil {
			t.Fatal(err)
		}
		use := ctx
		if i%10 == 5 {
			use = context.Background()
		}
		if batch, err = sub.NextBatch(use, batch); err != nil {
			t.Fatal(err)
		}
	}
	cause := errors.New("stop")
	done := make(chan error, 1)
	go func() {
		_, err := sub.NextBatch(ctx, nil)
		done <- err
	}()
	cancel(cause)
	if err := <-done; !errors.Is(err, cause) {
		t.Fatalf("NextBatch after its ctx was cancelled: %v", err)
	}
}

func TestNextBatch(t *testing.T) {
	s := coreServer(t)
	nc := connect(t, s.URL())
	ctx := ctxT(t)
	sub, err := nc.Subscribe("nb")
	if err != nil {
		t.Fatal(err)
	}

	// A done context ends it: nothing queued yet.
	done, cancel := context.WithCancel(ctx)
	cancel()
	if b, err := sub.NextBatch(done, nil); len(b) != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("done ctx, empty queue: %d messages, %v", len(b), err)
	}

	for i := range 100 {
		nc.Publish("nb", fmt.Appendf(nil, "%d", i))
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// A done context ends it with messages queued too.
	if b, err := sub.NextBatch(done, nil); len(b) != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("done ctx, messages queued: %d messages, %v", len(b), err)
	}
	var batch []*conn.Msg
	got := 0
	for got < 100 {
		batch, err = sub.NextBatch(ctx, batch)
		if err != nil {
			t.Fatalf("after %d: %v", got, err)
		}
		for _, m := range batch {
			if want := fmt.Sprint(got); string(m.Data) != want {
				t.Fatalf("message %q, want %q", m.Data, want)
			}
			got++
		}
	}
	if n, _ := sub.Pending(); n != 0 {
		t.Fatalf("%d still queued", n)
	}

	// Not while an iterator consumes the subscription.
	it := make(chan struct{})
	go func() {
		defer close(it)
		for range sub.Messages(ctx) {
			return
		}
	}()
	eventually(t, "the iterator to start", func() bool {
		_, err := sub.NextBatch(done, nil)
		return errors.Is(err, conn.ErrSubscriptionActive)
	})
	nc.Publish("nb", []byte("x"))
	<-it

	// The end of the subscription, once the queue is empty.
	nc.Publish("nb", []byte("last"))
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	if b, err := sub.NextBatch(ctx, nil); err != nil || len(b) != 1 || string(b[0].Data) != "last" {
		t.Fatalf("after unsubscribe: %d messages, %v", len(b), err)
	}
	if _, err := sub.NextBatch(ctx, nil); !errors.Is(err, conn.ErrBadSubscription) {
		t.Fatalf("ended subscription: %v, want ErrBadSubscription", err)
	}
	var noCtx context.Context
	if _, err := sub.NextBatch(noCtx, nil); !errors.Is(err, conn.ErrNilContext) {
		t.Fatalf("nil context: %v", err)
	}
}
