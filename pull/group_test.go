package pull_test

import (
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pull"
)

// A pool of workers: three clients, each on a connection of its own,
// share one durable consumer through Consume. Every message is processed
// and acknowledged exactly once across them. One worker stops in the middle
// of its batch, leaving the messages it had received unhandled: the server
// redelivers them after AckWait to the others, and none is lost.
func TestWorkerPool(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	const n = 300
	const ackWait = 2 * time.Second
	e.consumer(t, jsapi.ConsumerConfig{Durable: "G", AckWait: ackWait})
	e.publish(t, n)

	type processing struct {
		worker    int
		delivered uint64
	}
	var mu sync.Mutex
	processed := map[uint64][]processing{} // stream seq → who processed it
	allDone := make(chan struct{})
	stoppedAt := uint64(0) // the message worker 0 stopped on, unprocessed
	stopCalls := 0         // worker 0's handler calls

	workers := make([]*pull.ConsumeContext, 3)
	for w := range workers {
		nc, err := conn.Connect(e.ctx, e.s.URL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		js, _ := jsapi.New(nc)
		info, err := js.Consumer(e.ctx, "S", "G")
		if err != nil {
			t.Fatal(err)
		}
		c, err := pull.FromInfo(js, info)
		if err != nil {
			t.Fatal(err)
		}
		var cc *pull.ConsumeContext
		ready := make(chan struct{})
		cc, err = c.Consume(e.ctx, func(m *jsapi.Msg) {
			<-ready
			md, err := m.Metadata()
			if err != nil {
				t.Error(err)
				return
			}
			if w == 0 {
				mu.Lock()
				stopCalls++
				stop := stopCalls == 20
				if stop {
					stoppedAt = md.StreamSeq
				}
				mu.Unlock()
				if stop {
					// Mid-batch: this message and the rest of the batch
					// are left unacknowledged.
					cc.Stop()
					return
				}
			}
			if err := m.AckSync(e.ctx); err != nil {
				t.Errorf("worker %d, stream seq %d: %v", w, md.StreamSeq, err)
				return
			}
			mu.Lock()
			processed[md.StreamSeq] = append(processed[md.StreamSeq], processing{w, md.NumDelivered})
			if len(processed) == n {
				close(allDone)
			}
			mu.Unlock()
		}, pull.MaxMessages(50))
		if err != nil {
			t.Fatal(err)
		}
		close(ready)
		workers[w] = cc
	}
	select {
	case <-allDone:
	case <-time.After(10*ackWait + 20*time.Second): // a bound on failure only
		mu.Lock()
		t.Fatalf("%d of %d messages processed", len(processed), n)
	}
	for _, cc := range workers {
		cc.Stop()
		<-cc.Closed()
		if err := cc.Err(); err != nil {
			t.Fatal(err)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	if stopCalls != 20 {
		t.Fatalf("worker 0's handler ran %d times, want 20 (none after its Stop)", stopCalls)
	}
	perWorker := [3]int{}
	redelivered := 0
	for seq := uint64(1); seq <= n; seq++ {
		p := processed[seq]
		if len(p) != 1 {
			t.Fatalf("stream seq %d processed %d times: %+v", seq, len(p), p)
		}
		perWorker[p[0].worker]++
		if p[0].delivered > 1 {
			redelivered++
			if p[0].worker == 0 {
				t.Fatalf("stream seq %d redelivered to worker 0 after it stopped", seq)
			}
		}
	}
	if p := processed[stoppedAt]; p[0].worker == 0 || p[0].delivered < 2 {
		t.Fatalf("the message worker 0 stopped on (seq %d) was processed by %+v, want another worker after a redelivery", stoppedAt, p)
	}
	t.Logf("processed per worker %v, %d after a redelivery", perWorker, redelivered)
	if perWorker[1] == 0 || perWorker[2] == 0 {
		t.Fatalf("processed per worker %v: the pool did not share the work", perWorker)
	}
	info, err := e.js.Consumer(e.ctx, "S", "G")
	if err != nil {
		t.Fatal(err)
	}
	if info.NumAckPending != 0 || info.NumPending != 0 || info.AckFloor.Stream != n {
		t.Fatalf("consumer at the end: %d awaiting acks, %d pending, ack floor %d", info.NumAckPending, info.NumPending, info.AckFloor.Stream)
	}
}
