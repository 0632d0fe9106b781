// Package directget reads the header block of a Direct Get reply. It is
// the one decoder behind jsapi's Stream.GetMsg, GetLastMsgForSubject and
// GetNextMsgForSubject, kv's Bucket.Get and GetRevision, and extra's
// GetBatch and GetLastMsgsFor.
//
// # The reply
//
// The server answers a Direct Get with the stored message: its data as the
// payload, and the header block it was stored with, to which the server
// appends fields of its own:
//
//	block := "NATS/1.0\r\n" +
//		"X-Own: 1\r\n" + // stored with the message
//		"Nats-Stream: ORDERS\r\n" + // appended by the server
//		"Nats-Subject: orders.1\r\n" +
//		"Nats-Sequence: 42\r\n" +
//		"Nats-Time-Stamp: 2026-11-30T16:41:35.147175708Z\r\n" +
//		"Nats-Num-Pending: 7\r\n" + // batch requests only
//		"Nats-Last-Sequence: 41\r\n" + // batch requests only
//		"\r\n"
//
// A reply without a message has a status in its first line instead
// ("NATS/1.0 404 Message Not Found"): 404 (no such message), 408 (a request
// the server finds bad), 204 (the end of a batch, whose fields say what
// remains), 413, 503 and so on.
//
// Reply.Parse reads the status line and every field of the block in one
// pass. The fields the server appends are known by a Key.
//
// # Fields named like the server's
//
// Any client may publish a message with fields named like the server's, so
// the stored header may hold Nats-Subject, Nats-Sequence and the like. The
// server's fields come after the stored ones, and Reply offers two ways to
// tell them apart:
//
//   - Single, and Reply.Last: the server's field of a key is the last field
//     of that key in the block. This is how one-message reads (jsapi, kv)
//     read their replies; the stored header is the block without the last
//     Nats-Stream, Nats-Subject, Nats-Sequence and Nats-Time-Stamp fields.
//   - Batch, and Reply.InTail: the server's fields are the final run of
//     fields whose keys are the six server keys, the last of each key
//     within it. This is how the batch reads of package extra read theirs;
//     the stored header is the block before that run.
//
// Both read the server's values from every reply a server sends to the
// request it was made for. Their stored headers differ only for a message
// whose own header ends with fields named like the server's: Batch
// cannot tell those from the server's and removes them too.
//
// # Memory and lifetimes
//
// Parse allocates nothing: the strings of a Reply are views of the block it
// was given, valid as long as the block is and while nothing rewrites it.
// Single and Batch rewrite the block in place to hand back the stored
// header as a view of it (two bytes, at the start of the first server
// field line; no value a Reply returns is touched): the block must belong
// to the caller, as a reply the connection delivered does, and neither may
// be called twice on one Reply. Single copies the stored header, once,
// only when a stored field follows one of the server's fields, which no
// server sends.
//
// # Failures
//
// The blocks a connection delivers have passed proto.ValidateHeaderBlock;
// Parse expects no more than that, and on any other bytes it reads the
// fields up to the first malformed line, as proto.Header.All does, and
// never panics. Single and Batch fail with ErrNoHeader for a reply without
// a header block and with an *Error for a missing or unreadable server
// field; the callers wrap both in their package's bad-response error
// (jsapi.ErrBadResponse). A status reply is the caller's to handle, from
// Reply.Status, before it calls Single or Batch.
package directget
