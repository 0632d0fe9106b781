package conn

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type connState uint8

const (
	stateConnecting connState = iota
	stateConnected
	stateReconnecting
	stateClosed
)

// Conn is a connection to a NATS server or cluster. It reconnects on its own
// (see Connect) and is safe for concurrent use. Close it when done; after
// Close returns no goroutine or timer of the connection remains.
type Conn struct {
	opts   options
	ev     *eventQueue
	evStop chan struct{}
	evDone chan struct{}

	flusherDone chan struct{}
	closeDone   chan struct{}

	mu    sync.Mutex
	wcond sync.Cond // publishers waiting for the flusher; L is &mu
	state connState
	pool  *serverPool
	cur   *server
	link  *link
	gen   uint64
	info  *ServerInfo
	// jsLevel is jetStreamLevel(info), stored whenever info changes, for
	// lock-free feature checks (JetStreamLevel).
	jsLevel atomic.Int32
	wbuf    []byte // outbound bytes not yet taken by the flusher
	// pubSubject skips validating a publish subject repeated as the same
	// string (guarded by mu).
	pubSubject subjectMemo
	spare      []byte
	kicked     bool
	// lazy: WriteLazy bytes wait in wbuf for a later write, lazyDelay
	// after the first at the latest (lazyTimer).
	lazy      bool
	lazyTimer *time.Timer
	// lastSub: when the last SUB was queued; lazySince: when the SUB that
	// armed lazyTimer was (subscribe.go, queueSubLocked).
	lastSub, lazySince time.Time
	writing            bool         // a goroutine (flusher or inline writer) is writing
	pongs              []chan error // one per outstanding PING; nil for keepalive pings
	pingsOut           int
	// pongOwed: a PONG answering the server's PINGs waits in wbuf. The
	// server's PINGs read meanwhile are answered by it too (a server
	// resets its count of outstanding PINGs on any PONG), so a server
	// that sends PINGs and never reads gets at most one PONG queued per
	// write, not one per PING.
	pongOwed bool
	draining bool
	closeErr error
	// lostOnClose: bytes of publishes Close could not send.
	lostOnClose int
	out         struct{ msgs, bytes uint64 }
	reconn      uint64
	connects    uint64        // successful connections, the first included
	upCh        chan struct{} // closed at the next connection (WaitConnected)
	disconnects uint64
	bufFull     uint64 // publishes refused with ErrReconnectBuffer
	bufPeak     int    // most bytes buffered while disconnected
	lastErr     error

	kick   chan struct{}
	closed chan struct{}
	// subsClosed is closed by Close once every subscription is marked
	// closed: it wakes every idle SubscribeFunc handler in one go.
	subsClosed chan struct{}
	ctx        context.Context // canceled by Close; bounds reconnect dials
	cancel     context.CancelFunc
	wg         sync.WaitGroup

	// pendingBytes counts bytes queued in all subscriptions, bounded by
	// the connection-wide pending limit.
	pendingBytes atomic.Int64

	subMu sync.RWMutex
	subs  map[uint64]*Subscription
	sid   uint64

	resp respMux

	hookMu  sync.Mutex
	hooks   map[uint64]func()
	dhooks  map[uint64]func(error)
	hookSeq uint64

	stats connStats
}

// connStats are the counters updated outside nc.mu.
type connStats struct {
	inMsgs, inBytes, dropped, unknownSID, badHeaders, eventsDropped, lostBytes atomic.Uint64
	lentMsgs, lentBufs                                                         atomic.Uint64 // borrowed delivery (lend.go)
	protocolErrors, serverErrors                                               atomic.Uint64
	requests, requestTimeouts, noResponders                                    atomic.Uint64
	writes, socketIn, socketOut                                                atomic.Uint64 // socket writes and bytes, after the handshake
}

