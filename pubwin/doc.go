// Package pubwin is an asynchronous JetStream publish window: many
// publishes in flight, each acknowledged by its stream later, with a bound
// on how many acks may be outstanding.
//
//	w, err := pubwin.New(js, pubwin.MaxPending(1000))
//	if err != nil {
//		return err
//	}
//	defer w.Close()
//	orders := [][]byte{[]byte(`{"id":1}`), []byte(`{"id":2}`)}
//	for i, o := range orders {
//		f, err := w.Publish(ctx, "orders.new", o, jsapi.MsgID("o-"+strconv.Itoa(i)))
//		if err != nil {
//			return err // no free slot within StallWait, an invalid option…
//		}
//		use(f) // f.Wait(ctx) for this one's PubAck
//	}
//	err = w.Complete(ctx) // nil: every publish acknowledged
//
// # Options
//
// New takes options, each with its default: MaxPending (4000), StallWait
// (200 ms), AckTimeout (5 s) and RetryOnNoResponders (off). An invalid
// value fails New with an error matching conn.ErrInvalidOption.
//
// # Bounds and failure
//
// At most MaxPending publishes wait for their acks. When the window is
// full, Publish waits up to StallWait (and its context) for a slot, then
// fails with ErrTooManyStalled. Every future ends: with its PubAck, the
// stream's *jsapi.APIError, ErrAckTimeout after AckTimeout, ErrAckLost at
// once when the connection is lost, or ErrClosed when the window is
// closed, freeing its slot. A future's outcome is recorded, and counted in
// Stats, before its slot is freed and before Wait or Complete wake, so
// when Complete returns, the futures and Stats agree.
//
// # Complete
//
// Complete waits until no publish is pending and reports on the publishes
// that ended since the previous Complete: nil when all were acknowledged,
// otherwise a *CompleteError such as "pubwin: 3 of 300 publishes failed:
// 2 × pubwin: timed out waiting for ack; 1 × jsapi: wrong last sequence:
// 7 (code 400, err_code 10071)". errors.Is and errors.As match each of its
// causes; it keeps at most 16 distinct causes, counting the rest. Wait on
// the futures themselves to know which publishes failed.
//
// # Retries on 503 and 429
//
// A reply saying that no stream is listening (a 503 no-responders status:
// a leader election, a stream not created yet) or that the stream is
// pushing back (429, jsapi.ErrTooManyRequests) means the message was not
// stored. With RetryOnNoResponders the window then sends the very same
// message again (subject, headers with its Nats-Msg-Id, data) after a
// doubling wait; RetryOnNoResponders(2, 250*time.Millisecond) retries as
// jsapi.Publish does. Retries are off by default, since the copy each
// pending message then needs costs client CPU. The future stays pending,
// holding its slot, and ends with the PubAck of the attempt that was
// stored or with the last reply's error. Close and a disconnect end a
// waiting retry like any pending publish. The connection's reader never
// waits: a timer sends the retry.
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
