package natsotel

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

// ScopeName is the instrumentation scope of the tracer and meter.
const ScopeName = "github.com/natsio/natsio/otel"

// Instrumentation is a conn.Observer and a jsapi.Observer that makes spans
// and metrics. Install it on each connection with conn.Observe; one value
// may serve many connections. It is safe for concurrent use.
type Instrumentation struct {
	tracer    trace.Tracer
	prop      propagation.TextMapPropagator
	meter     metric.Meter
	traceDest string
	// linkOnly: a delivered message's trace context is a link of the
	// handler's span, not its parent (WithIncomingAsLink).
	linkOnly bool

	opDuration, processDuration metric.Float64Histogram
	settled                     metric.Int64Counter

	// handling holds the context of each message whose handler runs now
	// (Context), keyed by its *conn.Msg.
	handling sync.Map

	pending consumerPending
}

var (
	_ conn.Observer  = (*Instrumentation)(nil)
	_ jsapi.Observer = (*Instrumentation)(nil)
)

// Option configures New.
type Option struct{ f func(*config) error }

// apply applies o to c; the zero Option is invalid.
func (o Option) apply(c *config) error {
	if o.f == nil {
		return fmt.Errorf("%w: zero Option", conn.ErrInvalidOption)
	}
	return o.f(c)
}

type config struct {
	tp        trace.TracerProvider
	mp        metric.MeterProvider
	prop      propagation.TextMapPropagator
	traceDest string
	linkOnly  bool
}

// WithTracerProvider sets the tracer provider (default: the global one,
// otel.GetTracerProvider, read when New runs).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return Option{func(c *config) error {
		if tp == nil {
			return fmt.Errorf("%w: natsotel: nil TracerProvider", conn.ErrInvalidOption)
		}
		c.tp = tp
		return nil
	}}
}

// WithMeterProvider sets the meter provider (default: the global one).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return Option{func(c *config) error {
		if mp == nil {
			return fmt.Errorf("%w: natsotel: nil MeterProvider", conn.ErrInvalidOption)
		}
		c.mp = mp
		return nil
	}}
}

// WithPropagator sets the propagator that writes and reads trace context
// in message headers (default: W3C Trace Context and Baggage; pass
// otel.GetTextMapPropagator() to use the global one).
func WithPropagator(p propagation.TextMapPropagator) Option {
	return Option{func(c *config) error {
		if p == nil {
			return fmt.Errorf("%w: natsotel: nil propagator", conn.ErrInvalidOption)
		}
		c.prop = p
		return nil
	}}
}

// WithServerTracing asks the servers to trace every published message
// whose span is sampled (ADR-41, nats-server 2.11 and later): the message
// gets the header Nats-Trace-Dest: dest, and each server it passes through
// publishes a report of what it did with it to dest (decode one with
// conn.TraceEvent). The message is still delivered. Servers before 2.11
// ignore the header. dest must be a valid subject without wildcards.
func WithServerTracing(dest string) Option {
	return Option{func(c *config) error {
		if err := validSubject(dest); err != nil {
			return err
		}
		c.traceDest = dest
		return nil
	}}
}

// WithIncomingAsLink makes the trace context a delivered message carries
// a link of its handler's process span, never its parent: each handler
// (SubscribeFunc, Consume) starts a trace of its own, sampled by the
// tracer provider's sampler alone, and neither the message's sampled flag
// nor its baggage reaches the handler's context (Context).
//
// By default the producer's span is the parent, as the OpenTelemetry
// messaging conventions have it: one trace follows a request across
// services. Its cost where publishers are not trusted (another tenant of
// the account): a publisher decides, through the sampled flag, that every
// handler span it causes is sampled (a parent-based sampler follows it),
// and its baggage reaches the handler's context and any request the
// handler makes. Use this option at such a trust boundary; the producer's
// span is still one click away through the link.
func WithIncomingAsLink() Option {
	return Option{func(c *config) error {
		c.linkOnly = true
		return nil
	}}
}

// New returns an Instrumentation configured by opts.
func New(opts ...Option) (*Instrumentation, error) {
	var c config
	for _, o := range opts {
		if err := o.apply(&c); err != nil {
			return nil, err
		}
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	if c.prop == nil {
		c.prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	i := &Instrumentation{
		tracer:    c.tp.Tracer(ScopeName),
		meter:     c.mp.Meter(ScopeName),
		prop:      c.prop,
		traceDest: c.traceDest,
		linkOnly:  c.linkOnly,
	}
	if err := i.initMetrics(); err != nil {
		return nil, err
	}
	return i, nil
}

// Context returns the context of the process span of m while a
// SubscribeFunc handler (or, for a JetStream message jm, a Consume
// handler: pass &jm.Msg) handles it: start the handler's own spans from
// it. For any other message it returns ctx with the producer's span
// context from m's header as its remote parent (Extract), or, with
// WithIncomingAsLink, ctx unchanged.
func (i *Instrumentation) Context(ctx context.Context, m *conn.Msg) context.Context {
	if c, ok := i.handling.Load(m); ok {
		hc := c.(context.Context)
		ctx = baggage.ContextWithBaggage(ctx, baggage.FromContext(hc))
		return trace.ContextWithSpan(ctx, trace.SpanFromContext(hc))
	}
	if i.linkOnly {
		return ctx
	}
	return i.Extract(ctx, m)
}

// processParent is the parent context of a handler's process span given
// pctx, the producer's context extracted from the message: pctx itself,
// or with WithIncomingAsLink none (the span is a root, linked to pctx).
func (i *Instrumentation) processParent(pctx context.Context) context.Context {
	if i.linkOnly {
		return context.Background()
	}
	return pctx
}
