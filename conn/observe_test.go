package conn_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

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
