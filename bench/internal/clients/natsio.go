package clients

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/natsio/natsio/conn"
)

// Natsio runs the scenarios with this repository's client.
type Natsio struct{}

// Name implements Client.
func (Natsio) Name() string { return "natsio" }

func natsioConnect(ctx context.Context, url, name string, opts ...conn.Option) (*conn.Conn, error) {
	opts = append([]conn.Option{conn.Name(name)}, opts...)
	return conn.Connect(ctx, url, opts...)
}

func natsioFlush(nc *conn.Conn) error {
	ctx, cancel := deadline()
	defer cancel()
	return nc.Flush(ctx)
}

// --- publish ---

type natsioPub struct {
	nc      *conn.Conn
	subject string
	data    []byte
}

// NewPublish implements Publisher.
func (Natsio) NewPublish(ctx context.Context, cfg Config) (Runner, error) {
	nc, err := natsioConnect(ctx, cfg.URL, "bench-pub")
	if err != nil {
		return nil, err
	}
	return &natsioPub{nc: nc, subject: cfg.Subject, data: Payload(cfg.Size)}, nil
}

func (p *natsioPub) Run(n int) error {
	for range n {
		if err := p.nc.Publish(p.subject, p.data); err != nil {
			return err
		}
	}
	return natsioFlush(p.nc)
}

func (p *natsioPub) Close() error { return p.nc.Close() }

// --- pub/sub ---

type natsioPubSub struct {
	pub, subc *conn.Conn
	sub       *conn.Subscription
	subject   string
	data      []byte
	cnt       *counter
	async     errAsync
	iterDone  chan struct{}
	cancel    context.CancelFunc
}

// NewPubSub implements PubSuber.
func (Natsio) NewPubSub(ctx context.Context, cfg Config) (Runner, error) {
	limits := conn.PendingLimits(max(cfg.MaxMsgs, conn.DefaultPendingMsgs), 1<<40)
	p := &natsioPubSub{subject: cfg.Subject, data: Payload(cfg.Size), cnt: newCounter(cfg.Size)}
	var err error
	if p.subc, err = natsioConnect(ctx, cfg.URL, "bench-sub", limits); err != nil {
		return nil, err
	}
	p.pub = p.subc
	if !cfg.SameConn {
		if p.pub, err = natsioConnect(ctx, cfg.URL, "bench-pub"); err != nil {
			p.subc.Close()
			return nil, err
		}
	}
	switch cfg.Mode {
	case Callback:
		p.sub, err = p.subc.SubscribeFunc(cfg.Subject, func(m *conn.Msg) { p.cnt.add(len(m.Data)) })
	case Borrowed:
		p.sub, err = p.subc.SubscribeFunc(cfg.Subject, func(m *conn.Msg) { p.cnt.add(len(m.Data)) }, conn.Borrowed())
	case Iter, Next:
		p.sub, err = p.subc.Subscribe(cfg.Subject)
		if err == nil {
			var ictx context.Context
			ictx, p.cancel = context.WithCancel(context.Background())
			p.iterDone = make(chan struct{})
			go p.consume(ictx, cfg.Mode)
		}
	default:
		err = fmt.Errorf("unknown mode %q", cfg.Mode)
	}
	if err == nil {
		err = natsioFlush(p.subc)
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func (p *natsioPubSub) consume(ctx context.Context, mode Mode) {
	defer close(p.iterDone)
	if mode == Iter {
		for m, err := range p.sub.Messages(ctx) {
			if err != nil {
				if ctx.Err() == nil {
					p.async.set(err)
				}
				return
			}
			p.cnt.add(len(m.Data))
		}
		return
	}
	for {
		m, err := p.sub.NextMsg(ctx)
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, conn.ErrBadSubscription) {
				p.async.set(err)
			}
			return
		}
		p.cnt.add(len(m.Data))
	}
}

func (p *natsioPubSub) Run(n int) error {
	target := p.cnt.expect(n)
	for range n {
		if err := p.pub.Publish(p.subject, p.data); err != nil {
			return err
		}
	}
	if err := p.cnt.wait(target, func() int64 { return int64(p.sub.Dropped()) }); err != nil {
		return errors.Join(err, p.async.get())
	}
	if err := p.async.get(); err != nil {
		return err
	}
	return p.cnt.checkExact(target)
}

func (p *natsioPubSub) Close() error {
	if p.cancel != nil {
		p.cancel()
	}
	var err error
	if p.pub != nil && p.pub != p.subc {
		err = p.pub.Close()
	}
	if p.subc != nil {
		err = errors.Join(err, p.subc.Close())
	}
	if p.iterDone != nil {
		<-p.iterDone
	}
	return err
}

// --- request/reply ---

type natsioReq struct {
	req, resp *conn.Conn
	subject   string
	data      []byte
	withCtx   bool
}

// NewRequest implements Requester.
func (Natsio) NewRequest(ctx context.Context, cfg Config) (LatencyRunner, error) {
	r := &natsioReq{subject: cfg.Subject, data: Payload(cfg.Size), withCtx: cfg.Mode == Ctx}
	var err error
	if r.resp, err = natsioConnect(ctx, cfg.URL, "bench-responder"); err != nil {
		return nil, err
	}
	reply := Payload(cfg.Size)
	if _, err = r.resp.SubscribeFunc(cfg.Subject, func(m *conn.Msg) { _ = m.Respond(reply) }); err == nil {
		err = natsioFlush(r.resp)
	}
	if err == nil {
		r.req, err = natsioConnect(ctx, cfg.URL, "bench-requester")
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *natsioReq) Run(lat []time.Duration) error {
	if len(lat) == 0 {
		return errShortLatency
	}
	ctx := context.Background()
	if r.withCtx {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Hour)
		defer cancel()
	}
	for i := range lat {
		t0 := time.Now()
		m, err := r.req.Request(ctx, r.subject, r.data)
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

func (r *natsioReq) Close() error {
	var err error
	if r.req != nil {
		err = r.req.Close()
	}
	if r.resp != nil {
		err = errors.Join(err, r.resp.Close())
	}
	return err
}
