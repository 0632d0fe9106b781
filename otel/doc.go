// Package natsotel instruments natsio connections with OpenTelemetry:
// trace context carried in message headers, spans that follow the
// OpenTelemetry semantic conventions for messaging, and metrics.
//
// It is its own module (github.com/natsio/natsio/otel), so that natsio
// itself depends on no OpenTelemetry package. It is built on natsio's
// observer hooks: an *Instrumentation is a conn.Observer and a
// jsapi.Observer, installed once per connection with conn.Observe:
//
//	inst, err := natsotel.New(natsotel.WithTracerProvider(tp), natsotel.WithMeterProvider(mp))
//	nc, err := conn.Connect(ctx, url, conn.Observe(inst))
//	stop, err := inst.ObserveConn(nc) // the connection's counters as metrics
//
// # Propagation
//
// A publish, a request, a response and a JetStream publish (jsapi, pubwin,
// kv) carry the W3C traceparent and tracestate of their span, and the
// baggage of their context, in the message's header (W3C Trace Context
// and Baggage, unless WithPropagator says otherwise). Core Publish and PublishMsg take no context: their span
// starts a trace of its own unless the header given already carries a
// traceparent (Inject puts one there), of which it is then a child. A
// request's and a JetStream publish's span is a child of their ctx's.
//
// On the receiving side, a SubscribeFunc or Consume handler runs inside a
// process span that is a child of the producer's span and links to it;
// Context returns that span's context for the handler's own spans. A
// message taken from an iterator, NextMsg, Fetch or Next gets a receive
// span that links to the producer's span and starts a trace of its own,
// as the conventions ask for messages consumed asynchronously; Extract
// gives the producer's context from the message's header.
//
// That default lets whoever publishes decide, through the sampled flag of
// its traceparent, that the handler spans it causes are sampled (a
// parent-based sampler follows the parent), and put its baggage in the
// handler's context. Where publishers are not trusted (another tenant of
// the account), WithIncomingAsLink makes each handler's process span a new
// root that links to the producer's span, sampled by the sampler alone,
// without the message's baggage.
//
// # Spans
//
// messaging.system is "nats". Span names are "{operation} {destination}":
// the subject published to, the subscription's subject (a wildcard is a
// destination template) or, for JetStream consumers, the stream. Each span
// has messaging.operation.type (send, receive, process, settle) and
// messaging.operation.name (publish, request, respond, receive, process,
// ack, nak, term, in_progress), messaging.destination.name, and
// messaging.message.body.size; messaging.message.id is the Nats-Msg-Id
// header when there is one. Every value taken from a message (subject,
// subscription subject and queue, Nats-Msg-Id, stream, consumer) is cut to
// MaxAttributeLength bytes, in attributes and span names alike: the SDK
// sets no attribute length limit by default. JetStream spans add the stream, the consumer
// (messaging.consumer.group.name too), the stream and consumer sequences
// and the delivery count (messaging.nats.* attributes). A failed operation has
// error.type, the natsio error it matched (ErrorType), and the error as
// an event.
//
// # Metrics
//
// ObserveConn reports the connection's Stats as observable counters:
// messages and bytes sent and received, reconnects and slow-consumer
// drops; nothing is counted twice. The hooks record the durations of
// publishes, requests and JetStream publishes
// (messaging.client.operation.duration) and of handlers
// (messaging.process.duration), acknowledgements sent
// (nats.client.settled.messages) and each consumer's pending count as of
// its last message (nats.consumer.pending). ObserveWindow reports a
// pubwin.Window's pending futures and outcomes.
//
// # Server message tracing
//
// WithServerTracing adds the Nats-Trace-Dest header (ADR-41, nats-server
// 2.11+) to every published message whose span is sampled, so that each
// server the message passes through reports what it did with it to that
// subject; conn.Conn.Trace collects such reports for one message of its
// own. See docs/observability.md.
package natsotel
