// Package pull reads messages from JetStream pull consumers (the ADR-37
// API): Fetch for one batch, Next for one message, and two forms of one
// self-refilling loop for long-running workers: Messages, an iterator,
// and Consume, which runs a handler on a goroutine of its own.
//
//	info, err := js.CreateOrUpdateConsumer(ctx, "ORDERS", jsapi.ConsumerConfig{Durable: "worker"})
//	if err != nil { return err }
//	c, err := pull.FromInfo(js, info)
//	if err != nil { return err }
//	for m, err := range c.Messages(ctx) {
//		if err != nil { return err }     // terminal: consumer or stream deleted, connection closed, ctx done
//		use(m.Data)
//		m.Ack()
//	}
//
//	cc, err := c.Consume(ctx, func(m *jsapi.Msg) { use(m.Data); m.Ack() })
//	if err != nil { return err } // invalid options, ctx done, connection closed: nothing started
//	time.Sleep(time.Minute)      // meanwhile the handler runs
//	cc.Drain()                   // or Stop
//	<-cc.Closed()                // the handler has returned for the last time
//	err = cc.Err()               // nil, or the terminal error that ended it
//
// # Handles
//
// jsapi manages consumers: JS.CreateOrUpdateConsumer (or CreateConsumer,
// UpdateConsumer) creates one and JS.Consumer looks one up, each returning a
// jsapi.ConsumerInfo. FromInfo turns that info into a Consumer handle, without
// a request; it is the one way to get one. Info fetches the consumer's state;
// deleting or unpinning it is jsapi's (JS.DeleteConsumer, JS.UnpinConsumer). A consumer configured with a zero AckPolicy acknowledges
// explicitly (see jsapi.ConsumerConfig.AckPolicy): AckNone must be named.
// The info of a push consumer (DeliverSubject) is refused with ErrPushConsumer.
//
// # Waiting and its end
//
// Fetch and Next wait until ctx's deadline, or DefaultFetchWait when ctx
// has none. Fetch returns what arrived with a nil error, an empty batch
// included (a wait that ended with nothing is a normal end). Next, with
// nothing to return, fails: with ErrFetchTimeout at the deadline, which
// matches ErrNoMessages, conn.ErrTimeout and context.DeadlineExceeded, and
// with ErrNoMessages when a NoWait pull finds nothing. A canceled ctx is an
// error matching context.Canceled. Every read looks at its context before
// it takes what is queued, so a deadline ends it while messages keep
// arriving.
//
// # Liveness and healing
//
// Messages and Consume keep up to MaxMessages (or MaxBytes) requested,
// pull more when half has been consumed, and ask the server for idle
// heartbeats. They heal without ending: after a reconnect, a leader
// change, a 408 or 409 status, or two missed heartbeats they pull again,
// and each such condition but an expired pull is reported to the OnError
// option (ErrReconnected, ErrNoHeartbeat, a *jsapi.StatusError…). They end with
// a typed error only for what cannot heal, and only once consumer info
// confirms it (no status on a pull inbox alone ends a read: another client
// that learns the inbox can publish one): ErrConsumerDeleted,
// jsapi.ErrStreamNotFound, ErrPushConsumer, ErrBadPull; or with
// conn.ErrClosed, or the context's error.
//
// Breaking out of Messages and Stop end at once and withdraw the pulls at
// the server before they return (an UNSUB and a round trip), so a message
// published afterwards goes to the next reader; the end of the context
// ends at once without the round trip. Messages already sent and not yet
// handled are left to the server, which redelivers them after AckWait. Drain (and the DrainOn option of
// Messages) ends in order: no more pulls, every message already received is
// still handed over, then the loop ends with no error. No goroutine is left
// behind in any case; a Consume's Closed channel is closed once everything
// has ended.
//
// The pulls of one loop share a reply subject until a reset forgets them;
// the pulls after it reply to a new one, so a status for a forgotten pull
// never changes the accounting of new ones. A Fetch whose pull is over
// leaves its subscription to the next Fetch of the Consumer.
//
// Any client allowed to subscribe to the consumer's
// $JS.API.CONSUMER.MSG.NEXT subject learns those reply subjects and can
// publish to them. A message there that is not a status and whose reply
// is not a readable $JS.ACK subject was not delivered by the server
// (ErrStrayMessage): Fetch and Messages skip it and count it in
// Stats.Skipped, and never end for it. A forged message with a
// well-formed $JS.ACK reply cannot be told from a real one; per-user
// inbox prefixes (conn.InboxPrefix) with permissions keep other users
// off the reply subjects.
//
// # A pool of workers
//
// Workers that share one durable consumer, each reading it with Messages
// or Consume, divide its messages between them: the server hands each
// message to one pull at a time. A message a worker received and did not
// acknowledge — it stopped, crashed or lost its connection — is
// redelivered after AckWait to a worker still reading, so none is lost;
// handlers should be idempotent, since a redelivery can also follow an
// acknowledgement that was lost on its way.
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
// Messages handed over belong to the caller; they are carved from slabs, so
// consuming allocates far less than once per message. The opt-in Borrowed
// option lends them instead: Borrowed lends each message instead of
// handing over a copy: the message and every string and slice in it
// (Subject, Reply, Header, Data, Metadata) are valid only until the loop
// body or handler it was given to returns. Acknowledge it there, and copy
// (strings.Clone, bytes.Clone) anything kept longer. A borrowed message
// costs no copy and no allocation.
package pull