// Connect connects to the servers in url (one URL or a comma-separated
// list; schemes nats://, tls://, ws://, wss://; user:pass@ or token@
// credentials allowed) and returns once the handshake with one of them has
// completed: INFO, TLS when required, CONNECT, and the first PONG. Each
// attempt is bounded by ConnectTimeout; the whole call by ctx. Servers are
// tried in random order (DontRandomize keeps the given order), each once;
// the errors of every attempt are joined in the returned error, which
// matches ErrNoServers. When ctx ends the attempts, the error also matches
// ctx's: context.Canceled, or context.DeadlineExceeded and ErrTimeout.
//
// Once connected, a lost connection is re-established in the background
// (see ReconnectWait, MaxReconnects, ReconnectBuffer); subscriptions are
// restored and buffered publishes are sent. With RetryOnFailedConnect,
// Connect returns a connection that keeps trying when no server could be
// reached.
func Connect(ctx context.Context, url string, opts ...Option) (*Conn, error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt.apply(&o); err != nil {
			return nil, err
		}
	}
	servers, err := parseServerURLs(url)
	if err != nil {
		return nil, err
	}
	o.warnReadableSecrets()
	nc := &Conn{
		opts:       o,
		pool:       newPool(servers, !o.noRandomize),
		kick:       make(chan struct{}, 1),
		closed:     make(chan struct{}),
		subsClosed: make(chan struct{}),
		closeDone:  make(chan struct{}),
		subs:       make(map[uint64]*Subscription),
	}
	nc.wcond.L = &nc.mu
	nc.ctx, nc.cancel = context.WithCancel(context.Background())
	if o.onEvent != nil {
		nc.ev = &eventQueue{wake: make(chan struct{}, 1), f: o.onEvent,
			dropped: func() { nc.stats.eventsDropped.Add(1) }}
	}

	var errs []error
	for _, s := range append([]*server(nil), nc.pool.servers...) {
		if err := ctx.Err(); err != nil {
			errs = append(errs, context.Cause(ctx))
			break
		}
		l, info, err := nc.handshake(ctx, s)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.redacted(), err))
			if o.retryOnFailed {
				nc.firstAttemptFailed(s, err)
			}
			continue
		}
		nc.start(l, info, s)
		return nc, nil
	}
	if o.retryOnFailed && ctx.Err() == nil {
		nc.startRetrying()
		return nc, nil
	}
	nc.cancel()
	if ctx.Err() != nil {
		// ctx ended the attempts: its error is why, whatever the dial or
		// handshake it interrupted reported (their text is kept).
		return nil, fmt.Errorf("%w: %w (%v)", ErrNoServers, timeoutErr(ctx), errors.Join(errs...))
	}
	return nil, fmt.Errorf("%w: %w", ErrNoServers, errors.Join(errs...))
}

// start installs the first connection and starts the goroutines.
func (nc *Conn) start(l *link, info *ServerInfo, s *server) {
	nc.startEvents()
	g := nc.gossipFor(info, s)
	nc.mu.Lock()
	nc.wg.Add(2)
	nc.flusherDone = make(chan struct{})
	go nc.flusher()
	go nc.pinger()
	nc.install(l, info, s, g)
	nc.mu.Unlock()
	nc.opts.logger.Info("nats: connected", "server", s.redacted())
	nc.ev.push(Event{Kind: EventConnected, Server: s.redacted()})
}

// startEvents starts the goroutine that delivers events (OnEvent).
func (nc *Conn) startEvents() {
	if nc.ev == nil {
		return
	}
	nc.evStop = make(chan struct{})
	nc.evDone = make(chan struct{})
	go func() {
		defer close(nc.evDone)
		nc.ev.run(nc.evStop)
	}()
}

// ServerInfo returns the INFO of the server currently (or last) connected.
func (nc *Conn) ServerInfo() ServerInfo {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	return *nc.info
}

// MaxPayload returns the server's largest accepted message size.
func (nc *Conn) MaxPayload() int64 {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	return nc.info.MaxPayload
}

// DrainTimeout returns the bound of a drain whose context has no deadline
// (the DrainTimeout option, default DefaultDrainTimeout). Layers that drain
// subscriptions of their own (a micro service's Stop) apply it too.
func (nc *Conn) DrainTimeout() time.Duration { return nc.opts.drainTimeout }

// ConnectedURL returns the URL of the current server without credentials,
// or "" while disconnected.
func (nc *Conn) ConnectedURL() string {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	if nc.state != stateConnected {
		return ""
	}
	return nc.cur.redacted()
}

// Servers lists the server pool (named and discovered) without credentials.
func (nc *Conn) Servers() []string {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	return nc.pool.urls()
}

