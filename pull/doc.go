// Package pull reads messages from JetStream pull consumers (the ADR-37
// API): Fetch for one batch, Next for one message, and Messages, a
// self-refilling iterator for long-running workers.
//
//	c, err := pull.CreateOrUpdate(ctx, js, "ORDERS", jsapi.ConsumerConfig{Durable: "worker", AckPolicy: jsapi.AckExplicit})
//	for m, err := range c.Messages(ctx) {
//		if err != nil { return err }     // terminal: consumer or stream deleted, connection closed, ctx done
//		handle(m.Data)
//		m.Ack()
//	}
//
// # Liveness and healing
//
// Messages keeps up to MaxMessages (or MaxBytes) requested, pulls more when
// half has been consumed, and asks the server for idle heartbeats. It heals
// without ending: after a reconnect, a leader change, a 408 or 409 status,
// or two missed heartbeats it re-pulls; the non-terminal condition is
// reported to the OnError option. It ends with a typed error only for what
// cannot heal: ErrConsumerDeleted, jsapi.ErrStreamNotFound, a 400 Bad
// Request, conn.ErrClosed, or the context.
//
// The pulls of one Messages call share a reply subject until a reset
// forgets them; the pulls after it reply to a new one, so a status for a
// forgotten pull never changes the accounting of new ones. A Fetch whose
// pull is over leaves its subscription to the next Fetch of the Consumer.
//
// # Priority groups
//
// On a consumer with a priority policy every pull must name one of its
// groups (Group); on a plain consumer naming a group is an error. Both are
// checked before any request is sent. For pinned_client consumers the pin id
// the server stamps on messages (Nats-Pin-Id) is replayed on later pulls;
// a 423 status clears it and pulling continues.
//
// # Ownership
//
// Messages yielded belong to the caller; they are carved from slabs, so
// consuming allocates far less than once per message. The opt-in Borrowed
// option lends them instead: each is valid only until the loop body it was
// yielded to returns, and then costs no copy and no allocation.
package pull
