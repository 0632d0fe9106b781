package clients

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/natsio/natsio/conn"
)

// --- idle connections ---

type natsioIdle struct {
	url   string
	conns []*conn.Conn
}

// NewIdleConns implements IdleConnector.
func (Natsio) NewIdleConns(_ context.Context, cfg Config) (Runner, error) {
	return &natsioIdle{url: cfg.URL}, nil
}

func (p *natsioIdle) Run(n int) error {
	for i := range n {
		ctx, cancel := deadline()
		nc, err := natsioConnect(ctx, p.url, "bench-idle")
		if err == nil {
			p.conns = append(p.conns, nc)
			err = nc.Flush(ctx)
		}
		cancel()
		if err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
	}
	return nil
}

func (p *natsioIdle) Close() error {
	var errs []error
	for _, nc := range p.conns {
		errs = append(errs, nc.Close())
	}
	return errors.Join(errs...)
}

// --- many subscriptions on one connection ---

type natsioManySubs struct {
	pub, subc *conn.Conn
	subs      []*conn.Subscription
	subjects  []string
	data      []byte
	cnt       *counter
	next      int
}

// NewManySubs implements ManySubscriber.
func (Natsio) NewManySubs(ctx context.Context, cfg Config) (Runner, error) {
	if err := checkSubs(cfg.Subs); err != nil {
		return nil, err
	}
	p := &natsioManySubs{subjects: subSubjects(cfg.Subject, cfg.Subs), data: Payload(cfg.Size), cnt: newCounter(cfg.Size)}
	limits := conn.PendingLimits(max(cfg.MaxMsgs, conn.DefaultPendingMsgs), 1<<40)
	var err error
	if p.subc, err = natsioConnect(ctx, cfg.URL, "bench-subs", limits); err != nil {
		return nil, err
	}
	if p.pub, err = natsioConnect(ctx, cfg.URL, "bench-pub"); err != nil {
		p.subc.Close()
		return nil, err
	}
	handler := func(m *conn.Msg) { p.cnt.add(len(m.Data)) }
	for _, s := range p.subjects {
		sub, err := p.subc.SubscribeFunc(s, handler)
		if err != nil {
			p.Close()
			return nil, err
		}
		p.subs = append(p.subs, sub)
	}
	if err := natsioFlush(p.subc); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func (p *natsioManySubs) dropped() int64 {
	var d uint64
	for _, s := range p.subs {
		d += s.Dropped()
	}
	return int64(d)
}

func (p *natsioManySubs) Run(n int) error {
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

func (p *natsioManySubs) Close() error {
	var err error
	if p.pub != nil {
		err = p.pub.Close()
	}
	return errors.Join(err, p.subc.Close())
}

// --- many connections in one process ---

type natsioManyConns struct {
	conns    []*conn.Conn
	subs     []*conn.Subscription
	subjects []string
	data     []byte
	cnt      *counter
}

// NewManyConns implements ManyConnector.
func (Natsio) NewManyConns(ctx context.Context, cfg Config) (Runner, error) {
	if err := checkSubs(cfg.Conns); err != nil {
		return nil, err
	}
	p := &natsioManyConns{subjects: subSubjects(cfg.Subject, cfg.Conns), data: Payload(cfg.Size), cnt: newCounter(cfg.Size)}
	limits := conn.PendingLimits(max(cfg.MaxMsgs, conn.DefaultPendingMsgs), 1<<40)
	handler := func(m *conn.Msg) { p.cnt.add(len(m.Data)) }
	for _, s := range p.subjects {
		nc, err := natsioConnect(ctx, cfg.URL, "bench-conns", limits)
		if err != nil {
			p.Close()
			return nil, err
		}
		p.conns = append(p.conns, nc)
		sub, err := nc.SubscribeFunc(s, handler)
		if err == nil {
			err = natsioFlush(nc)
		}
		if err != nil {
			p.Close()
			return nil, err
		}
		p.subs = append(p.subs, sub)
	}
	return p, nil
}

func (p *natsioManyConns) dropped() int64 {
	var d uint64
	for _, s := range p.subs {
		d += s.Dropped()
	}
	return int64(d)
}

func (p *natsioManyConns) Run(n int) error {
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

func (p *natsioManyConns) Close() error {
	var errs []error
	for _, nc := range p.conns {
		errs = append(errs, nc.Close())
	}
	return errors.Join(errs...)
}

// --- requests in flight ---

type natsioInFlight struct {
	natsioReq
	inFlight int
}

// NewInFlight implements InFlighter.
func (Natsio) NewInFlight(ctx context.Context, cfg Config) (Runner, error) {
	lr, err := Natsio{}.NewRequest(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &natsioInFlight{natsioReq: *lr.(*natsioReq), inFlight: cfg.InFlight}, nil
}

func (r *natsioInFlight) Run(n int) error {
	return runInFlight(n, r.inFlight, func() error {
		m, err := r.req.Request(context.Background(), r.subject, r.data)
		if err != nil {
			return err
		}
		if len(m.Data) != len(r.data) {
			return fmt.Errorf("reply of %d bytes, want %d", len(m.Data), len(r.data))
		}
		return nil
	})
}
