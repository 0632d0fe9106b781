// Package fakeserver is a scripted NATS server for tests of what a real
// server will not do: stay silent, withhold a PONG, send garbage, claim
// impossible sizes, refuse with a chosen -ERR, gossip malformed URLs.
//
// It is built on package proto only: the bytes a client sends are parsed
// with a strict proto.Parser (ClientOps set), and everything it sends is
// either encoded with proto's server-side encoders or written raw.
//
// # Server and clients
//
// [New] listens on 127.0.0.1 on a kernel-chosen port ([Server.URL],
// [Server.Addr]) and accepts connections in a goroutine. [Serve] does the
// same on any net.Listener, in particular an in-memory
// [github.com/natsio/natsio/internal/memnet.Listener] for tests inside a
// testing/synctest bubble, where every wait of the server is a durable
// block and the fake clock stays exact (the client dials with the
// listener's Dial). Each accepted connection is a [*Client]. Without a handler, clients are queued and the
// test takes them with [Server.Accept]; a connection nobody takes is held
// open and never sent a byte (a silent server). With [WithHandler], the
// handler runs on its own goroutine for every connection instead;
// [Basic] is a handler that completes the handshake and then answers PINGs.
//
// Nothing is sent automatically: a test drives each connection with
// [Client.SendInfo], [Client.SendMsg], [Client.SendHMsg], [Client.SendErr],
// [Client.SendPing], [Client.SendPong] and [Client.Send] (raw bytes).
// [Client.SendTo] routes a message as a server would: to the client's
// subscription (from the SUBs and UNSUBs it sent) that matches the
// subject. [Responder] is a handler for scripted request/reply services: it
// routes the answer to each request to the subscription its reply subject
// reaches (a JetStream API, a stream's acks).
// [Client.ServeBasic] switches a connection to answering every PING with a
// PONG (including PINGs received but not yet taken with Next).
// [Client.Handshake] is SendInfo, ExpectConnect and ServeBasic in one call.
//
// # What the client sent
//
// A reader goroutine per connection parses the client's bytes and records
// every operation (deep copies) in order. [Client.Next] returns them one at
// a time, [Client.Expect] skips to the next one of a kind, [Client.Ops] and
// [Client.Pubs] return snapshots. The parser's limits follow the INFO sent
// (max_payload), so an oversized PUB is a parse error too.
//
// Three kinds of trouble are recorded, per connection and for the whole
// server:
//
//   - [Client.ParseErr] / [Server.ParseErrors]: bytes that are not valid
//     client protocol (a half frame spliced into a stream, a payload not
//     followed by CRLF, an unknown op). The connection is then closed, as a
//     real server would.
//   - [Client.Violations] / [Server.Violations]: well-formed ops with bad
//     content: an invalid publish or subscribe subject, a malformed header
//     block in HPUB, CONNECT JSON that does not parse.
//   - [Client.Truncated]: the client closed the connection in the middle of
//     an operation. That is not a parse error (a cut connection ends
//     anywhere), but a test can check that it happened.
//
// [Client.StopReading] stops reading altogether, for a server that lets
// the client's writes block.
//
// [Client.Discard] stops parsing and only counts bytes, for connections
// that carry something other than NATS protocol (a TLS handshake the fake
// never answers). [WithTLS] answers it instead: the first INFO sent on a
// connection is followed by the server's side of the TLS handshake, as
// for tls_required, and the rest of the connection is encrypted.
// [WithRawStream] leaves the whole byte stream to the handler, which reads
// and writes [Client.Conn] itself: for a transport below the NATS
// protocol, such as a WebSocket upgrade and its frames.
//
// # Lifetimes
//
// [Server.Close] (registered with t.Cleanup by New) closes the listener
// and every connection and waits for the accept loop, the readers and the
// handlers. Handlers must therefore return when their connection closes:
// block only in Next/Expect/ExpectConnect or on [Client.Context].
//
// Typical use (over TCP; inside a synctest bubble, l := memnet.Listen(…),
// s := fakeserver.Serve(t, l) and the option conn.Dialer(l.Dial)):
//
//	s := fakeserver.New(t)
//	go conn.Connect(ctx, s.URL()) // in a goroutine, or with a handler instead
//	c, _ := s.Accept(ctx)
//	c.Handshake(ctx, fakeserver.DefaultInfo())
//	c.Send([]byte("MSG foo 1 99999999999999999999\r\n"))
//	<-c.Done() // the client dropped the connection
package fakeserver
