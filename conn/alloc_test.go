//go:build !race

package conn_test

import (
	"context"
	"math"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
)

// The server runs in a child process: allocation counts are the client's.

func TestPublishAllocatesNothing(t *testing.T) {
	s := natstest.NewProcess(t, false)
	nc := connect(t, s.URL())
	data := make([]byte, 1024)
	var h proto.Header
	h.Add("Nats-Msg-Id", "abc")
	// Warm up the outbound buffers.
	for range 1000 {
		nc.Publish("alloc.pub", data)
		nc.PublishMsg("alloc.pub", "reply.x", &h, data)
	}
	nc.Flush(context.Background())
	if n := testing.AllocsPerRun(1000, func() { nc.Publish("alloc.pub", data[:16]) }); n != 0 {
		t.Errorf("Publish 16 B: %v allocs", n)
	}
	if n := testing.AllocsPerRun(1000, func() { nc.Publish("alloc.pub", data) }); n != 0 {
		t.Errorf("Publish 1 KiB: %v allocs", n)
	}
	if n := testing.AllocsPerRun(1000, func() { nc.PublishMsg("alloc.pub", "reply.x", &h, data) }); n != 0 {
		t.Errorf("PublishMsg with header: %v allocs", n)
	}
	// Lazily: the first call creates the connection's timer (once); then
	// calls queue, arm or re-arm it, or wake the flusher.
	nc.PublishUnobserved("alloc.pub", "", nil, data, conn.WriteLazy)
	nc.Flush(context.Background())
	if n := testing.AllocsPerRun(1000, func() { nc.PublishUnobserved("alloc.pub", "", nil, data[:16], conn.WriteLazy) }); n != 0 {
		t.Errorf("PublishLazy 16 B: %v allocs", n)
	}
	if n := testing.AllocsPerRun(1000, func() {
		nc.PublishUnobserved("alloc.pub", "", nil, data[:16], conn.WriteLazy)
		nc.Publish("alloc.pub", data[:16]) // takes the lazy bytes: the timer is stopped
	}); n != 0 {
		t.Errorf("PublishLazy then Publish: %v allocs", n)
	}
}

// A delivered message's header is read in place, and published again
// unmodified (forwarded) it is written as received: neither allocates.
func TestReceivedHeaderAllocatesNothing(t *testing.T) {
	s := natstest.NewProcess(t, false)
	nc := connect(t, s.URL())
	sub, err := nc.Subscribe("alloc.hdr")
	if err != nil {
		t.Fatal(err)
	}
	nc.Flush(context.Background())
	var h proto.Header
	h.Add("Nats-Msg-Id", "abc")
	h.Add("X-Multi", "1")
	h.Add("X-Multi", "2")
	if err := nc.PublishMsg("alloc.hdr", "", &h, []byte("x")); err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	read := func() {
		if v, ok := m.Header.Lookup("Nats-Msg-Id"); !ok || v != "abc" || m.Header.Get("X-Multi") != "1" {
			t.Fatal("lookup")
		}
		n := 0
		for k, v := range m.Header.All() {
			n += len(k) + len(v)
		}
		for v := range m.Header.Values("X-Multi") {
			n += len(v)
		}
		if code, _ := m.Header.Status(); code != 0 || n == 0 || m.Header.Len() != 3 || m.Status() != 0 {
			t.Fatal("read")
		}
	}
	if n := testing.AllocsPerRun(1000, read); n != 0 {
		t.Errorf("reading a received header: %v allocs", n)
	}
	for range 1000 {
		nc.PublishMsg("alloc.fwd", "", &m.Header, m.Data)
	}
	nc.Flush(context.Background())
	if n := testing.AllocsPerRun(1000, func() { nc.PublishMsg("alloc.fwd", "", &m.Header, m.Data) }); n != 0 {
		t.Errorf("forwarding a received header: %v allocs", n)
	}
}

func TestDeliveryAllocsAmortised(t *testing.T) {
	s := natstest.NewProcess(t, false)
	pub := connect(t, s.URL())
	sc := connect(t, s.URL(), conn.PendingLimits(1<<20, 1<<30))
	sub, err := sc.Subscribe("alloc.sub")
	if err != nil {
		t.Fatal(err)
	}
	sc.Flush(context.Background())
	const n = 20000
	data := make([]byte, 16)
	ctx := context.Background()
	run := func() {
		for range n {
			pub.Publish("alloc.sub", data)
		}
		got := 0
		for _, err := range sub.Messages(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			if got++; got == n {
				break
			}
		}
	}
	run() // warm up
	per := testing.AllocsPerRun(3, run) / n
	if per > 0.05 {
		t.Fatalf("%.3f allocs per delivered message, want ≤ 0.05", per)
	}
	t.Logf("%.4f allocs per delivered message (publish and receive, both connections)", per)
}

