package chaos

import (
	"context"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

const (
	streamFast = "CHAOSF"
	subjFast   = "chaosf.x"
	hdrFast    = "Chaos-Fast"
	// fastSize is the messages of one fast batch, the commit included;
	// fastFlow, the server's flow-acknowledgement interval, makes several
	// acknowledgements per batch.
	fastSize = 20
	fastFlow = 4
)

// fastRec is what the F1 workload knows of one fast batch when it ended.
type fastRec struct {
	sent      int    // messages handed to the connection (the commit included)
	acked     uint64 // highest batch sequence the server acknowledged as stored
	committed bool   // the commit's PubAck arrived, naming the batch and its size
}

// ---- F1: fast-ingest batches (non-atomic, gap mode fail) ----
//
// Every message is stored as it arrives, so a fault may end a batch part
// way. What must hold (checked in check 5): every message the server
// acknowledged is stored, a committed batch is stored whole, no message is
// stored twice, and what is stored of a batch is a prefix of it (gap mode
// fail stops the batch at the first message that did not arrive).
type f1w struct {
	ph   *phase
	js   *jsapi.JS
	data []byte

	mu      sync.Mutex
	batches map[string]fastRec

	committed, failed, badAcks atomic.Int64
	errs                       counter
	done                       chan struct{}
}

func (w *f1w) run(stop <-chan struct{}) {
	defer close(w.done)
	pace := newPacer(w.ph.cfg.batchRate)
	for !closed(stop) {
		pace.wait()
		w.once()
	}
}

func (w *f1w) once() {
	ph, cfg := w.ph, w.ph.cfg
	p, err := extra.NewFastPublisher(w.js, extra.Flow(fastFlow), extra.FastAckTimeout(cfg.p1Timeout))
	if err != nil {
		w.errs.add("new: "+classify(err), 1)
		w.failed.Add(1)
		return
	}
	id := p.BatchID()
	ctx, end := ph.wd.ctx(context.Background(), "F1 fast batch", 2*cfg.p1Timeout+time.Second)
	defer end()
	var h proto.Header
	for i := 0; i < fastSize-1; i++ {
		h.Reset()
		h.Set(hdrFast, id)
		h.Set(hdrBatchIdx, strconv.Itoa(i))
		if _, err := p.AddMsg(ctx, subjFast, &h, w.data); err != nil {
			_ = p.Abort()
			w.fail(id, p, "add", err)
			return
		}
	}
	h.Reset()
	h.Set(hdrFast, id)
	h.Set(hdrBatchIdx, strconv.Itoa(fastSize-1))
	ack, err := p.CommitMsg(ctx, subjFast, &h, w.data)
	if err != nil {
		w.fail(id, p, "commit", err)
		return
	}
	if ack.BatchSize != fastSize || ack.BatchID != id {
		w.badAcks.Add(1)
	}
	w.committed.Add(1)
	w.record(id, fastRec{sent: p.Size(), acked: max(p.LastAckSeq(), fastSize), committed: true})
}

func (w *f1w) fail(id string, p *extra.FastPublisher, stage string, err error) {
	cl := classify(err)
	w.errs.add(stage+": "+cl, 1)
	w.ph.rec.eventLimited(w.ph.name, "F1", "fast batch error", cl)
	w.failed.Add(1)
	w.record(id, fastRec{sent: p.Size(), acked: p.LastAckSeq()})
}

func (w *f1w) record(id string, r fastRec) {
	w.mu.Lock()
	w.batches[id] = r
	w.mu.Unlock()
}

func (w *f1w) snapshot() map[string]fastRec {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.batches)
}
