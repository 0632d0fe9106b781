package extra_test

// Benchmarks against a server in a child process, so that allocations and
// CPU are the client's. msgs/s includes waiting for the last
// acknowledgement (publishers) or the whole batch (gets).

import (
	"context"
	"iter"
	"strconv"
	"testing"
	"time"

	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pubwin"
)

// benchJS starts a server process and creates stream B on b.> (memory,
// direct get, fast batches allowed: the same configuration for every
// publisher).
func benchJS(b *testing.B) (*jsapi.JS, *jsapi.Stream, context.Context) {
	b.Helper()
	s := natstest.NewProcess(b, true)
	nc := connect(b, s.URL())
	js := newJS(b, nc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	b.Cleanup(cancel)
	st, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "B", Subjects: []string{"b.>"}, Storage: jsapi.StorageMemory,
		AllowDirect: true, AllowBatchPublish: true, AllowAtomicPublish: true})
	if err != nil {
		b.Fatal(err)
	}
	return js, st, ctx
}

func reportRate(b *testing.B, n int, start time.Time) {
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "msgs/s")
}

func BenchmarkFastPublish128(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts []extra.FastOpt
	}{
		{"flow100x2", nil},
		{"flow500x3", []extra.FastOpt{extra.Flow(500), extra.MaxOutstandingAcks(3)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			js, _, ctx := benchJS(b)
			p, err := extra.NewFastPublisher(js, bc.opts...)
			if err != nil {
				b.Fatal(err)
			}
			data := make([]byte, 128)
			b.ReportAllocs()
			b.SetBytes(128)
			n := 0
			start := time.Now()
			for b.Loop() {
				if _, err := p.Add(ctx, "b.a", data); err != nil {
					b.Fatal(err)
				}
				n++
			}
			if _, err := p.Close(ctx); err != nil {
				b.Fatal(err)
			}
			reportRate(b, n, start)
			b.ReportMetric(float64(extra.FastPings(p)), "pings")
		})
	}
}

func BenchmarkWindowPublish128(b *testing.B) {
	js, _, ctx := benchJS(b)
	w, err := pubwin.New(js)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	data := make([]byte, 128)
	b.ReportAllocs()
	b.SetBytes(128)
	n := 0
	start := time.Now()
	for b.Loop() {
		if _, err := w.Publish(ctx, "b.a", data); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := w.Complete(ctx); err != nil {
		b.Fatal(err)
	}
	reportRate(b, n, start)
}

func BenchmarkAtomicBatch128(b *testing.B) {
	js, _, ctx := benchJS(b)
	data := make([]byte, 128)
	b.ReportAllocs()
	b.SetBytes(128)
	var p *extra.BatchPublisher
	n := 0
	start := time.Now()
	for b.Loop() {
		if p == nil {
			p, _ = extra.NewBatchPublisher(js)
		}
		if p.Size() == extra.MaxAtomicBatch-1 {
			if _, err := p.Commit(ctx, "b.a", data); err != nil {
				b.Fatal(err)
			}
			p = nil
		} else if err := p.Add(ctx, "b.a", data); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if p != nil {
		if _, err := p.Commit(ctx, "b.a", data); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, n, start)
}

const getN = 10_000

// fill stores getN messages of 128 bytes with a fast batch.
func fill(b *testing.B, js *jsapi.JS, ctx context.Context) {
	b.Helper()
	p, err := extra.NewFastPublisher(js, extra.Flow(500))
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 128)
	for range getN {
		if _, err := p.Add(ctx, "b.a", data); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := p.Close(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkGetBatch10k reads the 10k messages with batch direct gets of
// 10k; one op is one message. The server streams a whole batch at once,
// so msgs/s counts every message of the batches requested, read to the
// end, over the whole time.
func BenchmarkGetBatch10k(b *testing.B) {
	js, _, ctx := benchJS(b)
	fill(b, js, ctx)
	var next func() (*jsapi.StoredMsg, error, bool)
	stop := func() {}
	b.ReportAllocs()
	b.SetBytes(128)
	n := 0
	start := time.Now()
	for b.Loop() {
		var (
			m   *jsapi.StoredMsg
			err error
			ok  bool
		)
		if next != nil {
			m, err, ok = next()
		}
		if !ok {
			stop()
			next, stop = iter.Pull2(extra.GetBatch(ctx, js, "B", getN))
			m, err, ok = next()
		}
		if err != nil || !ok || len(m.Data) != 128 {
			b.Fatal(err, ok)
		}
		n++
	}
	for {
		_, err, ok := next()
		if err != nil {
			b.Fatal(err)
		}
		if !ok {
			break
		}
		n++
	}
	stop()
	reportRate(b, n, start)
}

// BenchmarkDirectGet10k reads the same messages with one Direct Get
// request each (nc.Request on $JS.API.DIRECT.GET.B, {"seq":n}).
func BenchmarkDirectGet10k(b *testing.B) {
	js, _, ctx := benchJS(b)
	fill(b, js, ctx)
	nc := js.Conn()
	body := make([]byte, 0, 32)
	b.ReportAllocs()
	b.SetBytes(128)
	seq := uint64(0)
	start := time.Now()
	n := 0
	for b.Loop() {
		seq = seq%getN + 1
		body = append(strconv.AppendUint(append(body[:0], `{"seq":`...), seq, 10), '}')
		m, err := nc.Request(ctx, "$JS.API.DIRECT.GET.B", body)
		if err != nil || len(m.Data) != 128 {
			b.Fatal(err)
		}
		n++
	}
	reportRate(b, n, start)
}

// BenchmarkGetMsg10k reads them with jsapi's Stream.GetMsg (direct get).
func BenchmarkGetMsg10k(b *testing.B) {
	js, st, ctx := benchJS(b)
	fill(b, js, ctx)
	b.ReportAllocs()
	b.SetBytes(128)
	seq := uint64(0)
	start := time.Now()
	n := 0
	for b.Loop() {
		seq = seq%getN + 1
		m, err := st.GetMsg(ctx, seq)
		if err != nil || len(m.Data) != 128 {
			b.Fatal(err)
		}
		n++
	}
	reportRate(b, n, start)
}
