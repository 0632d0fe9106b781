// Package conn is a NATS client connection: connecting (TCP, TLS,
// WebSocket), authentication, publishing, subscriptions, request/reply,
// reconnection and draining. It knows nothing of JetStream; the JetStream
// packages build on it.
//
// # Connecting
//
//	nc, err := conn.Connect(ctx, "nats://127.0.0.1:4222", conn.Name("svc"))
//	if err != nil {
//		return err
//	}
//	defer nc.Close()
//
// Connect returns when the handshake with one server has completed. A lost
// connection is re-established in the background with exponential backoff
// and jitter per server; subscriptions are restored and publishes made while
// disconnected (up to ReconnectBuffer bytes, 8 MiB by default) are sent.
// Beyond the buffer, Publish fails at once with ErrReconnectBuffer: nothing
// is dropped silently and nothing blocks.
//
// # Goroutines and lifetimes
//
// A connection runs a reader, a flusher, a pinger, and while disconnected a
// reconnect loop, plus one goroutine per SubscribeFunc handler (started
// with the subscription's first message: an idle subscription holds none)
// and one for OnEvent. Close stops every one of them before it returns,
// except a SubscribeFunc handler busy in your code: it returns as soon as
// the message it is handling does.
//
// # Messages and their memory
//
// Messages delivered to a subscription belong to the receiver: the client
// never reuses their memory, so a message may be kept and passed to other
// goroutines. They are carved from shared slabs, so delivering a message
// allocates far less than once per message.
//
// Borrowed is the one opt-in that lends messages instead: given to
// SubscribeFunc, QueueSubscribeFunc or Subscription.Messages, it makes
// each message valid only until the handler or loop body it was given to
// returns. A lent message costs no copy and no allocation;
// Stats.BorrowedMsgs counts them. The JetStream consumers (pull, ordered)
// have a Borrowed option with the same meaning.
//
// # Who reads the socket
//
// Each connection has one reader goroutine: it alone reads the socket,
// from the handshake until the connection is lost, and dispatches what it
// reads — responses to their requesters, messages to their subscriptions'
// queues, PINGs, INFOs and errors — as nats.go's reader does. Requesters
// and consumers wait on channels; none of them ever reads the socket, and
// natsio's own internal handlers (publish acknowledgements, request
// replies) run on the reader goroutine, never on a caller's.
//
// On Linux, TCP sockets (also under TLS and WebSocket) are read and written
// with non-blocking system calls made through syscall.RawConn, without the
// runtime's per-call bookkeeping; deadlines, Close and waiting for readiness
// are unchanged (docs/core.md, "Socket I/O on Linux").
//
// # Errors
//
// Every blocking call takes a context and ends by it, by its default timeout,
// or by Close. A call that ends because its context's deadline or its
// default timeout passed returns an error matching both ErrTimeout and
// context.DeadlineExceeded; one whose context was canceled, an error
// matching context.Canceled. Errors are matched with errors.Is: ErrTimeout,
// ErrNoResponders, ErrDisconnected, ErrClosed, ErrMaxPayload, ErrBadSubject…
// Server -ERR messages arrive as *ServerError, classified by kind
// (ErrAuthorization, ErrPermissions, …). Bytes from the server that break the
// protocol are a *ProtocolError: the connection is dropped and reconnects.
//
// # Liveness
//
// The client pings every PingInterval (10 s) and drops a connection after
// MaxPingsOutstanding (2) unanswered pings, so a dead link is noticed within 30 s
// even while the client keeps publishing.
//
// # Inside: one reader, and the lock order
//
// This section is for those who change the package. A link (link.go) is
// one transport connection. Its socket is read by one goroutine only: the
// handshake's, then the link's reader goroutine (readLoop, read.go) until
// the link fails; nothing else calls its Read. That goroutine owns the
// link's reader (reader.go: parser, read buffer, staged messages, wake
// list) and every subscription's allocator (Subscription.alloc, msg.go)
// and lent arena being filled (lender.cur, lend.go): none of these is
// locked, because nothing else touches them. What it hands to other
// goroutines goes through a subscription's queue (under the
// subscription's mu), a request's channel, or a lender's retired and free
// arenas (under the lender's mu).
//
// Each message is admitted to its subscription's queue (reader.admit,
// dispatch.go) before it is copied: a dropped message costs nothing, and a
// queued one pins only its subscription's own chunks. Consecutive messages
// of one subscription are staged and queued under one lock; the stage is
// flushed before each socket read, before any other op, and before a
// message of another subscription, by the read loop itself.
//
// Every subscription has one delivery mode, fixed when it is made (the
// first Messages loop with Borrowed may move it once from queue to lent):
// queue, lent, view (a function on the reader goroutine) or mux (the
// request inbox). The reader's deliver is a switch on it.
//
// What guards what: Conn.mu guards the connection's state, the outbound
// buffer, the PING queue and the link pointer; Conn.subMu the sid → sub
// map; a Subscription's mu its queue, limits, counters and close state;
// the request mux's mu its waiters and free reply tokens; a lender's mu its
// retired and free arenas; hookMu the reconnect and disconnect hooks; the
// event queue's mu the pending events. Atomics are single values read
// without those locks (a subscription's mode and auto-unsubscribe limit,
// the pending-bytes budget, counters).
//
// Locks are taken in this order: Conn.mu, then Conn.subMu or a
// subscription's mu. Conn.subMu, a subscription's mu, the request mux's
// mu, a lender's mu, the event queue's mu and hookMu are never held while
// taking another lock, except that the reader goroutine takes a
// subscription's mu, then nothing, while it owns the lender's current
// arena. No lock is held while the reader goroutine reads the socket.
package conn
