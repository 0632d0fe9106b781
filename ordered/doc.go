// Package ordered reads a stream in order with an ordered consumer: an
// ephemeral, unacknowledged, memory-stored, single-replica consumer that the
// client recreates on its own whenever delivery could have skipped or
// repeated a message.
//
//	oc, err := ordered.New(ctx, js, "ORDERS", ordered.Config{FilterSubjects: []string{"orders.eu.>"}})
//	if err != nil { return err } // jsapi.ErrStreamNotFound, …
//	for m, err := range oc.Messages(ctx, ordered.UntilDrained()) {
//		if err != nil { return err }
//		use(m.Subject, m.Data)
//	}
//
// # Configuration and options
//
// Config is what defines the consumer at the server: filter subjects,
// where to start (DeliverPolicy, OptStartSeq, OptStartTime), headers only,
// replay policy, inactive threshold, name prefix. New checks it and
// creates the first server-side consumer, which the first read uses, so
// that a missing stream or a refused configuration fails New. How the
// consumer is read are the options of Messages and Consume: MaxMessages,
// Heartbeat, ReadAhead, Borrowed, IdleTimeout, UntilDrained, OnReset,
// OnSkip.
// Invalid options fail the read before any request (conn.ErrInvalidOption).
//
// # Two forms of one read
//
// Messages is an iterator; Consume runs a handler on each message, one at
// a time and in order, on a goroutine of its own, and returns a
// *pull.ConsumeContext (one type for both packages): Stop ends it at
// once, Drain once the messages already
// received have been handled, Closed tells when the handler has returned
// for the last time and every goroutine has ended, and Err then reports
// the terminal error, or nil after Stop, Drain or the end of the context.
// Reads of one Consumer run one at a time (ErrBusy otherwise), and each
// resumes after the last message the previous one handed over.
//
// # Guarantees
//
// A read yields stream sequences in increasing order with no gap and no
// duplicate (within the filter). The consumer is recreated at the next
// unseen stream sequence when a consumer sequence is not the one expected
// (a gap), when heartbeats stop, when the consumer disappears (server
// restart, deletion by another client, inactivity), and after a reconnect
// that lost it; recreation backs off while it fails and the old consumer
// is deleted. A deleted stream is terminal (jsapi.ErrStreamNotFound).
//
// The consumer reads through pulls whose reply subject any client allowed
// to subscribe to $JS.API.CONSUMER.MSG.NEXT can learn and publish to. A
// message there that the server did not deliver — not a status, and its
// reply not a readable $JS.ACK subject — is skipped, counted by Skipped
// and given to OnSkip; the read goes on, and a gap it might hide is caught
// by the next message's consumer sequence. A forged message whose reply is
// a well-formed $JS.ACK subject cannot be told from a real delivery: it is
// taken for one (yielded, or a gap that recreates the consumer after the
// stream sequence it names). Per-user inbox prefixes (conn.InboxPrefix)
// with subscribe permissions keep other users off the pull inboxes.
//
// A read deletes its server-side consumer when it ends, so between reads
// there is none. Info reports the current one; Delete deletes it and ends
// the Consumer: a running read ends with ErrConsumerDeleted, and every later one
// fails with it.
//
// # Ending
//
// By default a read runs until its context ends. UntilDrained ends it,
// with no error, the moment it is caught up: when a delivery reports that
// nothing more is pending (the server's per-delivery count, no timer), or
// at once when nothing is pending as the read starts. Messages stored
// while the read runs, before that delivery, are yielded too; an empty
// stream yields nothing. IdleTimeout ends it with ErrNoMessages (the same
// value as pull.ErrNoMessages) when no message arrives for that long.
//
// # Ownership
//
// Messages handed over belong to the caller. The opt-in Borrowed option
// lends them instead: Borrowed lends each message instead of handing over
// a copy: the message and every string and slice in it (Subject, Reply,
// Header, Data, Metadata) are valid only until the loop body or handler it
// was given to returns. Acknowledge it there, and copy (strings.Clone,
// bytes.Clone) anything kept longer. A borrowed message costs no copy and
// no allocation.
package ordered
