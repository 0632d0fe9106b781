package conn

import (
	"context"
	"fmt"
	"time"

	"github.com/natsio/natsio/proto"
)

// The low-level API: what a layer built on a connection needs beyond the
// calls an application makes (the JetStream packages use it, and so can a
// client of another protocol on NATS). Each call is a direct method: its
// arguments escape only where its documentation says so.

// WriteMode says when the bytes of a PublishUnobserved message are
// written.
type WriteMode uint8

const (
	// WriteQueued queues the message and wakes the connection's flusher,
	// as Publish does.
	WriteQueued WriteMode = iota
	// WriteNow is for a message someone waits on, sent once in a while (a
	// pull request, a request of one's own protocol): when no write is in
	// progress the calling goroutine writes it at once, with whatever else
	// is queued, instead of handing it to the flusher. Not for loops of
	// publishes: each call may make a system call of its own, where
	// WriteQueued coalesces.
	WriteNow
	// WriteLazy is for small fire-and-forget messages that may wait a
	// moment for company, such as a consumer's acknowledgements: the
	// message goes out with the connection's next write (a publish, a
	// request, a Flush), once 64 KiB are queued, or a millisecond after the
	// first lazy message at the latest. Use it only where that delay is
	// harmless: a server that waits for this very message (an
	// acknowledgement under a small MaxAckPending) waits for it too.
	WriteLazy
)

// PublishUnobserved is PublishMsg that is not reported to the connection's
// Observer, written as w says: for a layer's protocol traffic
// (acknowledgements, pull requests), and for publishes the layer reports to
// an observer of its own. It fails like PublishMsg, and with
// ErrInvalidOption for an unknown w, before anything is queued. It
// allocates nothing, and its arguments are copied before it returns.
func (nc *Conn) PublishUnobserved(subject, reply string, h *proto.Header, data []byte, w WriteMode) error {
	if w > WriteLazy {
		return fmt.Errorf("%w: write mode %d", ErrInvalidOption, w)
	}
	return nc.publish(subject, reply, h, data, pubMode(w))
}

// The write modes are the publish modes.
var _ = [1]struct{}{}[pubMode(WriteQueued)-pubNormal+pubMode(WriteNow)-pubUrgent+pubMode(WriteLazy)-pubLazy]

// RequestUnobserved is RequestMsg that is not reported to the connection's
// Observer: for a layer's protocol requests, and for requests it reports
// to an observer of its own. It fails, ends and returns like RequestMsg.
func (nc *Conn) RequestUnobserved(ctx context.Context, subject string, h *proto.Header, data []byte) (*Msg, error) {
	return nc.requestMsg(ctx, subject, h, data)
}

// Observer returns the Observer installed with Observe, nil for none. A
// layer built on the connection reports its own operations to it (the
// JetStream packages look for a jsapi.Observer in it).
func (nc *Conn) Observer() Observer { return nc.opts.observer }

// RequestTimeout returns the default request timeout (the
// RequestTimeout option): the bound RequestMsg gives a ctx without a
// deadline.
func (nc *Conn) RequestTimeout() time.Duration { return nc.opts.requestTimeout }

// JetStreamLevel returns the JetStream API level of the server the
// connection is on, kept up to date as the server's INFO arrives and read
// without a lock: its api_lvl (servers from 2.12 on), else 1 for a 2.11
// server and 0 for an older one; -1 when the server's version cannot be
// read; -2 when the server does not run JetStream itself (its JetStream
// requests are served elsewhere, as through a leaf node). Before the first
// connection completes it is 0.
func (nc *Conn) JetStreamLevel() int { return int(nc.jsLevel.Load()) }

// ReuseReply lets the reply subject of the request m answered serve a
// later request of this connection, saving the allocation of a new one.
// Call it only where the protocol guarantees a single reply (a JetStream
// API or publish reply), never for a core request, which any number of
// subscribers may answer: a late second reply would be taken as the
// answer to the later request.
//
// m must be a response just returned by Request or RequestMsg (or
// RequestUnobserved) of this connection, and ReuseReply called once for
// it, before the next request. A message of another connection, one that
// is not a response, or a subject still in use is ignored; a stale
// response whose subject has since served a request that ended without
// its reply would put that subject back into use.
func (nc *Conn) ReuseReply(m *Msg) { nc.reuseReply(m) }

// SubscribeBatches is Subscribe for a consumer that reads its messages in
// batches with NextBatch. With lent, the messages are lent: their fields
// are views of memory the subscription recycles, valid only until the
// next NextBatch call, and a steady loop allocates nothing per message;
// without, they are the receiver's. SubscribeBatchesOf delivers them in a
// struct of the caller's instead. The subscription has Subscribe's
// pending limits. It fails like Subscribe.
func (nc *Conn) SubscribeBatches(subject string, lent bool) (*Subscription, error) {
	return nc.register(subject, "", nil, deliverQueue, nil, nil, nil, lent)
}

// NextBatch waits until at least one message is queued, then returns every
// queued message (at most the queue's limit), in order, in a slice the
// caller owns until its next call. buf is handed to the subscription to
// hold later messages: pass the previous result (or nil) and do not use it
// afterwards. A done ctx ends it with ctx's error (matching ErrTimeout at
// its deadline), messages queued or not; at the end of the subscription
// it returns ErrBadSubscription (or the close error), and while Messages
// or a handler consumes the subscription ErrSubscriptionActive. For a
// lent subscription (SubscribeBatches with lent) the messages of the
// previous call are over when it is called. It allocates nothing once buf
// has grown to the batch size.
func (s *Subscription) NextBatch(ctx context.Context, buf []*Msg) ([]*Msg, error) {
	return s.nextBatch(ctx, buf)
}

// SubscribeInlineUnsafe calls f for each message on the goroutine that
// reads the connection, before the next message is read: no queue, no
// goroutine, no copy. It is the unsafe fast path for small, non-blocking
// bookkeeping (matching acknowledgements to pending publishes, answering
// a ping): the message and everything in it is a view of the read buffer,
// valid only until f returns, so f must copy what it keeps. f must not
// block and must not call methods of the connection that wait (Request,
// Flush, Drain, Close): a blocked f stalls the whole connection.
// Publishing from f is fine. The subscription has no pending limits and
// cannot be read with Messages, NextMsg or NextBatch. A nil f is
// ErrInvalidOption.
func (nc *Conn) SubscribeInlineUnsafe(subject string, f func(*Msg)) (*Subscription, error) {
	if f == nil {
		return nil, invalid("nil handler")
	}
	return nc.register(subject, "", nil, deliverView, f, nil, nil, false)
}
