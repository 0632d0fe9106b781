package natsotel

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

// systemNATS is messaging.system for NATS (not in the conventions'
// enumeration, which allows other values).
var systemNATS = semconv.MessagingSystemKey.String("nats")

// Operation types (messaging.operation.type).
var (
	opSend    = attribute.String("messaging.operation.type", "send")
	opReceive = attribute.String("messaging.operation.type", "receive")
	opProcess = attribute.String("messaging.operation.type", "process")
	opSettle  = attribute.String("messaging.operation.type", "settle")
)

// Publish implements conn.Observer: a send span for a publish, request or
// response, whose context goes into the message's header.
func (i *Instrumentation) Publish(ctx context.Context, p *conn.Pub) func(*conn.Msg, error) {
	op, name := "publish", "publish "+p.Subject
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, systemNATS, opSend)
	parent := ctx
	switch p.Kind {
	case conn.PubRequest:
		op, name = "request", "request "+p.Subject
	case conn.PubRespond:
		// The reply subject is an inbox: no low-cardinality destination.
		op, name = "respond", "respond"
		attrs = append(attrs, semconv.MessagingDestinationTemporary(true))
		if p.Request != nil {
			parent = i.Context(ctx, p.Request)
		}
	}
	if p.Kind != conn.PubRespond && !trace.SpanContextFromContext(ctx).IsValid() && p.Header != nil {
		// A trace context already in the header (Inject, or a message
		// passed on) is the parent of a publish that has no context.
		parent = i.extractHeader(ctx, p.Header)
	}
	attrs = append(attrs, semconv.MessagingOperationName(op),
		semconv.MessagingDestinationName(p.Subject),
		semconv.MessagingMessageBodySize(p.Size))
	if id := msgID(p.Header); id != "" {
		attrs = append(attrs, semconv.MessagingMessageID(id))
	}
	sctx, span := i.tracer.Start(parent, name, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(attrs...))
	p.Header = i.inject(sctx, span, p.Header)
	start := time.Now()
	return func(resp *conn.Msg, err error) {
		i.endSpan(span, err)
		i.recordOp(start, op, err)
	}
}

// inject writes sctx's trace context (and, for a sampled span with
// WithServerTracing, Nats-Trace-Dest) into h, made when nil.
func (i *Instrumentation) inject(sctx context.Context, span trace.Span, h *proto.Header) *proto.Header {
	if h == nil {
		h = new(proto.Header)
	}
	i.prop.Inject(sctx, headerCarrier{h})
	if i.traceDest != "" && span.SpanContext().IsSampled() {
		h.Set(conn.HeaderTraceDest, i.traceDest)
	}
	return h
}

// Receive implements conn.Observer: a receive span, linked to the
// producer's.
func (i *Instrumentation) Receive(m *conn.Msg) {
	pctx := i.Extract(context.Background(), m)
	attrs := coreAttrs(m, opReceive, "receive")
	_, span := i.tracer.Start(context.Background(), "receive "+template(m), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithLinks(trace.LinkFromContext(pctx)), trace.WithAttributes(attrs...))
	span.End()
}

// Process implements conn.Observer: a process span around a handler,
// linked to the producer's span and its child (a root with
// WithIncomingAsLink).
func (i *Instrumentation) Process(m *conn.Msg) func() {
	pctx := i.Extract(context.Background(), m)
	attrs := coreAttrs(m, opProcess, "process")
	ctx, span := i.tracer.Start(i.processParent(pctx), "process "+template(m), trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithLinks(trace.LinkFromContext(pctx)), trace.WithAttributes(attrs...))
	return i.handle(ctx, span, m, "process")
}

// handle records m as handled in ctx until the returned function ends
// span and records the handler's duration.
func (i *Instrumentation) handle(ctx context.Context, span trace.Span, m *conn.Msg, op string) func() {
	i.handling.Store(m, ctx)
	start := time.Now()
	return func() {
		i.handling.Delete(m)
		span.End()
		i.processDuration.Record(context.Background(), time.Since(start).Seconds(), opSets[op])
	}
}

// coreAttrs are the attributes of a span for a delivered message. Its
// strings are copied: a borrowed message's are views of memory the
// connection reuses, and a span outlives the handler.
func coreAttrs(m *conn.Msg, typ attribute.KeyValue, op string) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, systemNATS, typ, semconv.MessagingOperationName(op),
		semconv.MessagingDestinationName(clip(m.Subject)),
		semconv.MessagingMessageBodySize(len(m.Data)))
	if s := m.Sub(); s != nil {
		if s.Subject != m.Subject {
			attrs = append(attrs, semconv.MessagingDestinationTemplate(clip(s.Subject)))
		}
		if s.Queue != "" {
			attrs = append(attrs, semconv.MessagingConsumerGroupName(clip(s.Queue)))
		}
	}
	if id := m.Header.Get(jsapi.HeaderMsgID); id != "" {
		attrs = append(attrs, semconv.MessagingMessageID(clip(id)))
	}
	return attrs
}

// template is the destination in a delivered message's span name: its
// subscription's subject (a wildcard subject is a template), clipped.
func template(m *conn.Msg) string {
	if s := m.Sub(); s != nil && !strings.HasPrefix(s.Subject, "_INBOX.") {
		return clip(s.Subject)
	}
	return clip(m.Subject)
}

// msgID is the Nats-Msg-Id of h, "" for none, clipped: a message passed
// on carries its publisher's header.
func msgID(h *proto.Header) string {
	if h == nil {
		return ""
	}
	return clip(h.Get(jsapi.HeaderMsgID))
}

// endSpan ends span, recording err when not nil.
func (i *Instrumentation) endSpan(span trace.Span, err error) {
	if err != nil {
		span.SetAttributes(semconv.ErrorTypeKey.String(ErrorType(err)))
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// opSets are the attributes of a successful operation's measurements,
// made once (an attribute set costs a sort and an allocation).
var opSets = map[string]metric.MeasurementOption{}

func init() {
	for _, op := range []string{"publish", "request", "respond", "process"} {
		opSets[op] = metric.WithAttributeSet(attribute.NewSet(systemNATS, semconv.MessagingOperationName(op)))
	}
}

// recordOp records an operation's duration.
func (i *Instrumentation) recordOp(start time.Time, op string, err error) {
	d := time.Since(start).Seconds()
	if o, ok := opSets[op]; ok && err == nil {
		i.opDuration.Record(context.Background(), d, o)
		return
	}
	attrs := []attribute.KeyValue{systemNATS, semconv.MessagingOperationName(op)}
	if err != nil {
		attrs = append(attrs, semconv.ErrorTypeKey.String(ErrorType(err)))
	}
	i.opDuration.Record(context.Background(), d, metric.WithAttributes(attrs...))
}
