// Package connx is the machinery of package conn that natsio's own layers
// (jsapi, pull, pubwin, kv, extra, micro) and its tests and benchmarks
// use, and that is not part of conn's public API: writes made at once by
// the caller or left for a later write, reply-subject reuse, batch subscriptions (caller-provided message memory, reads of the
// socket by the consumer, lent batches), inline handlers, and the decoder of trace reports.
//
// Each function here is conn's own unexported method, reached through
// internal/connhook; the doc comment of that method in conn states its
// contract. The calls are indirect, so the compiler treats every pointer
// and slice passed to them as escaping: pass memory that is on the heap
// already (a reused buffer, a delivered message), never a caller's stack
// array, or the call allocates.
package connx

import (
	"context"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/connhook"
	"github.com/natsio/natsio/proto"
)

var (
	// PublishNow publishes a message without headers that someone waits
	// on: when no write is in progress the calling goroutine writes it at
	// once instead of waking the connection's flusher. Not for loops of
	// publishes.
	PublishNow = connhook.PublishNow.(func(nc *conn.Conn, subject, reply string, data []byte) error)

	// PublishLazy publishes a small fire-and-forget message (an
	// acknowledgement) with the connection's next write, or within
	// LazyDelay at the latest.
	PublishLazy = connhook.PublishLazy.(func(nc *conn.Conn, subject string, data []byte) error)

	// RequestTimeout is the connection's default request timeout, which
	// RequestMsg applies to a ctx without deadline (conn.RequestTimeout).
	RequestTimeout = connhook.RequestTimeout.(func(nc *conn.Conn) time.Duration)

	// ReuseReply lets the reply subject of the request answered by m serve
	// a later request: only where the protocol guarantees a single reply.
	ReuseReply = connhook.ReuseReply.(func(nc *conn.Conn, m *conn.Msg))

	// SubscribeBatches subscribes a batch consumer (read with NextBatch)
	// with its delivery fixed at once: alloc provides the memory of each
	// delivered Msg, called on the connection's reader goroutine; lend,
	// when not nil, makes the messages lent: each valid until the next
	// NextBatch call, in Msgs lend supplies.
	SubscribeBatches = connhook.SubscribeBatches.(func(nc *conn.Conn, subject string, alloc func() *conn.Msg, lend func(reuse *conn.Msg) *conn.Msg) (*conn.Subscription, error))

	// SubscribeInline calls f on the goroutine that reads the connection,
	// with views of the read buffer valid until f returns; f must not
	// block.
	SubscribeInline = connhook.SubscribeInline.(func(nc *conn.Conn, subject string, f func(*conn.Msg)) (*conn.Subscription, error))

	// NextBatch waits for at least one queued message and returns every
	// queued one, in a slice the caller owns until its next call. A done
	// ctx ends it, messages queued or not.
	NextBatch = connhook.NextBatch.(func(s *conn.Subscription, ctx context.Context, buf []*conn.Msg) ([]*conn.Msg, error))

	// StdSocketIO makes the connection use net.TCPConn's own socket calls
	// instead of the direct path on Linux.
	StdSocketIO = connhook.StdSocketIO.(func() conn.Option)

	// DecodeTrace decodes one message tracing report as Trace does (its
	// Content-Encoding, the per-call bounds of a single report), for the
	// fuzz tests.
	DecodeTrace = connhook.DecodeTrace.(func(m *conn.Msg) (*conn.TraceEvent, error))
)

// LazyDelay is the longest a PublishLazy message waits for a write.
var LazyDelay = connhook.LazyDelay.(time.Duration)

// The Observer (conn.Observe) and the calls that pass it by.
var (
	// Observer returns the connection's Observer, nil for none. The
	// JetStream layers look for a jsapi.Observer in it.
	Observer = connhook.Observer.(func(nc *conn.Conn) conn.Observer)

	// PublishUnobserved is PublishMsg without telling the Observer: for
	// protocol traffic (acknowledgements) and for publishes a layer
	// reports to its own observer.
	PublishUnobserved = connhook.PublishUnobserved.(func(nc *conn.Conn, subject, reply string, h *proto.Header, data []byte) error)

	// RequestUnobserved is RequestMsg without telling the Observer: for
	// API requests and for requests a layer reports to its own observer.
	RequestUnobserved = connhook.RequestUnobserved.(func(nc *conn.Conn, ctx context.Context, subject string, h *proto.Header, data []byte) (*conn.Msg, error))
)

// ServerLevel is the JetStream API level (ADR-44) of the server nc is
// connected to, kept up to date as INFOs arrive and read without a lock:
// INFO's api_lvl (2.12+), else 1 for a 2.11 server and 0 for an older
// one; -1 when the server's version cannot be read; -2 when the server
// does not run JetStream itself (its requests are served elsewhere).
var ServerLevel = connhook.ServerLevel.(func(nc *conn.Conn) int32)
