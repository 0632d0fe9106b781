package natsotel

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/pubwin"
)

// durationBuckets are the conventions' advised histogram buckets, in
// seconds.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

func (i *Instrumentation) initMetrics() error {
	var err, e error
	i.opDuration, e = i.meter.Float64Histogram("messaging.client.operation.duration",
		metric.WithUnit("s"), metric.WithDescription("Duration of a publish, request or JetStream publish, until queued or answered."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	err = errors.Join(err, e)
	i.processDuration, e = i.meter.Float64Histogram("messaging.process.duration",
		metric.WithUnit("s"), metric.WithDescription("Duration of a SubscribeFunc or Consume handler."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	err = errors.Join(err, e)
	i.settled, e = i.meter.Int64Counter("nats.client.settled.messages",
		metric.WithUnit("{message}"), metric.WithDescription("Acknowledgements sent, by messaging.operation.name (ack, nak, term, in_progress)."))
	err = errors.Join(err, e)
	pending, e := i.meter.Int64ObservableGauge("nats.consumer.pending",
		metric.WithUnit("{message}"), metric.WithDescription("Messages left in the stream for a consumer, as of the last message it delivered."))
	err = errors.Join(err, e)
	if err != nil {
		return err
	}
	_, err = i.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		i.pending.observe(func(stream, consumer string, n uint64) {
			o.ObserveInt64(pending, int64(n), metric.WithAttributes(systemNATS,
				attrStream.String(stream), semconv.MessagingConsumerGroupName(consumer)))
		})
		return nil
	}, pending)
	return err
}

// consumerPending holds each consumer's pending count as of its last
// delivered message.
type consumerPending struct {
	mu sync.Mutex
	n  map[[2]string]uint64
}

func (p *consumerPending) set(stream, consumer string, n uint64) {
	p.mu.Lock()
	if p.n == nil {
		p.n = make(map[[2]string]uint64)
	}
	k := [2]string{stream, consumer}
	if _, ok := p.n[k]; !ok {
		k = [2]string{clip(stream), clip(consumer)} // views of the message
	}
	p.n[k] = n
	p.mu.Unlock()
}

func (p *consumerPending) observe(f func(stream, consumer string, n uint64)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, n := range p.n {
		f(k[0], k[1], n)
	}
}

// ObserveConn reports nc's counters (conn.Stats) as observable metrics,
// read when the metrics are collected, until the returned function is
// called:
//
//   - messaging.client.sent.messages and messaging.client.consumed.messages
//     (Stats.OutMsgs and InMsgs: every message, protocol traffic such as
//     acknowledgements and pull requests included);
//   - nats.client.sent.bytes and nats.client.received.bytes (OutBytes,
//     InBytes);
//   - nats.client.reconnects (Reconnects);
//   - nats.client.messages.dropped (Dropped: slow-consumer drops);
//   - nats.client.requests.pending (RequestsPending).
//
// Each carries messaging.system and the connection's name (ServerInfo's
// client ID as messaging.client.id).
func (i *Instrumentation) ObserveConn(nc *conn.Conn) (stop func() error, err error) {
	m := i.meter
	var e error
	counter := func(name, unit, desc string) metric.Int64ObservableCounter {
		c, ce := m.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		e = errors.Join(e, ce)
		return c
	}
	sent := counter("messaging.client.sent.messages", "{message}", "Messages sent by the connection.")
	consumed := counter("messaging.client.consumed.messages", "{message}", "Messages received by the connection.")
	sentBytes := counter("nats.client.sent.bytes", "By", "Bytes of messages sent (headers and data).")
	recvBytes := counter("nats.client.received.bytes", "By", "Bytes of messages received (headers and data).")
	reconnects := counter("nats.client.reconnects", "{reconnect}", "Reconnections.")
	dropped := counter("nats.client.messages.dropped", "{message}", "Messages dropped by full subscription queues (slow consumers).")
	pending, ge := m.Int64ObservableGauge("nats.client.requests.pending", metric.WithUnit("{request}"),
		metric.WithDescription("Requests waiting for their response."))
	if e = errors.Join(e, ge); e != nil {
		return nil, e
	}
	id := nc.ServerInfo().ClientID
	base := []attribute.KeyValue{systemNATS, semconv.MessagingClientID(uintString(id))}
	sendAttrs := metric.WithAttributes(append(base[:2:2], semconv.MessagingOperationName("send"))...)
	recvAttrs := metric.WithAttributes(append(base[:2:2], semconv.MessagingOperationName("receive"))...)
	plain := metric.WithAttributes(base...)
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s := nc.Stats()
		o.ObserveInt64(sent, int64(s.OutMsgs), sendAttrs)
		o.ObserveInt64(consumed, int64(s.InMsgs), recvAttrs)
		o.ObserveInt64(sentBytes, int64(s.OutBytes), plain)
		o.ObserveInt64(recvBytes, int64(s.InBytes), plain)
		o.ObserveInt64(reconnects, int64(s.Reconnects), plain)
		o.ObserveInt64(dropped, int64(s.Dropped), plain)
		o.ObserveInt64(pending, int64(s.RequestsPending), plain)
		return nil
	}, sent, consumed, sentBytes, recvBytes, reconnects, dropped, pending)
	if err != nil {
		return nil, err
	}
	return reg.Unregister, nil
}

// ObserveWindow reports w's counters (pubwin.Stats) as observable
// metrics until the returned function is called:
// nats.pubwin.pending (futures awaiting their outcome) and
// nats.pubwin.futures (futures ended, by outcome: acked, failed,
// timed_out, lost). name tells windows apart (nats.pubwin.name).
func (i *Instrumentation) ObserveWindow(w *pubwin.Window, name string) (stop func() error, err error) {
	m := i.meter
	pending, e1 := m.Int64ObservableGauge("nats.pubwin.pending", metric.WithUnit("{message}"),
		metric.WithDescription("Asynchronous JetStream publishes awaiting their acknowledgement."))
	futures, e2 := m.Int64ObservableCounter("nats.pubwin.futures", metric.WithUnit("{message}"),
		metric.WithDescription("Asynchronous JetStream publishes ended, by outcome."))
	if err := errors.Join(e1, e2); err != nil {
		return nil, err
	}
	wn := attribute.String("nats.pubwin.name", name)
	outcome := func(s string) metric.MeasurementOption {
		return metric.WithAttributes(systemNATS, wn, attribute.String("nats.pubwin.outcome", s))
	}
	acked, failed, timedOut, lost := outcome("acked"), outcome("failed"), outcome("timed_out"), outcome("lost")
	plain := metric.WithAttributes(systemNATS, wn)
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s := w.Stats()
		o.ObserveInt64(pending, int64(s.Pending), plain)
		o.ObserveInt64(futures, int64(s.Acked), acked)
		o.ObserveInt64(futures, int64(s.Failed), failed)
		o.ObserveInt64(futures, int64(s.TimedOut), timedOut)
		o.ObserveInt64(futures, int64(s.Lost), lost)
		return nil
	}, pending, futures)
	if err != nil {
		return nil, err
	}
	return reg.Unregister, nil
}
