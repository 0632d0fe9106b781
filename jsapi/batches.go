package jsapi

import (
	"github.com/natsio/natsio/conn"
)

// Batches is a subscription that delivers JetStream consumer messages in
// batches, each one built straight into a Msg carved from arrays the
// subscription owns: no allocation and no copy per message beyond the
// connection's own. It is the delivery under a pull consumer (package
// pull), for a layer that sends its own pull requests to the subscription's
// subject; conn.Batches has the contract of Next and Subscription.
type Batches = conn.Batches[Msg]

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
	return conn.SubscribeBatchesOf(nc, subject, lent, newMsgSlab(nc, hint, lazyAcks).shell)
}
