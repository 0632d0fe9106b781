package chaos

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

const (
	streamBatch = "CHAOSB"
	subjBatch   = "chaosb.x"
	hdrBatch    = "Chaos-Batch"
	hdrBatchIdx = "Chaos-Idx"
)

// Outcome of one batch attempt.
const (
	batchCommitted   uint8 = iota + 1 // commit acknowledged
	batchAmbiguous                    // the commit was sent, its outcome is unknown
	batchNotCommited                  // failed before the commit was sent: nothing may be stored
)

// ---- B1: atomic batches of 10, the last message commits ----

type b1w struct {
	ph   *phase
	js   *jsapi.JS
	data []byte

	mu       sync.Mutex
	attempts map[string]uint8

	logical, committed, ambiguous, failed atomic.Int64
	badAcks                               atomic.Int64
	errs                                  counter
	done                                  chan struct{}
}

func (w *b1w) run(stop <-chan struct{}) {
	defer close(w.done)
	pace := newPacer(w.ph.cfg.batchRate)
	for n := 1; !closed(stop); n++ {
		pace.wait()
		w.logical.Add(1)
		for a := 1; !closed(stop); a++ {
			if w.once("b"+strconv.Itoa(n)+"-"+strconv.Itoa(a)) == batchCommitted {
				break
			}
			sleepOr(250*time.Millisecond, stop)
		}
	}
}

func (w *b1w) record(id string, st uint8) uint8 {
	w.mu.Lock()
	w.attempts[id] = st
	w.mu.Unlock()
	return st
}

func (w *b1w) once(id string) uint8 {
	ph, cfg := w.ph, w.ph.cfg
	p, err := extra.NewBatchPublisher(w.js, extra.BatchID(id), extra.AckTimeout(cfg.p1Timeout))
	if err != nil {
		w.errs.add("new: "+classify(err), 1)
		return w.record(id, batchNotCommited)
	}
	ctx, end := ph.wd.ctx(context.Background(), "B1 atomic batch", 2*cfg.p1Timeout+time.Second)
	defer end()
	var h proto.Header
	for i := 0; i < cfg.batchSize-1; i++ {
		h.Reset()
		h.Set(hdrBatch, id)
		h.Set(hdrBatchIdx, strconv.Itoa(i))
		if err := p.AddMsg(ctx, subjBatch, &h, w.data); err != nil {
			p.Discard()
			cl := classify(err)
			w.errs.add("add: "+cl, 1)
			ph.rec.eventLimited(ph.name, "B1", "batch error", cl)
			w.failed.Add(1)
			return w.record(id, batchNotCommited)
		}
	}
	h.Reset()
	h.Set(hdrBatch, id)
	h.Set(hdrBatchIdx, strconv.Itoa(cfg.batchSize-1))
	ack, err := p.CommitMsg(ctx, subjBatch, &h, w.data)
	if err != nil {
		cl := classify(err)
		w.errs.add("commit: "+cl, 1)
		ph.rec.eventLimited(ph.name, "B1", "batch error", cl)
		w.ambiguous.Add(1)
		return w.record(id, batchAmbiguous)
	}
	if ack.BatchSize != cfg.batchSize || ack.BatchID != id {
		w.badAcks.Add(1)
	}
	w.committed.Add(1)
	return w.record(id, batchCommitted)
}
