package natsotel

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

// JetStream attributes (messaging.nats.*: the conventions' place for a
// system's own attributes).
const (
	attrStream        = attribute.Key("messaging.nats.stream.name")
	attrConsumer      = attribute.Key("messaging.nats.consumer.name")
	attrStreamSeq     = attribute.Key("messaging.nats.stream.sequence")
	attrConsumerSeq   = attribute.Key("messaging.nats.consumer.sequence")
	attrDeliveryCount = attribute.Key("messaging.nats.message.delivery_count")
	attrDuplicate     = attribute.Key("messaging.nats.message.duplicate")
)

// PublishJS implements jsapi.Observer: a send span for a JetStream publish
// that ends with the stream's acknowledgement.
func (i *Instrumentation) PublishJS(ctx context.Context, p *conn.Pub) func(*jsapi.PubAck, error) {
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, systemNATS, opSend, semconv.MessagingOperationName("publish"),
		semconv.MessagingDestinationName(p.Subject), semconv.MessagingMessageBodySize(p.Size))
	if id := msgID(p.Header); id != "" {
		attrs = append(attrs, semconv.MessagingMessageID(id))
	}
	parent := ctx
	if !trace.SpanContextFromContext(ctx).IsValid() && p.Header != nil {
		parent = i.extractHeader(ctx, p.Header)
	}
	sctx, span := i.tracer.Start(parent, "publish "+p.Subject, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(attrs...))
	p.Header = i.inject(sctx, span, p.Header)
	start := time.Now()
	return func(ack *jsapi.PubAck, err error) {
		if ack != nil {
			span.SetAttributes(attrStream.String(ack.Stream), attrStreamSeq.Int64(int64(ack.Sequence)))
			if ack.Duplicate {
				span.SetAttributes(attrDuplicate.Bool(true))
			}
		}
		i.endSpan(span, err)
		i.recordOp(start, "publish", err)
	}
}

// jsAttrs are the attributes of a span for a consumer's message. Its
// strings are copied: a borrowed message's are views of memory the
// connection reuses, and a span outlives the handler.
func jsAttrs(m *jsapi.Msg, md jsapi.Metadata, typ attribute.KeyValue, op string) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 12)
	attrs = append(attrs, systemNATS, typ, semconv.MessagingOperationName(op),
		semconv.MessagingDestinationName(clip(m.Subject)),
		semconv.MessagingMessageBodySize(len(m.Data)))
	if md.Stream != "" {
		consumer := clip(md.Consumer)
		attrs = append(attrs, attrStream.String(clip(md.Stream)), attrConsumer.String(consumer),
			semconv.MessagingConsumerGroupName(consumer),
			attrStreamSeq.Int64(int64(md.StreamSeq)), attrConsumerSeq.Int64(int64(md.ConsumerSeq)),
			attrDeliveryCount.Int64(int64(md.NumDelivered)))
	}
	if id := m.Header.Get(jsapi.HeaderMsgID); id != "" {
		attrs = append(attrs, semconv.MessagingMessageID(clip(id)))
	}
	return attrs
}

// streamOf is the destination of a consumer's span names: the stream, or
// the subject when the metadata cannot be read.
func streamOf(m *jsapi.Msg, md jsapi.Metadata) string {
	if md.Stream != "" {
		return clip(md.Stream)
	}
	return clip(m.Subject)
}

// ReceiveJS implements jsapi.Observer: a receive span, linked to the
// producer's, and the consumer's pending count.
func (i *Instrumentation) ReceiveJS(m *jsapi.Msg) {
	md, _ := m.Metadata()
	if md.Stream != "" {
		i.pending.set(md.Stream, md.Consumer, md.NumPending)
	}
	pctx := i.Extract(context.Background(), &m.Msg)
	_, span := i.tracer.Start(context.Background(), "receive "+streamOf(m, md), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithLinks(trace.LinkFromContext(pctx)), trace.WithAttributes(jsAttrs(m, md, opReceive, "receive")...))
	span.End()
}

// ProcessJS implements jsapi.Observer: a process span around a Consume
// handler, linked to the producer's span and its child (a root with
// WithIncomingAsLink).
func (i *Instrumentation) ProcessJS(m *jsapi.Msg) func() {
	md, _ := m.Metadata()
	pctx := i.Extract(context.Background(), &m.Msg)
	ctx, span := i.tracer.Start(i.processParent(pctx), "process "+streamOf(m, md), trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithLinks(trace.LinkFromContext(pctx)), trace.WithAttributes(jsAttrs(m, md, opProcess, "process")...))
	return i.handle(ctx, span, &m.Msg, "process")
}

// SettleJS implements jsapi.Observer: a settle span, a child of the
// message's process span while its handler runs, else linked to the
// producer's span.
func (i *Instrumentation) SettleJS(m *jsapi.Msg, op string, err error) {
	md, _ := m.Metadata()
	parent := context.Background()
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(jsAttrs(m, md, opSettle, op)...)}
	if c, ok := i.handling.Load(&m.Msg); ok {
		parent = c.(context.Context)
	} else {
		opts = append(opts, trace.WithLinks(trace.LinkFromContext(i.Extract(parent, &m.Msg))))
	}
	_, span := i.tracer.Start(parent, op+" "+streamOf(m, md), opts...)
	i.endSpan(span, err)
	attrs := []attribute.KeyValue{systemNATS, semconv.MessagingOperationName(op)}
	if err != nil {
		attrs = append(attrs, semconv.ErrorTypeKey.String(ErrorType(err)))
	}
	i.settled.Add(context.Background(), 1, metric.WithAttributes(attrs...))
}