// IsConnected reports whether the connection is up.
func (nc *Conn) IsConnected() bool {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	return nc.state == stateConnected
}

// IsClosed reports whether the connection has been closed.
func (nc *Conn) IsClosed() bool {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	return nc.state == stateClosed
}

// Closed returns a channel closed when the connection closes.
func (nc *Conn) Closed() <-chan struct{} { return nc.closed }

// Err returns why the connection closed (nil after Close), or the last
// reason it was lost while it is reconnecting.
func (nc *Conn) Err() error {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	if nc.state == stateClosed {
		return nc.closeErr
	}
	return nc.lastErr
}

// Stats are a connection's counters.
//
// InMsgs and InBytes are published by the reader in batches, but always
// before what they count reaches its receiver: once a request returned its
// response or a subscription yielded a message, Stats counts it. Only a
// handler of natsio's own layers that runs on the reader goroutine may run
// before its message is counted.
type Stats struct {
	InMsgs, InBytes   uint64
	OutMsgs, OutBytes uint64
	Reconnects        uint64
	// Connects counts successful connections, the first one included
	// (Reconnects does not count the first).
	Connects uint64
	// SocketBytesIn and SocketBytesOut count every byte read from and
	// written to the server's sockets, protocol and handshakes included
	// (InBytes and OutBytes count message payloads and headers only).
	// Like every counter here they cover the connection's whole life,
	// across reconnects.
	SocketBytesIn, SocketBytesOut uint64
	// Dropped counts messages dropped because a subscription's queue was
	// full (slow consumer).
	Dropped uint64
	// UnknownSID counts messages for subscriptions that no longer exist
	// (normal right after an unsubscribe).
	UnknownSID uint64
	// BadHeaders counts messages dropped for a malformed header block.
	BadHeaders uint64
	// EventsDropped counts events the handler could not keep up with.
	EventsDropped uint64
	// LostBytes counts bytes of publishes whose fate is unknown or that
	// were never sent: a socket write that failed (the server may have
	// received part of it), or a Close while disconnected or whose last
	// write failed.
	LostBytes uint64
	// Disconnects counts connections lost (a Close is not one); the
	// reason of each is in its EventDisconnected.
	Disconnects uint64
	// ProtocolErrors counts connections dropped because the server sent
	// what the protocol does not allow (EventProtocolError); ServerErrors
	// counts the server's -ERR lines (EventServerError), fatal or not.
	ProtocolErrors, ServerErrors uint64
	// ReconnectBufferFull counts publishes refused with ErrReconnectBuffer;
	// ReconnectBufferPeak is the most bytes publishes ever held in the
	// buffer while disconnected (bounded by the ReconnectBuffer option).
	ReconnectBufferFull uint64
	ReconnectBufferPeak int
	// Requests counts requests sent (Request, RequestMsg, and the
	// JetStream layers' requests);
	// RequestTimeouts those that ended by their deadline or context, and
	// NoResponders those answered by the server's 503. RequestsPending is
	// how many wait for their response now: 0 once every call returned.
	Requests, RequestTimeouts, NoResponders uint64
	RequestsPending                         int
	// BorrowedMsgs counts messages lent (Borrowed, and the Borrowed
	// options of the JetStream consumers): delivered in memory the
	// subscription recycles once its consumer is done with them, so
	// that they cost no allocation.
	BorrowedMsgs uint64
}

// Stats returns the connection's counters.
func (nc *Conn) Stats() Stats {
	nc.mu.Lock()
	s := Stats{OutMsgs: nc.out.msgs, OutBytes: nc.out.bytes, Reconnects: nc.reconn, Connects: nc.connects,
		Disconnects: nc.disconnects, ReconnectBufferFull: nc.bufFull, ReconnectBufferPeak: nc.bufPeak}
	nc.mu.Unlock()
	s.RequestsPending = int(nc.resp.pending.Load())
	s.Requests = nc.stats.requests.Load()
	s.RequestTimeouts = nc.stats.requestTimeouts.Load()
	s.NoResponders = nc.stats.noResponders.Load()
	s.BorrowedMsgs = nc.stats.lentMsgs.Load()
	s.ProtocolErrors = nc.stats.protocolErrors.Load()
	s.ServerErrors = nc.stats.serverErrors.Load()
	s.InMsgs = nc.stats.inMsgs.Load()
	s.InBytes = nc.stats.inBytes.Load()
	s.Dropped = nc.stats.dropped.Load()
	s.UnknownSID = nc.stats.unknownSID.Load()
	s.BadHeaders = nc.stats.badHeaders.Load()
	s.EventsDropped = nc.stats.eventsDropped.Load()
	s.LostBytes = nc.stats.lostBytes.Load()
	s.SocketBytesIn = nc.stats.socketIn.Load()
	s.SocketBytesOut = nc.stats.socketOut.Load()
	return s
}

