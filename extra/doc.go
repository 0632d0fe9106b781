// Package extra holds the JetStream extensions the official Go client
// lacks, built on jsapi and conn. It holds exactly:
//
//   - the atomic batch publisher, BatchPublisher (NewBatchPublisher), and
//     PublishBatch / PublishBatchSeq, which publish a slice or an iterator
//     of messages as one all-or-nothing batch (server 2.12+, stream with
//     AllowAtomicPublish);
//   - GetBatch and GetLastMsgsFor, batch direct gets that fetch many stored
//     messages with one request (server 2.11+, stream with AllowDirect);
//   - the fast-ingest publisher, FastPublisher (NewFastPublisher), which
//     stores a non-atomic batch at high rate under server flow control
//     (server 2.14+, stream with AllowBatchPublish).
//
// # Atomic batches
//
//	order, payment := []byte(`{"id":"o-1"}`), []byte(`{"paid":true}`)
//	b, err := extra.NewBatchPublisher(js, extra.AckEvery(100))
//	err = b.Add(ctx, "orders.created", order)
//	err = b.Add(ctx, "orders.paid", payment)
//	ack, err := b.Commit(ctx, "orders.done", nil) // all three stored, or none
//
// At most MaxAtomicBatch (1000, the server's default limit) messages, or
// MaxBatchSize for a server configured higher; the end-of-batch marker of
// CommitEOB does not count. Custom headers are kept and the
// Nats-Batch-* headers are the publisher's. Message IDs are allowed but must
// be unique within the batch; Nats-Expected-Last-Msg-Id is refused and
// Nats-Expected-Last-Sequence is allowed on the first message only. All of
// it is checked before anything is sent, and such a validation failure
// leaves the publisher usable; a failure after I/O began closes it, and
// the server then stores nothing.
//
// # Batch direct get
//
//	for m, err := range extra.GetBatch(ctx, js, "ORDERS", 100, extra.StartSeq(42)) {
//		if err != nil {
//			return err
//		}
//		use(m.Sequence, m.Data)
//	}
//
// Both calls return single-use iterators of *jsapi.StoredMsg, the type
// jsapi's Stream.GetMsg returns, with NumPending and LastSequence set; they
// end at the server's end-of-batch marker, and an error ends the
// iteration.
//
// # Fast ingest
//
//	events, last := [][]byte{[]byte("e1"), []byte("e2")}, []byte("e3")
//	p, err := extra.NewFastPublisher(js, extra.Flow(200))
//	for _, e := range events {
//		if _, err := p.Add(ctx, "events.in", e); err != nil {
//			return err
//		}
//	}
//	ack, err := p.Commit(ctx, "events.in", last) // or p.Close(ctx): end without a message
//
// Every Add is stored at once; the server acknowledges every Flow
// messages, and Add waits when MaxOutstandingAcks intervals are
// unacknowledged. Lost flow acknowledgements are recovered with pings.
//
// # Errors
//
// Server errors are *jsapi.APIError values matched with the jsapi
// sentinels (jsapi.ErrAtomicDisabled, jsapi.ErrBatchUnknownID, …).
// Client-side failures match this package's sentinels (ErrBatchClosed,
// ErrBatchTooLarge, ErrEmptyBatch, ErrNoMessages, ErrGap, …); fast-batch
// reports are *GapError and *FastAPIError, direct get statuses
// *jsapi.StatusError. A reply that cannot be understood matches
// jsapi.ErrBadResponse. Local checks that mirror a server error match both
// the local sentinel and the server's (a 1001st message matches
// ErrBatchTooLarge and jsapi.ErrAtomicTooLarge).
//
// No call leaves a goroutine behind: publishers and iterators work on the
// caller's goroutine and remove their subscriptions when they end.
package extra
