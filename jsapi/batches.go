package jsapi

import (
	"context"

	"github.com/natsio/natsio/conn"
)

// Batches is a subscription that delivers JetStream consumer messages in
// batches, each one built straight into a Msg carved from arrays the
// subscription owns: no allocation and no copy per message beyond the
// connection's own. It is the delivery under a pull consumer (package
// pull), for a layer that sends its own pull requests to the subscription's
// subject (conn.Conn.SubscribeBatches has the underlying contract).
//
// Next must not be called from more than one goroutine at once; the
// conn.Subscription returned by Subscription may be used concurrently, as
// any other.
type Batches struct {
	sub  *conn.Subscription
	raw  []*conn.Msg // the connection's batch, handed back to NextBatch
	msgs []*Msg      // the same messages as Msgs
}

// SubscribeBatches subscribes to subject for JetStream messages read with
// Next. hint is about how many messages a batch holds (it sizes the first
// array of Msgs; later ones hold 128). With lazyAcks, the messages'
// acknowledgements (Ack, Nak, Term, InProgress) go out with the
// connection's next write (conn.WriteLazy): for a loop that sends its next
// pull request soon, so that a batch's acknowledgements travel with it.
// With lent, the messages are lent: their fields are valid only until the
// next call of Next, and Next allocates nothing for them; without, they
// are the receiver's. Status messages (a pull's 404, 408, heartbeats)
// arrive as Msgs too, with Status set. It fails like conn.Conn.Subscribe.
func SubscribeBatches(nc *conn.Conn, subject string, hint int, lazyAcks, lent bool) (*Batches, error) {
	s := newMsgSlab(nc, hint, lazyAcks)
	var lend func(*conn.Msg) *conn.Msg
	if lent {
		lend = s.shell
	}
	sub, err := nc.SubscribeBatches(subject, s.alloc, lend)
	if err != nil {
		return nil, err
	}
	return &Batches{sub: sub}, nil
}

// Subscription returns the underlying subscription: for its subject,
// pending limits, Unsubscribe and Drain. Do not read it with NextBatch,
// Messages or NextMsg.
func (b *Batches) Subscription() *conn.Subscription { return b.sub }

// Next waits until at least one message is queued, then returns every
// queued message, in order, in a slice valid until the next call (and
// lent messages with it). A done ctx ends it with ctx's error, messages
// queued or not; at the end of the subscription it returns
// conn.ErrBadSubscription (or the close error). Once its slices have grown
// to the batch size it allocates nothing.
func (b *Batches) Next(ctx context.Context) ([]*Msg, error) {
	// The last batch is done with: drop it before waiting, so that its
	// messages (and the slab arrays they pin) are not kept alive while
	// nothing arrives. NextBatch clears raw the same way.
	clear(b.msgs)
	raw, err := b.sub.NextBatch(ctx, b.raw)
	b.raw = raw
	if err != nil {
		return nil, err
	}
	b.msgs = b.msgs[:0]
	for _, m := range raw {
		b.msgs = append(b.msgs, fromSlab(m))
	}
	return b.msgs, nil
}
