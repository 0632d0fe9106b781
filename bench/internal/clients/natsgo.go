package clients

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// NatsGo runs the scenarios with github.com/nats-io/nats.go, default options
// except for subscriber pending limits, lifted so that nothing is dropped.
type NatsGo struct{}

// Name implements Client.
func (NatsGo) Name() string { return "natsgo" }

func natsgoConnect(url, name string, opts ...nats.Option) (*nats.Conn, error) {
	opts = append([]nats.Option{nats.Name(name)}, opts...)
	return nats.Connect(url, opts...)
}

// flushTimeout bounds nats.go flush round trips.
const flushTimeout = 30 * time.Second

// --- publish ---

type natsgoPub struct {
	nc      *nats.Conn
	subject string
	data    []byte
}

// NewPublish implements Publisher.
func (NatsGo) NewPublish(_ context.Context, cfg Config) (Runner, error) {
	nc, err := natsgoConnect(cfg.URL, "bench-pub")
	if err != nil {
		return nil, err
	}
	return &natsgoPub{nc: nc, subject: cfg.Subject, data: Payload(cfg.Size)}, nil
}

func (p *natsgoPub) Run(n int) error {
	for range n {
		if err := p.nc.Publish(p.subject, p.data); err != nil {
			return err
		}
	}
	return p.nc.FlushTimeout(flushTimeout)
}

func (p *natsgoPub) Close() error { p.nc.Close(); return nil }

// --- pub/sub ---

type natsgoPubSub struct {
	pub, subc *nats.Conn
	sub       *nats.Subscription
	subject   string
	data      []byte
	cnt       *counter
	async     errAsync
	iterDone  chan struct{}
	closing   chan struct{}
}

// NewPubSub implements PubSuber.
func (NatsGo) NewPubSub(_ context.Context, cfg Config) (Runner, error) {
	p := &natsgoPubSub{subject: cfg.Subject, data: Payload(cfg.Size), cnt: newCounter(cfg.Size), closing: make(chan struct{})}
	// SyncQueueLen sizes the channel of synchronous subscriptions, which
	// is their pending-message limit.
	qlen := max(cfg.MaxMsgs, nats.DefaultMaxChanLen)
	var err error
	if p.subc, err = natsgoConnect(cfg.URL, "bench-sub", nats.SyncQueueLen(qlen)); err != nil {
		return nil, err
	}
	p.pub = p.subc
	if !cfg.SameConn {
		if p.pub, err = natsgoConnect(cfg.URL, "bench-pub"); err != nil {
			p.subc.Close()
			return nil, err
		}
	}
	switch cfg.Mode {
	case Callback:
		p.sub, err = p.subc.Subscribe(cfg.Subject, func(m *nats.Msg) { p.cnt.add(len(m.Data)) })
	case Iter, Next:
		p.sub, err = p.subc.SubscribeSync(cfg.Subject)
		if err == nil {
			p.iterDone = make(chan struct{})
			go p.consume(cfg.Mode)
		}
	default:
		err = fmt.Errorf("unknown mode %q", cfg.Mode)
	}
	if err == nil {
		err = p.sub.SetPendingLimits(-1, -1)
	}
	if err == nil {
		err = p.subc.FlushTimeout(flushTimeout)
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func (p *natsgoPubSub) consume(mode Mode) {
	defer close(p.iterDone)
	report := func(err error) {
		select {
		case <-p.closing:
		default:
			p.async.set(err)
		}
	}
	if mode == Iter {
		for m, err := range p.sub.Msgs() {
			if err != nil {
				report(err)
				return
			}
			p.cnt.add(len(m.Data))
		}
		return
	}
	for {
		m, err := p.sub.NextMsg(time.Hour)
		if err != nil {
			report(err)
			return
		}
		p.cnt.add(len(m.Data))
	}
}

func (p *natsgoPubSub) dropped() int64 {
	d, err := p.sub.Dropped()
	if err != nil {
		return 0
	}
	return int64(d)
}

func (p *natsgoPubSub) Run(n int) error {
	target := p.cnt.expect(n)
	for range n {
		if err := p.pub.Publish(p.subject, p.data); err != nil {
			return err
		}
	}
	if err := p.cnt.wait(target, p.dropped); err != nil {
		return errors.Join(err, p.async.get())
	}
	if err := p.async.get(); err != nil {
		return err
	}
	return p.cnt.checkExact(target)
}

func (p *natsgoPubSub) Close() error {
	close(p.closing)
	if p.pub != nil && p.pub != p.subc {
		p.pub.Close()
	}
	if p.subc != nil {
		p.subc.Close()
	}
	if p.iterDone != nil {
		<-p.iterDone
	}
	return nil
}

// --- request/reply ---

type natsgoReq struct {
	req, resp *nats.Conn
	subject   string
	data      []byte
	withCtx   bool
}

// NewRequest implements Requester.
func (NatsGo) NewRequest(_ context.Context, cfg Config) (LatencyRunner, error) {
	r := &natsgoReq{subject: cfg.Subject, data: Payload(cfg.Size), withCtx: cfg.Mode == Ctx}
	var err error
	if r.resp, err = natsgoConnect(cfg.URL, "bench-responder"); err != nil {
		return nil, err
	}
	reply := Payload(cfg.Size)
	if _, err = r.resp.Subscribe(cfg.Subject, func(m *nats.Msg) { _ = m.Respond(reply) }); err == nil {
		err = r.resp.FlushTimeout(flushTimeout)
	}
	if err == nil {
		r.req, err = natsgoConnect(cfg.URL, "bench-requester")
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *natsgoReq) Run(lat []time.Duration) error {
	if len(lat) == 0 {
		return errShortLatency
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	for i := range lat {
		t0 := time.Now()
		var m *nats.Msg
		var err error
		if r.withCtx {
			m, err = r.req.RequestWithContext(ctx, r.subject, r.data)
		} else {
			m, err = r.req.Request(r.subject, r.data, 5*time.Second)
		}
		if err != nil {
			return fmt.Errorf("request %d: %w", i, err)
		}
		lat[i] = time.Since(t0)
		if len(m.Data) != len(r.data) {
			return fmt.Errorf("reply of %d bytes, want %d", len(m.Data), len(r.data))
		}
	}
	return nil
}

func (r *natsgoReq) Close() error {
	if r.req != nil {
		r.req.Close()
	}
	if r.resp != nil {
		r.resp.Close()
	}
	return nil
}
