// Package ordered reads a stream in order with an ordered consumer: an
// ephemeral, unacknowledged, memory-stored, single-replica consumer that the
// client recreates on its own whenever delivery could have skipped or
// repeated a message.
//
//	oc := ordered.New(js, "ORDERS", ordered.Options{FilterSubjects: []string{"orders.eu.>"}})
//	for m, err := range oc.Messages(ctx, ordered.UntilDrained()) {
//		if err != nil { return err }
//		apply(m)
//	}
//
// # Guarantees
//
// Messages yields stream sequences in increasing order with no gap and no
// duplicate (within the filter). The consumer is recreated at the next
// unseen stream sequence when a consumer sequence is not the one expected
// (a gap), when heartbeats stop, when the consumer disappears (server
// restart, deletion, inactivity), and after a reconnect that lost it;
// recreation backs off while it fails and the old consumer is deleted. A
// deleted stream is terminal (jsapi.ErrStreamNotFound).
//
// # Ending
//
// By default Messages runs until its context ends. UntilDrained ends it,
// with no error, as soon as the consumer has delivered everything the stream
// held — exactly, from each message's pending count, without waiting for a
// timer; an empty stream yields nothing. IdleTimeout ends it with
// ErrNoMessages when no message arrives for that long. A later Messages
// call on the same Consumer resumes after the last message yielded.
//
// # Ownership
//
// Messages yielded belong to the caller, unless Options.Borrowed asks for
// them to be lent: each is then valid only until the loop body it was
// yielded to returns, and a message the loop read itself costs no copy and
// no allocation (see pull.Borrowed).
package ordered