// Close closes the connection. Buffered publishes are written first (bounded
// by the write timeout, at most 2 s; what cannot be written is counted in
// Stats.LostBytes and logged); pending requests and flushes fail with
// ErrClosed; iterators end with ErrClosed. Close waits for every goroutine of
// the connection to return, except SubscribeFunc handlers busy in your code:
// they return as soon as the message they are handling does (so a handler
// may call Close). It is safe to call more than once.
func (nc *Conn) Close() error {
	nc.closeWith(nil)
	return nil
}

// closeWith closes with reason err (nil for a user's Close).
func (nc *Conn) closeWith(err error) {
	nc.mu.Lock()
	if nc.state == stateClosed {
		nc.mu.Unlock()
		<-nc.closeDone
		return
	}
	defer close(nc.closeDone)
	nc.state = stateClosed
	nc.closeErr = err
	// An inline writer finishes its write before the last bytes follow it.
	for nc.writing {
		nc.wcond.Wait()
	}
	l := nc.link
	nc.link = nil
	pongs := nc.pongs
	nc.pongs = nil
	pending := nc.wbuf
	nc.wbuf = nil
	nc.pongOwed = false
	nc.lazyTakenLocked()
	nc.wcond.Broadcast()
	nc.mu.Unlock()

	nc.cancel()
	close(nc.closed)
	lost := 0
	if l != nil {
		// The flusher has written what it took; what is left follows it.
		<-nc.flusherDone
		if len(pending) > 0 {
			d := min(nc.opts.writeTimeout, 2*time.Second)
			_ = l.c.SetWriteDeadline(time.Now().Add(d))
			n, err := l.c.Write(pending)
			nc.stats.socketOut.Add(uint64(n))
			if err != nil {
				lost = len(pending)
			}
		}
		l.shut()
	} else {
		lost = len(pending)
	}
	nc.mu.Lock()
	nc.lostOnClose = lost
	nc.mu.Unlock()
	for _, ch := range pongs {
		if ch != nil {
			ch <- ErrClosed
		}
	}
	nc.resp.failAll(closedMsg)
	nc.runDisconnectHooks(ErrClosed)
	// Mark every subscription closed, wake their idle handlers at once
	// (one channel close, instead of one wake-up per subscription that
	// each finds the other core idle), then finish closing them.
	subs := nc.allSubs()
	for _, s := range subs {
		s.markClosed(ErrClosed)
	}
	close(nc.subsClosed)
	for _, s := range subs {
		s.close(ErrClosed)
	}
	nc.wg.Wait()
	if lost > 0 {
		nc.stats.lostBytes.Add(uint64(lost))
		nc.opts.logger.Warn("nats: buffered publishes not sent before close", "bytes", lost)
	}
	if err != nil {
		nc.opts.logger.Warn("nats: connection closed", "err", err)
	} else {
		nc.opts.logger.Info("nats: connection closed")
	}
	nc.ev.push(Event{Kind: EventClosed, Err: err})
	if nc.evDone != nil {
		close(nc.evStop)
		<-nc.evDone
	}
}

func (nc *Conn) allSubs() []*Subscription {
	nc.subMu.RLock()
	defer nc.subMu.RUnlock()
	out := make([]*Subscription, 0, len(nc.subs))
	for _, s := range nc.subs {
		out = append(out, s)
	}
	return out
}

// reservePending accounts size bytes queued for a subscription against the
// connection-wide limit; it reports false (nothing reserved) when they do
// not fit.
func (nc *Conn) reservePending(size int) bool {
	if nc.pendingBytes.Add(int64(size)) > nc.opts.connPendingBytes {
		nc.pendingBytes.Add(-int64(size))
		return false
	}
	return true
}
