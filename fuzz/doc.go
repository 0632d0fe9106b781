// Package fuzz holds the go test -fuzz targets of the protocol package
// (github.com/natsio/natsio/proto), of jsapi's decoder of $JS.ACK reply
// subjects, of the Direct Get reply decoder, and of what a connection
// (package conn) does with hostile server input. It has no code of its
// own: everything is in the _test.go files and the seed corpus under
// testdata/fuzz/. Targets of parsers a package keeps unexported live in
// that package's tests (listed at the end).
//
// Targets:
//
//   - FuzzParserSplits feeds each input to proto.Parser whole, split in two
//     at every byte boundary (inputs up to 2 KiB), one byte at a time and in
//     irregular chunks (with empty chunks in between), on the server side
//     and with ClientOps set, each with small and with tiny Limits, and
//     requires the same ops, the same error kind and the same final state
//     every time. It also checks the Op and Error contracts: every error is
//     a *proto.Error matching exactly one sentinel, the parser recovers
//     after an error, a chunk Next has consumed may be overwritten at once,
//     Owned memory stays untouched, Body is Header and Payload in place.
//   - FuzzParserDifferential compares proto.Parser with refParse, a small
//     reference parser written with plain string functions from the grammar
//     in proto's documentation, on both sides.
//   - FuzzEncodeRoundTrip encodes fuzzed subjects, queues, headers and
//     payloads with the Append* encoders, checks every rejection against
//     the validators (and dst unchanged), and parses every accepted frame
//     back, whole and byte by byte.
//   - FuzzReceivedHeader reads arbitrary bytes as a received proto.Header,
//     compares ValidateHeaderBlock, Status and the fields with a reference,
//     checks modified, cloned, JSON-encoded and forwarded headers against
//     the fields read, and round-trips valid blocks through
//     AppendHeaderBlock.
//   - FuzzAckSubject compares jsapi.ParseAckSubject (its word-at-a-time
//     path for the layouts servers send and its general one) with refAck,
//     a reference written with strings.Split and strconv.
//   - FuzzDirectGet feeds any header block the connection would deliver
//     to the Direct Get reply decoder (internal/directget's Reply.Parse:
//     status, server fields, the final run of them) and compares it with a
//     reference: the server's fields are those it appends after the stored
//     header, and a stored field of the same name is not read as the
//     server's.
//   - FuzzAsyncInfo sends each input as an INFO, then a PING, to a live
//     connection with a scripted fake server (internal/fakeserver): an
//     INFO that decodes with an allowed max_payload is applied and the
//     PING answered; any other drops the connection (a protocol error)
//     and the client reconnects. Gossiped URLs go through the pool.
//   - FuzzStatusReply answers a request on a live connection with an HMSG
//     of fuzzed header block and payload, then a plain reply: a valid
//     block is delivered (503 without payload as ErrNoResponders) with the
//     status refStatus reads; an invalid one is dropped and counted.
//
// In their own packages, with the reference readers of internal/fuzzref:
//
//   - jsapi's FuzzDirectGet, extra's FuzzBatchGet and kv's FuzzKVDirect
//     feed the seeds of FuzzDirectGet to the three readers built on the
//     decoder (a stream's Direct Get, one reply of a batch get, a key's
//     fields): the stored header comes back field for field, and a
//     stored field never makes the read fail.
//   - objstore's FuzzObjectMeta decodes any bytes as an object's stored
//     meta, as GetInfo, List and Watch do: exactly the meta naming that
//     object, that store and a plain 22-character NUID is accepted, its
//     chunk subject is a literal subject of the store, and refused meta is
//     ErrBadObjectMeta.
//   - conn's FuzzTraceReport decodes message tracing reports (identity,
//     gzip, snappy, s2, corrupt streams) as Trace does, against a
//     reference, bounds included.
//
// Run one target at a time:
//
//	$ go test ./fuzz -run=^$ -fuzz=FuzzParserSplits -fuzztime=30s
//	$ go test ./fuzz -run=^$ -fuzz=FuzzParserDifferential -fuzztime=30s
//	$ go test ./fuzz -run=^$ -fuzz=FuzzEncodeRoundTrip -fuzztime=30s
//	$ go test ./fuzz -run=^$ -fuzz=FuzzReceivedHeader -fuzztime=30s
//	$ go test ./fuzz -run=^$ -fuzz=FuzzAckSubject -fuzztime=30s
//	$ go test ./fuzz -run=^$ -fuzz=FuzzDirectGet -fuzztime=30s
//	$ go test ./fuzz -run=^$ -fuzz=FuzzAsyncInfo -fuzztime=30s
//	$ go test ./fuzz -run=^$ -fuzz=FuzzStatusReply -fuzztime=30s
//	$ go test ./objstore -run=^$ -fuzz=FuzzObjectMeta -fuzztime=30s
//	$ go test ./conn -run=^$ -fuzz=FuzzTraceReport -fuzztime=30s
//
// (make fuzz runs every target of the module.)//
// Plain go test ./fuzz runs every target once over its seed corpus. This
// package's seeds (captures of what nats-server 2.15 sends, and malformed frames) are
// listed in seeds_test.go and written to testdata/fuzz/<Target>/seed-* by
//
//	$ go test ./fuzz -run=TestSeedCorpus -update-corpus
//
// TestSeedCorpus fails when the files and the list disagree. A crasher that
// go test -fuzz writes to testdata/fuzz/<Target>/ is an ordinary corpus file:
// keep it (after fixing the bug) as a regression test.
//
// Open proto issues the targets found are worked around, each in one marked
// place, and reproduced by TestKnownBugs; go test ./fuzz -known-bugs drops
// the workarounds and runs it (see known_bugs_test.go).
package fuzz
