// Package pubwin is an asynchronous JetStream publish window: many
// publishes in flight, each acknowledged by its stream later, with a bound
// on how many acks may be outstanding.
//
//	w, err := pubwin.New(js, pubwin.Options{})
//	defer w.Close()
//	for _, o := range orders {
//		f, err := w.Publish(ctx, "orders.new", o, jsapi.MsgID(o.ID))
//		…
//	}
//	err = w.Complete(ctx) // every publish acknowledged (or failed)
//
// # Bounds and failure
//
// At most MaxPending publishes wait for their acks (default 4000). When the
// window is full, Publish waits up to StallWait (default 200 ms, and its
// context) for a slot, then fails with ErrTooManyStalled. Every future ends:
// with its PubAck, the stream's *jsapi.APIError, ErrAckTimeout after
// AckTimeout (default 5 s), or — when the connection is lost or closed —
// ErrAckLost at once, freeing its slot.
//
// # Retries on 503 and 429
//
// A reply saying that no stream is listening (a 503 no-responders status:
// a leader election, a stream not created yet) or that the stream is
// pushing back (429, jsapi.ErrTooManyRequests) means the message was not
// stored. The window then sends the very same message again (subject,
// headers with its Nats-Msg-Id, data) after a doubling wait, as
// Options.Retry says (off by default, since the copy each pending message
// then needs costs about a fifth more client CPU; DefaultRetry retries as
// jsapi.Publish does, twice from 250 ms). The future stays pending, holding its slot,
// and ends with the PubAck of the attempt that was stored or with the last
// reply's error. Close and a disconnect end a waiting retry like any
// pending publish. The connection's reader never waits: a timer sends the
// retry.
//
// # Retrying safely
//
// A future that fails with ErrAckLost or ErrAckTimeout does not say whether
// the stream stored the message. Publish each logical message with a
// jsapi.MsgID and retry a failed one with the same ID: within the stream's
// duplicate window the stream stores it once and acks the retry with
// Duplicate set and the original sequence.
//
// # Cost
//
// All publishes share one inbox subscription; acks are decoded without
// reflection. A publish allocates its Future and nothing else; with
// retries on, the message is also copied into a pooled buffer, kept until
// its future ends.
package pubwin
