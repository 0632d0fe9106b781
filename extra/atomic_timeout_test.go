package extra_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
)

// TestAtomicBatchTimeoutStoresNothing: an atomic batch that stalls past
// the server's batch timeout (lowered here to 200 ms from 10 s) is
// abandoned by the server. The commit that comes after fails with a typed
// error, nothing of the batch is stored, and a new batch works. The test
// waits for the server's "batch abandoned" advisory, not for a time.
func TestAtomicBatchTimeoutStoresNothing(t *testing.T) {
	s := natstest.NewServer(t, natstest.Configure(func(o *server.Options) {
		o.JetStreamLimits.MaxBatchTimeout = 200 * time.Millisecond
	}))
	nc := connect(t, s.URL())
	js := newJS(t, nc)
	st := atomicStream(t, js, "TMO")
	ctx := ctxT(t)
	adv, err := nc.Subscribe("$JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED.TMO")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	b, err := extra.NewBatchPublisher(js)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := b.Add(ctx, "tmo.x", []byte{byte('a' + i)}); err != nil {
			t.Fatalf("add %d: %v", i, err)
		}
	}
	m, err := adv.NextMsg(ctx)
	if err != nil {
		t.Fatalf("no abandoned-batch advisory: %v", err)
	}
	var a struct {
		Batch  string `json:"batch"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal(m.Data, &a); err != nil || a.Batch != b.BatchID() || a.Reason != "timeout" {
		t.Fatalf("advisory %s (%v), want batch %s abandoned on timeout", m.Data, err, b.BatchID())
	}

	ack, err := b.Commit(ctx, "tmo.end", []byte("end"))
	if err == nil {
		t.Fatalf("commit of an abandoned batch succeeded: %+v", ack)
	}
	var ae *jsapi.APIError
	if !errors.As(err, &ae) || !errors.Is(err, jsapi.ErrAtomicIncomplete) {
		t.Fatalf("commit of an abandoned batch: %v, want jsapi.ErrAtomicIncomplete (10176)", err)
	}
	if n := msgCount(t, st); n != 0 {
		t.Fatalf("%d messages stored from an abandoned batch", n)
	}

	b, err = extra.NewBatchPublisher(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Add(ctx, "tmo.x", []byte("again")); err != nil {
		t.Fatal(err)
	}
	if ack, err := b.Commit(ctx, "tmo.end", []byte("end")); err != nil || ack.Sequence != 2 || ack.BatchSize != 2 {
		t.Fatalf("new batch: %+v %v", ack, err)
	}
}
