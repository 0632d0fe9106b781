package surface

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/micro"
	"github.com/natsio/natsio/natstest"
	"github.com/natsio/natsio/pubwin"
	"github.com/natsio/natsio/pull"
	"github.com/natsio/natsio/sysapi"
)

// TestZeroOptionRejected: the zero value of every option type (a value
// no constructor makes) is rejected like a bad value, with an error
// matching conn.ErrInvalidOption, and nothing is sent for it.
func TestZeroOptionRejected(t *testing.T) {
	s := natstest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	nc := s.Connect(t)
	js, err := jsapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.CreateStream(ctx, jsapi.StreamConfig{Name: "Z", Subjects: []string{"z.>"}, Storage: jsapi.StorageMemory})
	if err != nil {
		t.Fatal(err)
	}
	info, err := js.CreateOrUpdateConsumer(ctx, "Z", jsapi.ConsumerConfig{Durable: "z", AckPolicy: jsapi.AckExplicit})
	if err != nil {
		t.Fatal(err)
	}
	c, err := pull.FromInfo(js, info)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := micro.AddService(nc, micro.Config{Name: "zero", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = svc.Stop(ctx) }()
	sys, err := sysapi.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	handler := micro.HandlerFunc(func(micro.Request) {})
	first := func(seq func(func(*conn.Msg, error) bool)) error {
		for _, err := range seq {
			return err
		}
		return nil
	}
	out := nc.Stats().OutMsgs

	calls := map[string]func() error{
		"conn.Option": func() error { _, err := conn.Connect(ctx, s.URL(), conn.Option{}); return err },
		"conn.SubOpt": func() error { _, err := nc.SubscribeFunc("z.sub", func(*conn.Msg) {}, conn.SubOpt{}); return err },
		"conn.RequestManyOpt": func() error {
			return first(nc.RequestMany(ctx, "z.many", nil, nil, conn.RequestManyOpt{}))
		},
		"conn.TraceOpt":       func() error { _, err := nc.Trace(ctx, "z.trace", nil, nil, conn.TraceOpt{}); return err },
		"jsapi.Option":        func() error { _, err := jsapi.New(nc, jsapi.Option{}); return err },
		"jsapi.PubOpt":        func() error { _, err := js.Publish(ctx, "z.a", nil, jsapi.PubOpt{}); return err },
		"jsapi.PurgeOpt":      func() error { _, err := st.Purge(ctx, jsapi.PurgeOpt{}); return err },
		"jsapi.StreamInfoOpt": func() error { _, err := st.Info(ctx, jsapi.StreamInfoOpt{}); return err },
		"pull.Opt": func() error {
			for _, err := range c.Messages(ctx, pull.Opt{}) {
				return err
			}
			return nil
		},
		"pull.FetchOpt":     func() error { _, err := c.Fetch(ctx, 1, pull.FetchOpt{}); return err },
		"extra.AtomicOpt":   func() error { _, err := extra.NewBatchPublisher(js, extra.AtomicOpt{}); return err },
		"extra.FastOpt":     func() error { _, err := extra.NewFastPublisher(js, extra.FastOpt{}); return err },
		"pubwin.Option":     func() error { _, err := pubwin.New(js, pubwin.Option{}); return err },
		"micro.EndpointOpt": func() error { return svc.AddEndpoint("e1", handler, micro.EndpointOpt{}) },
		"micro.GroupOpt":    func() error { return svc.AddGroup("g", micro.GroupOpt{}).AddEndpoint("e2", handler) },
		"micro.DiscoverOpt": func() error { _, err := micro.Ping(ctx, nc, "zero", micro.DiscoverOpt{}); return err },
		"sysapi.Option":     func() error { _, err := sysapi.New(nc, sysapi.Option{}); return err },
		"sysapi.PingOpt":    func() error { _, err := sys.Ping(ctx, sysapi.PingOpt{}); return err },
		"natstest.Option":   func() error { _, err := natstest.Start(natstest.Option{}); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, conn.ErrInvalidOption) {
			t.Errorf("the zero %s: %v, want an error matching conn.ErrInvalidOption", name, err)
		}
	}
	if err := nc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// The flush's PING is no message; the micro service's own
	// subscriptions publish nothing unasked.
	if sent := nc.Stats().OutMsgs - out; sent != 0 {
		t.Errorf("%d messages sent for zero options", sent)
	}
}