func TestRequestAllocs(t *testing.T) {
	s := natstest.NewProcess(t, false)
	rc := connect(t, s.URL())
	nc := connect(t, s.URL())
	rc.SubscribeFunc("alloc.req", func(m *conn.Msg) { m.Respond(m.Data) })
	rc.Flush(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dctx, dcancel := context.WithDeadline(ctx, deadlineFar())
	defer dcancel()
	data := make([]byte, 16)
	for range 100 {
		if _, err := nc.Request(dctx, "alloc.req", data); err != nil {
			t.Fatal(err)
		}
	}
	n := testing.AllocsPerRun(2000, func() {
		if _, err := nc.Request(dctx, "alloc.req", data); err != nil {
			t.Fatal(err)
		}
	})
	if n > 2 {
		t.Fatalf("Request: %v allocs (requester and responder together), want ≤ 2", n)
	}
	t.Logf("Request: %v allocs (requester and responder together)", n)
}

// A request whose context has no deadline gets the default timeout from a
// pooled timer, not a new context.
func TestRequestDefaultTimeoutAllocs(t *testing.T) {
	s := natstest.NewProcess(t, false)
	rc := connect(t, s.URL())
	nc := connect(t, s.URL())
	rc.SubscribeFunc("alloc.req2", func(m *conn.Msg) { m.Respond(m.Data) })
	rc.Flush(context.Background())
	data := make([]byte, 16)
	ctx := context.Background()
	for range 100 {
		if _, err := nc.Request(ctx, "alloc.req2", data); err != nil {
			t.Fatal(err)
		}
	}
	n := testing.AllocsPerRun(2000, func() {
		if _, err := nc.Request(ctx, "alloc.req2", data); err != nil {
			t.Fatal(err)
		}
	})
	if n > 2 {
		t.Fatalf("Request without deadline: %v allocs, want ≤ 2", n)
	}
	t.Logf("Request without deadline: %v allocs (requester and responder)", n)
}

// SubscribeInline lends each message: delivery allocates nothing at all.
func TestSubscribeInlineAllocatesNothing(t *testing.T) {
	s := natstest.NewProcess(t, false)
	pub := connect(t, s.URL())
	sc := connect(t, s.URL())
	const n = 20000
	got := make(chan struct{}, 1)
	count := 0
	if _, err := sc.SubscribeInlineUnsafe("alloc.inline", func(m *conn.Msg) {
		if count++; count%n == 0 {
			got <- struct{}{}
		}
	}); err != nil {
		t.Fatal(err)
	}
	sc.Flush(context.Background())
	data := make([]byte, 16)
	run := func() {
		for range n {
			pub.Publish("alloc.inline", data)
		}
		<-got
	}
	run() // warm up
	per := testing.AllocsPerRun(3, run) / n
	if per > 0.001 {
		t.Fatalf("%.4f allocs per message delivered inline, want 0", per)
	}
	t.Logf("%.5f allocs per message delivered inline (publish and receive)", per)
}

// Borrowed batches lend what the consumer reads itself: a lent message
// allocates nothing (no copy, no Msg). Which messages the consumer reads
// itself and which the reader goroutine reads (copies) depends on timing,
// so the allocations of the borrowed run are compared with what its copied
// messages alone cost at the owned run's rate, measured in the same test
// (a lent message that allocated even once per slab of 128 would exceed it
// whenever most messages are lent, as they are in a steady loop).
func TestNextBatchBorrowedAllocs(t *testing.T) {
	s := natstest.NewProcess(t, false)
	pub := connect(t, s.URL())
	const n = 20000
	var ownedRate float64
	for _, borrow := range []bool{false, true} {
		sc := connect(t, s.URL(), conn.PendingLimits(1<<20, 1<<30))
		sub, err := sc.SubscribeBatches("alloc.borrow", borrow)
		if err != nil {
			t.Fatal(err)
		}
		sc.Flush(context.Background())
		data := make([]byte, 128)
		ctx := context.Background()
		var batch []*conn.Msg
		run := func() {
			for range n {
				pub.Publish("alloc.borrow", data)
			}
			for got := 0; got < n; {
				if batch, err = sub.NextBatch(ctx, batch); err != nil {
					t.Fatal(err)
				}
				got += len(batch)
			}
		}
		// Warm up until the recycled memory covers the deepest backlog the
		// runs reach (the consumer's lag varies from run to run).
		for range 6 {
			run()
		}
		allocs, lent := measureRuns(run, borrow, func() uint64 { return sc.Stats().BorrowedMsgs })
		sc.Close()
		if !borrow {
			ownedRate = allocs / n
			t.Logf("owned: %.4f allocs per message", ownedRate)
			continue
		}
		checkLentAllocs(t, allocs, n, lent, ownedRate)
	}
}

// conn.Borrowed, on a SubscribeFunc handler and on a Messages loop: a lent
// message allocates nothing. As for TestNextBatchBorrowedAllocs, the
// borrowed run's allocations are compared with what its copied messages
// alone cost at the owned run's rate, measured in the same test.
func TestBorrowedAllocs(t *testing.T) {
	s := natstest.NewProcess(t, false)
	pub := connect(t, s.URL())
	const n = 20000
	data := make([]byte, 128)
	for _, form := range []string{"handler", "messages"} {
		t.Run(form, func(t *testing.T) {
			var ownedRate float64
			for _, borrow := range []bool{false, true} {
				sc := connect(t, s.URL(), conn.PendingLimits(1<<20, 1<<30))
				var opts []conn.SubOpt
				if borrow {
					opts = append(opts, conn.Borrowed())
				}
				got := make(chan struct{}, 1)
				count := 0
				onMsg := func(*conn.Msg) {
					if count++; count%n == 0 {
						got <- struct{}{}
					}
				}
				var sub *conn.Subscription
				var err error
				ctx, cancel := context.WithCancel(context.Background())
				loopDone := make(chan struct{})
				if form == "handler" {
					sub, err = sc.SubscribeFunc("alloc.lend", onMsg, opts...)
					close(loopDone)
				} else {
					sub, err = sc.Subscribe("alloc.lend")
					go func() {
						defer close(loopDone)
						for m, err := range sub.Messages(ctx, opts...) {
							if err != nil {
								return
							}
							onMsg(m)
						}
					}()
				}
				if err != nil {
					t.Fatal(err)
				}
				sc.Flush(ctx)
				run := func() {
					for range n {
						pub.Publish("alloc.lend", data)
					}
					<-got
				}
				// Warm up until the recycled memory covers the deepest backlog the
				// runs reach (the consumer's lag varies from run to run).
				for range 6 {
					run()
				}
				allocs, lent := measureRuns(run, borrow, func() uint64 { return sc.Stats().BorrowedMsgs })
				cancel()
				<-loopDone
				sc.Close()
				if !borrow {
					ownedRate = allocs / n
					t.Logf("owned: %.4f allocs per message", ownedRate)
					continue
				}
				checkLentAllocs(t, allocs, n, lent, ownedRate)
			}
		})
	}
}

// measureRuns returns the allocations per run of run (testing.AllocsPerRun
// over 3 runs) and the messages lent per run. A borrowed subscription's
// recycled memory grows when a run's backlog is deeper than any before
// (the consumer's lag varies from run to run); the steady state is what
// is judged, so a borrowed run is measured in up to 5 windows and the
// window with the fewest allocations is returned.
func measureRuns(run func(), borrow bool, lentMsgs func() uint64) (allocs, lent float64) {
	windows := 1
	if borrow {
		windows = 5
	}
	allocs = math.Inf(1)
	for range windows {
		lent0 := lentMsgs()
		a := testing.AllocsPerRun(3, run)
		if a < allocs {
			allocs = a
			lent = float64(lentMsgs()-lent0) / 4 // AllocsPerRun's warm-up run and 3 runs
		}
	}
	return allocs, lent
}

// checkLentAllocs judges a borrowed run of n messages, lent of them lent:
// its allocations must be what its copied messages account for at the
// owned run's rate. Copies come in short runs between lent batches (each
// may start a slab), and a read by someone else while a batch is held may
// take a fresh spare buffer: twice the copies' rate, plus a few.
func checkLentAllocs(t *testing.T, allocs float64, n int, lent, ownedRate float64) {
	t.Helper()
	copied := float64(n) - lent
	t.Logf("borrowed: %.0f allocs per run of %d messages, %.0f of them lent, %.0f copied (%.1f allocs expected for the copies)",
		allocs, n, lent, copied, ownedRate*copied)
	if lent == 0 {
		t.Fatal("nothing was lent")
	}
	if allocs > 2*ownedRate*copied+8 {
		t.Fatalf("borrowed run: %.0f allocs, where its %.0f copied messages account for %.1f", allocs, copied, ownedRate*copied)
	}
}
