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
// Over TCP and TLS the socket is read by whoever needs its next bytes: a
// Request reads its own response, and a Messages iterator or a
// SubscribeFunc handler reads the socket itself when its queue is empty
// and the reader goroutine has stepped aside. Everything read meanwhile is
// dispatched as the reader goroutine would. This saves a hand-off between
// goroutines per response or batch; Stats.InlineReads and
// Stats.InlineBatches count it happening.
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
// # Inside: the reader role and the lock order
//
// This section is for those who change the package. One goroutine at a
// time holds a link's reader role and with it the link's reader: the
// parser, the read buffer, the message slabs, the staged messages, the
// consumers to wake and the lent buffers (reader.go). The role is one
// atomic state, moved only by link.roleStep (role.go):
//
//   - free: nobody reads. Moves to inline (a requester or consumer takes
//     the role: acquire) or to goroutine (the parked reader goroutine takes
//     it back: resume).
//   - goroutine: the reader goroutine reads. Moves to yielding (it handed
//     a response over or woke a waiting consumer) or to free (it parks or
//     exits).
//   - yielding: the reader goroutine reads until what it read is
//     dispatched. Moves to goroutine (others wait for answers) or to free
//     (it parks).
//   - inline: a requester or consumer reads. Moves to free (it is done:
//     endInline) or to inline-waited (the reader goroutine waits for it).
//   - inline-waited: a requester or consumer reads and the reader
//     goroutine waits for it. Moves to free (endInline hands the role
//     back).
//
// Only the holder moves the role out of goroutine, yielding and inline. In
// race builds a move not in the table panics, and so does a call to the
// reader's dispatch methods while the role is free. Each holder runs the
// same loop (readUntil) with its own end: a response, queued messages, or
// the link's failure.
//
// Every subscription has one delivery mode, fixed when it is made (the
// first Messages loop with Borrowed may move it once from queue to lent):
// queue, lent, view (a function on the reading goroutine) or mux (the
// request inbox). The reader's deliver is a switch on it.
//
// Locks are taken in this order: Conn.mu, then Conn.subMu or a
// subscription's mu. Conn.subMu, a subscription's mu, the request mux's
// mu, a link's imu, a lender's mu, the event queue's mu and hookMu are
// never held while taking another lock. The reader role is not a lock:
// its holder takes any of them, and no lock is held while it reads the
// socket.
package conn
