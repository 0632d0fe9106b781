package conn_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/proto"
)

// recorder is an Observer that stamps every publish with a header and
// records what it saw.
type recorder struct {
	mu        sync.Mutex
	kinds     []conn.PubKind
	outcomes  []error
	responses []*conn.Msg
	received  []string
	processed []string
	ended     int
	answered  []*conn.Msg // Pub.Request of responses
}

func (r *recorder) Publish(_ context.Context, p *conn.Pub) func(*conn.Msg, error) {
	if p.Header == nil {
		p.Header = new(proto.Header)
	}
	p.Header.Set("Obs", p.Subject)
	r.mu.Lock()
	r.kinds = append(r.kinds, p.Kind)
	if p.Kind == conn.PubRespond {
		r.answered = append(r.answered, p.Request)
	}
	r.mu.Unlock()
	return func(resp *conn.Msg, err error) {
		r.mu.Lock()
		r.outcomes = append(r.outcomes, err)
		r.responses = append(r.responses, resp)
		r.mu.Unlock()
	}
}

func (r *recorder) Receive(m *conn.Msg) {
	r.mu.Lock()
	r.received = append(r.received, m.Subject)
	r.mu.Unlock()
}

func (r *recorder) Process(m *conn.Msg) func() {
	r.mu.Lock()
	r.processed = append(r.processed, m.Subject)
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		r.ended++
		r.mu.Unlock()
	}
}

// An Observer sees every publish, request and response with a header it
// may add to (the caller's header is left as it was), their outcomes, and
// the messages iterators, NextMsg and handlers receive.
func TestObserverSeesPublishRequestRespondAndDelivery(t *testing.T) {
	s := natstest.NewServer(t, natstest.JetStream(false))
	obs := &recorder{}
	nc := connect(t, s.URL(), conn.Observe(obs))

	svc, err := nc.SubscribeFunc("obs.svc", func(m *conn.Msg) {
		if err := m.Respond([]byte("pong")); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	it, err := nc.Subscribe("obs.it")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}

	h := proto.NewHeader("Mine", "1")
	if err := nc.PublishMsg("obs.it", "", h, []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("obs.it", []byte("b")); err != nil {
		t.Fatal(err)
	}
	if h.Len() != 1 {
		t.Fatalf("the caller's header was changed: %d fields", h.Len())
	}
	resp, err := nc.Request(ctxT(t), "obs.svc", []byte("ping"))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Header.Get("Obs"); got == "" {
		t.Fatalf("response without the observer's header: %q", resp.Header.Block())
	}
	if err := nc.Publish("obs.bad subject", nil); !errors.Is(err, conn.ErrBadSubject) {
		t.Fatalf("bad subject: %v", err)
	}

	m1, err := it.NextMsg(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if m1.Header.Get("Obs") != "obs.it" || m1.Header.Get("Mine") != "1" {
		t.Fatalf("first message's header: %q", m1.Header.Block())
	}
	for m, err := range it.Messages(ctxT(t)) {
		if err != nil {
			t.Fatal(err)
		}
		if m.Header.Get("Obs") != "obs.it" {
			t.Fatalf("a publish without header got none from the observer: %q", m.Header.Block())
		}
		break
	}
	if err := svc.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	<-svc.HandlerDone()

	obs.mu.Lock()
	defer obs.mu.Unlock()
	want := []conn.PubKind{conn.PubPublish, conn.PubPublish, conn.PubRequest, conn.PubRespond, conn.PubPublish}
	if k := slices.Clone(obs.kinds); len(k) != len(want) || !sameKinds(k, want) {
		t.Fatalf("kinds %v, want (in any order of request and response) %v", k, want)
	}
	var failed, answered int
	for i, err := range obs.outcomes {
		if err != nil {
			if !errors.Is(err, conn.ErrBadSubject) {
				t.Errorf("outcome %d: %v", i, err)
			}
			failed++
		}
		if obs.responses[i] == resp {
			answered++
		}
	}
	if failed != 1 || answered != 1 {
		t.Fatalf("%d failed outcomes (want 1), %d with the request's response (want 1)", failed, answered)
	}
	if len(obs.answered) != 1 || obs.answered[0] == nil || obs.answered[0].Subject != "obs.svc" {
		t.Fatalf("the response's Pub.Request: %v", obs.answered)
	}
	if !slices.Equal(obs.received, []string{"obs.it", "obs.it"}) {
		t.Fatalf("received %v", obs.received)
	}
	if !slices.Equal(obs.processed, []string{"obs.svc"}) || obs.ended != 1 {
		t.Fatalf("processed %v, ended %d", obs.processed, obs.ended)
	}
}

// sameKinds compares kinds as multisets: the response may be observed
// before or after the request is.
func sameKinds(a, b []conn.PubKind) bool {
	slices.Sort(a)
	b = slices.Clone(b)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// nopObserver does nothing: what the hooks cost by themselves.
type nopObserver struct{}

func (nopObserver) Publish(context.Context, *conn.Pub) func(*conn.Msg, error) { return nil }
func (nopObserver) Receive(*conn.Msg)                                         {}
func (nopObserver) Process(*conn.Msg) func()                                  { return nil }

// observerCases are the connection options of the observer benchmarks:
// none (the hooks' cost when unused) and a no-op Observer.
var observerCases = []struct {
	name string
	opts []conn.Option
}{{"none", nil}, {"nop", []conn.Option{conn.Observe(nopObserver{})}}}

// BenchmarkObserverPublish: Publish of 16 bytes without an Observer and
// with one that does nothing.
func BenchmarkObserverPublish(b *testing.B) {
	for _, c := range observerCases {
		b.Run(c.name, func(b *testing.B) {
			s := benchServer(b)
			nc := connect(b, s.URL(), c.opts...)
			data := make([]byte, 16)
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if err := nc.Publish("bench.obs", data); err != nil {
					b.Fatal(err)
				}
			}
			if err := nc.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkObserverDeliver: publish to a SubscribeFunc handler on another
// connection, both with or without a no-op Observer; per delivered
// message.
func BenchmarkObserverDeliver(b *testing.B) {
	for _, c := range observerCases {
		b.Run(c.name, func(b *testing.B) {
			s := benchServer(b)
			pub := connect(b, s.URL(), c.opts...)
			sc := connect(b, s.URL(), append([]conn.Option{conn.PendingLimits(1<<22, 1<<30)}, c.opts...)...)
			data := make([]byte, 16)
			done := make(chan struct{})
			var got, want int
			sub, err := sc.SubscribeFunc("bench.obs", func(*conn.Msg) {
				if got++; got == want {
					close(done)
				}
			})
			if err != nil {
				b.Fatal(err)
			}
			if err := sc.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			want = b.N
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuTime()
			for range b.N {
				if err := pub.Publish("bench.obs", data); err != nil {
					b.Fatal(err)
				}
			}
			select {
			case <-done:
			case <-time.After(time.Minute):
				b.Fatalf("received %d of %d", got, want)
			}
			reportCPU(b, cpu)
			if d := sub.Dropped(); d > 0 {
				b.Fatalf("%d dropped", d)
			}
		})
	}
}
