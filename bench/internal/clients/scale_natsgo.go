package clients

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// --- idle connections ---

type natsgoIdle struct {
	url   string
	conns []*nats.Conn
}

// NewIdleConns implements IdleConnector.
func (NatsGo) NewIdleConns(_ context.Context, cfg Config) (Runner, error) {
	return &natsgoIdle{url: cfg.URL}, nil
}

func (p *natsgoIdle) Run(n int) error {
	for i := range n {
		nc, err := natsgoConnect(p.url, "bench-idle")
		if err == nil {
			p.conns = append(p.conns, nc)
			err = nc.FlushTimeout(flushTimeout)
		}
		if err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
	}
	return nil
}

func (p *natsgoIdle) Close() error {
	for _, nc := range p.conns {
		nc.Close()
	}
	return nil
}

// --- many subscriptions on one connection ---

type natsgoManySubs struct {
	pub, subc *nats.Conn
	subs      []*nats.Subscription
	subjects  []string
	data      []byte
	cnt       *counter
	next      int
}

// NewManySubs implements ManySubscriber.
func (NatsGo) NewManySubs(_ context.Context, cfg Config) (Runner, error) {
	if err := checkSubs(cfg.Subs); err != nil {
		return nil, err
	}
	p := &natsgoManySubs{subjects: subSubjects(cfg.Subject, cfg.Subs), data: Payload(cfg.Size), cnt: newCounter(cfg.Size)}
	var err error
	if p.subc, err = natsgoConnect(cfg.URL, "bench-subs"); err != nil {
		return nil, err
	}
	if p.pub, err = natsgoConnect(cfg.URL, "bench-pub"); err != nil {
		p.subc.Close()
		return nil, err
	}
	handler := func(m *nats.Msg) { p.cnt.add(len(m.Data)) }
	for _, s := range p.subjects {
		sub, err := p.subc.Subscribe(s, handler)
		if err == nil {
			err = sub.SetPendingLimits(-1, -1)
		}
		if err != nil {
			p.Close()
			return nil, err
		}
		p.subs = append(p.subs, sub)
	}
	if err := p.subc.FlushTimeout(flushTimeout); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func (p *natsgoManySubs) dropped() int64 {
	var d int64
	for _, s := range p.subs {
		if n, err := s.Dropped(); err == nil {
			d += int64(n)
		}
	}
	return d
}

func (p *natsgoManySubs) Run(n int) error {
	target := p.cnt.expect(n)
	for range n {
		if err := p.pub.Publish(p.subjects[p.next], p.data); err != nil {
			return err
		}
		if p.next++; p.next == len(p.subjects) {
			p.next = 0
		}
	}
	if err := p.cnt.wait(target, p.dropped); err != nil {
		return err
	}
	return p.cnt.checkExact(target)
}

func (p *natsgoManySubs) Close() error {
	if p.pub != nil {
		p.pub.Close()
	}
	p.subc.Close()
	return nil
}

// --- many connections in one process ---

type natsgoManyConns struct {
	conns    []*nats.Conn
	subs     []*nats.Subscription
	subjects []string
	data     []byte
	cnt      *counter
}

// NewManyConns implements ManyConnector.
func (NatsGo) NewManyConns(_ context.Context, cfg Config) (Runner, error) {
	if err := checkSubs(cfg.Conns); err != nil {
		return nil, err
	}
	p := &natsgoManyConns{subjects: subSubjects(cfg.Subject, cfg.Conns), data: Payload(cfg.Size), cnt: newCounter(cfg.Size)}
	handler := func(m *nats.Msg) { p.cnt.add(len(m.Data)) }
	for _, s := range p.subjects {
		nc, err := natsgoConnect(cfg.URL, "bench-conns")
		if err != nil {
			p.Close()
			return nil, err
		}
		p.conns = append(p.conns, nc)
		sub, err := nc.Subscribe(s, handler)
		if err == nil {
			err = sub.SetPendingLimits(-1, -1)
		}
		if err == nil {
			err = nc.FlushTimeout(flushTimeout)
		}
		if err != nil {
			p.Close()
			return nil, err
		}
		p.subs = append(p.subs, sub)
	}
	return p, nil
}

func (p *natsgoManyConns) dropped() int64 {
	var d int64
	for _, s := range p.subs {
		if n, err := s.Dropped(); err == nil {
			d += int64(n)
		}
	}
	return d
}

func (p *natsgoManyConns) Run(n int) error {
	target := p.cnt.expect(n)
	var wg sync.WaitGroup
	var async errAsync
	for i, k := range shares(n, len(p.conns)) {
		wg.Go(func() {
			nc, subj := p.conns[i], p.subjects[i]
			for range k {
				if err := nc.Publish(subj, p.data); err != nil {
					async.set(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := async.get(); err != nil {
		return err
	}
	if err := p.cnt.wait(target, p.dropped); err != nil {
		return err
	}
	return p.cnt.checkExact(target)
}

func (p *natsgoManyConns) Close() error {
	for _, nc := range p.conns {
		nc.Close()
	}
	return nil
}

// --- requests in flight ---

type natsgoInFlight struct {
	natsgoReq
	inFlight int
}

// NewInFlight implements InFlighter.
func (NatsGo) NewInFlight(ctx context.Context, cfg Config) (Runner, error) {
	lr, err := NatsGo{}.NewRequest(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &natsgoInFlight{natsgoReq: *lr.(*natsgoReq), inFlight: cfg.InFlight}, nil
}

func (r *natsgoInFlight) Run(n int) error {
	return runInFlight(n, r.inFlight, func() error {
		m, err := r.req.Request(r.subject, r.data, 5*time.Second)
		if err != nil {
			return err
		}
		if len(m.Data) != len(r.data) {
			return fmt.Errorf("reply of %d bytes, want %d", len(m.Data), len(r.data))
		}
		return nil
	})
}
