package extra_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nuid"
	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

// exampleJS connects to $NATS_URL, or to an embedded JetStream server
// started for the example, and returns a JetStream view and a cleanup.
func exampleJS(ctx context.Context) (*jsapi.JS, func(), error) {
	url := os.Getenv("NATS_URL")
	stop := func() {}
	if url == "" {
		s, err := natstest.Start()
		if err != nil {
			return nil, nil, err
		}
		url, stop = s.URL(), s.Close
	}
	nc, err := conn.Connect(ctx, url)
	if err != nil {
		stop()
		return nil, nil, err
	}
	js, err := jsapi.New(nc)
	if err != nil {
		nc.Close()
		stop()
		return nil, nil, err
	}
	return js, func() { nc.Close(); stop() }, nil
}

// exampleStream creates a uniquely named temporary stream on
// "<prefix>.<unique>.>" and returns its name, its subject prefix and a
// function that removes it.
func exampleStream(ctx context.Context, js *jsapi.JS, prefix string, cfg jsapi.StreamConfig) (string, string, func(), error) {
	id := nuid.Next()
	cfg.Name = prefix + "_" + id
	subj := prefix + "." + id
	cfg.Subjects = []string{subj + ".>"}
	cfg.Storage = jsapi.StorageMemory
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		return "", "", nil, err
	}
	return cfg.Name, subj, func() { js.DeleteStream(context.Background(), cfg.Name) }, nil
}

// Fast ingest: a temporary stream receives 1000 events under server flow
// control, then a final message commits the batch.
func ExampleFastPublisher() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, done, err := exampleJS(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()
	_, subj, remove, err := exampleStream(ctx, js, "DEMO", jsapi.StreamConfig{AllowBatchPublish: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer remove()

	p, err := extra.NewFastPublisher(js, extra.Flow(100), extra.MaxOutstandingAcks(2))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Abort() // no-op once committed
	for i := 1; i <= 1000; i++ {
		a, err := p.Add(ctx, subj+".event", fmt.Appendf(nil, "event %d", i))
		if err != nil {
			fmt.Println(err)
			return
		}
		if a.BatchSeq%250 == 0 {
			inWindow := a.BatchSeq-a.AckSeq <= uint64(2*p.Flow())
			fmt.Printf("sent %d, flow %d, within the window: %v\n", a.BatchSeq, p.Flow(), inWindow)
		}
	}
	ack, err := p.Commit(ctx, subj+".done", []byte("done"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("committed: %d messages, last stream sequence %d, same batch: %v\n",
		ack.BatchSize, ack.Sequence, ack.BatchID == p.BatchID())
	// Output:
	// sent 250, flow 100, within the window: true
	// sent 500, flow 100, within the window: true
	// sent 750, flow 100, within the window: true
	// sent 1000, flow 100, within the window: true
	// committed: 1001 messages, last stream sequence 1001, same batch: true
}

// Atomic batch: an order's three messages are stored together, or not at
// all.
func ExampleBatchPublisher() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, done, err := exampleJS(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()
	_, subj, remove, err := exampleStream(ctx, js, "ORDERS", jsapi.StreamConfig{AllowAtomicPublish: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer remove()

	b, err := extra.NewBatchPublisher(js)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Discard() // no-op once committed
	if err := b.Add(ctx, subj+".created", []byte(`{"order":123}`), jsapi.MsgID("order-123-created")); err != nil {
		fmt.Println(err)
		return
	}
	if err := b.Add(ctx, subj+".paid", []byte(`{"order":123,"amount":42}`)); err != nil {
		fmt.Println(err)
		return
	}
	ack, err := b.Commit(ctx, subj+".shipped", []byte(`{"order":123}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("batch of %d stored at sequences %d-%d\n", ack.BatchSize, ack.Sequence-uint64(ack.BatchSize)+1, ack.Sequence)
	// Output:
	// batch of 3 stored at sequences 1-3
}

// Batch direct get and last messages per subject.
func ExampleGetBatch() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, done, err := exampleJS(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()
	name, subj, remove, err := exampleStream(ctx, js, "READINGS", jsapi.StreamConfig{AllowDirect: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer remove()
	for i, sensor := range []string{"a", "b", "a", "c", "b", "a"} {
		if _, err := js.Publish(ctx, subj+"."+sensor, fmt.Appendf(nil, "%s=%d", sensor, i)); err != nil {
			fmt.Println(err)
			return
		}
	}

	for m, err := range extra.GetBatch(ctx, js, name, 3, extra.StartSeq(2)) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("seq %d: %s (%d pending)\n", m.Sequence, m.Data, m.NumPending)
	}
	for m, err := range extra.GetLastMsgsFor(ctx, js, name, []string{subj + ".*"}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("last: seq %d: %s\n", m.Sequence, m.Data)
	}
	// Output:
	// seq 2: b=1 (4 pending)
	// seq 3: a=2 (3 pending)
	// seq 4: c=3 (2 pending)
	// last: seq 4: c=3
	// last: seq 5: b=4
	// last: seq 6: a=5
}
