// Package deadletter moves the messages a JetStream consumer gave up on —
// those that ran out of deliveries (MaxDeliver) and those a client
// terminated (Term) — to dead-letter subjects, where a stream keeps them for
// inspection or replay.
//
// The server announces each such message with an advisory naming its stream
// sequence; the message itself stays in its stream (unless limits or a
// work-queue removal take it). A Mover captures both advisories of a stream's
// consumers in a stream of its own, and for each reads the message and
// publishes it to <prefix>.<stream>.<consumer> with Dead-Letter-* headers
// naming its origin:
//
//	js.CreateOrUpdateStream(ctx, jsapi.StreamConfig{Name: "DLQ", Subjects: []string{"deadletter.>"}})
//	mv, err := deadletter.Start(ctx, js, deadletter.Config{Stream: "ORDERS", Consumer: "billing"})
//	// … consume ORDERS with "billing" (MaxDeliver set) …
//	mv.Stop()
//
// Moving is idempotent and survives restarts: an advisory is acknowledged
// only after its letter's publish was, advisories wait in their stream while
// no Mover runs, and a letter published twice carries the same Nats-Msg-Id,
// which the dead-letter stream's duplicate window drops.
//
// Advisory and ParseAdvisory are the typed advisories, for programs that
// watch them themselves.
package deadletter
