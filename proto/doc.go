// Package proto implements the NATS client protocol on byte slices: a
// zero-copy, incremental parser for the operations a server sends, encoders
// that append the operations a client sends, header blocks, and subject
// validation.
//
// proto has no goroutines, does no I/O and keeps no timers: bytes go in,
// views come out, encoded bytes are appended to a caller's buffer. It imports
// only the standard library, so it can be fuzzed and benchmarked alone.
//
// # Parsing
//
// A [Parser] is fed chunks of a byte stream in whatever sizes they were read
// ([Parser.Feed]) and yields one [Op] at a time ([Parser.Next]). Frames may
// be split anywhere, down to one byte per chunk; the parser keeps only what
// it must between chunks: a control-line scratch buffer, and, for a payload
// that spans chunks, a destination the payload is copied into once.
//
// Lifetimes. The *Op returned by Next, and every slice in it, are valid until
// the next call to Next or Feed. The one exception is a payload that spanned
// chunks: Op.Owned is then true and Op.Header and Op.Payload are memory the
// parser obtained from Parser.Alloc, which from then on belongs to the
// caller.
//
// Limits. Every size the server states is checked before anything is
// allocated for it: control lines (default 4096 bytes, INFO 1 MiB), payload
// sizes (digits only, no overflow, at most Limits.MaxPayload), header sizes
// (hdr_size ≤ total_size, and either 0 or at least "NATS/1.0\r\n\r\n"), and the CRLF that must
// follow each payload. A violation yields a *[Error] matching one of the
// sentinel errors ([ErrControlLine], [ErrSize], [ErrPayloadTooLarge],
// [ErrHeaderSize], [ErrMissingCRLF], [ErrUnknownOp], [ErrArgs]) with
// errors.Is; the parser then resets and discards the rest of the chunk,
// because a byte stream cannot be resynchronised: drop the connection.
//
// # Encoding
//
// AppendPub, AppendHPub, AppendSub, AppendUnsub, AppendConnect, AppendPing and
// AppendPong append one client operation to dst. Every argument is validated
// before any byte is written: on error the returned slice is dst unchanged.
// None of them allocates beyond growing dst.
//
// # Headers
//
// [Header] is the ordered, multi-valued, case-preserving header set, for
// both directions; keys are matched byte for byte, never canonicalised,
// because the server matches them that way. A user builds one for
// publishing (Add, Set, [HeaderOf], [NewHeader]); a received block becomes
// one with [HeaderFromBlock] and is read in place: status code,
// description and lookups without allocation, the strings returned being
// views of the received bytes. [ValidateHeaderBlock] checks a received
// block's structure.
//
// # Server side
//
// The same Parser reads the client's operations when Parser.ClientOps is
// set.
package proto
