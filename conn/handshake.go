package conn

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/natsio/natsio/proto"
)

// readBufSize is the size of a connection's read buffer under load. A
// link starts with minReadBuf and doubles its buffer after each read that
// filled it, so an idle connection holds little and a busy one soon reads
// 64 KiB at a time.
const (
	readBufSize = 64 << 10
	minReadBuf  = 4 << 10
)

// The parser's limit on one inbound message. A server delivers more than
// its max_payload in two cases: headers it adds to stored messages
// (JetStream metadata, republish), and replies it builds itself (stream
// info with a subjects map, list pages, base64 message gets), which are
// bounded by its pending-bytes limit rather than max_payload. So the limit
// is four times max_payload, at least 8 MiB, plus slack — still a bound:
// a size beyond it is a protocol error before anything is allocated.
const (
	payloadSlack      = 64 << 10
	minInboundLimit   = 8 << 20
	inboundPerPayload = 4
)

// link is one transport connection with its parser. The reader goroutine
// owns it after the handshake.
type link struct {
	c     net.Conn
	base  net.Conn // the TCP connection under TLS and WebSocket (fastio)
	p     proto.Parser
	buf   []byte
	err   error // read error held back until buffered ops are consumed
	alloc msgAlloc
	// sidCache remembers the last routed subscription.
	lastSID uint64
	lastSub *Subscription
	// Counters kept by the reader and published to the connection's
	// atomics once per read, not once per message.
	inMsgs, inBytes uint64
	sockIn          uint64 // bytes read from the socket
	filled          bool   // the last read filled buf (fill grows it)
	stats           *connStats
	// Subscriptions that received messages into an empty queue since the
	// last wake-up, and how many messages were queued meanwhile: consumers
	// are woken before the next read from the socket, or every wakeBatch
	// messages, so a burst costs one wake-up instead of one per message.
	wakes []*Subscription
	held  int
	// stage holds the messages for stageSub read since the last flush
	// (flushStage): consecutive messages of one subscription are queued in
	// one go, under one lock and one pending-bytes reservation, instead of
	// one by one. It is flushed before any other op or any message for an
	// inline subscription (a response) is dispatched, before each socket
	// read, and when the role is released, so it changes no order that
	// anyone can observe.
	stageSub *Subscription
	stage    []*Msg
	// scratch is the borrowed message handed to subscribeInline handlers.
	scratch Msg
	// Borrowed batches (lend.go): lendSub is the subscription whose
	// nextBatch caller holds the role and takes views; lentTo the lender
	// whose messages may alias buf, lent for its batch lentSeq. lentMsgs
	// and lentBufs are counters published with the others.
	lendSub            *Subscription
	lentTo             *lender
	lentSeq            uint64
	lentMsgs, lentBufs uint64
	// self is the request whose own goroutine holds the role (readFor):
	// its response is handed over without a channel (respMux.routeTo).
	self *waiter

	// The reader role (inline.go): whoever holds it — the connection's
	// reader goroutine, or a requester reading its own response — alone
	// uses the parser, the buffers and the fields above.
	role     atomic.Bool // held
	inline   bool        // requesters may read inline (TCP, TLS)
	replied  bool        // a response went to a request since the role was taken
	deadline bool        // the holder set a read deadline (an inline read)
	// wdl is the write deadline last set (armWrite); the writer of the
	// moment (nc.writing) alone uses it.
	wdl      time.Time
	handback chan struct{} // asks the parked reader goroutine to read again
	// quiet reports whether the connection has no subscription but the
	// request inbox: the parked reader may then wait longer (inline.go).
	quiet func() bool
	// parkTimer ends the reader goroutine's park (stopped until the first
	// one); lastInline is when the last inline read ended (Unix ns).
	parkTimer  *time.Timer
	lastInline atomic.Int64
	// imu orders setting and clearing an inline consumer's read deadline
	// (inlineSub, deadline) with interrupts from other goroutines.
	imu       sync.Mutex
	inlineSub *Subscription
	// rdl is the read deadline set on the socket (zero: none); under imu.
	// Inline readers leave theirs for the next one (readDeadlineLocked).
	rdl time.Time
	// idle: the parked reader goroutine waits, with no timer, for the
	// inline reader holding the role to hand it back.
	idle atomic.Bool
	// wokeWaiter: a consumer blocked in take was woken since the role was
	// taken; it will read inline when it comes back.
	wokeWaiter bool
	lost       chan struct{} // closed when the link is shut
	lostOnce   sync.Once
}

// wakeBatch bounds how many queued messages may wait for their consumer's
// wake-up while the reader goes on parsing one read's worth of data. A
// 64 KiB read holds about 260 JetStream messages of 128 B, 1800 core ones
// of 16 B. Waking every 64 messages cost a wake-up (and a thread woken on
// the other core) four times per read of JetStream messages; at 1024, in
// interleaved runs on 2 cores, the ordered consumer read 7 % faster with
// 8 % less client CPU, the pull consumer with acks 8 % faster with 13 %
// less, core subscriptions and Fetch unchanged. A message alone in its
// read is woken for at once either way.
const wakeBatch = 1024

// deferWake notes that s must be woken before the next read.
func (l *link) deferWake(s *Subscription) {
	if s.waiting.Load() {
		l.wokeWaiter = true
	}
	for _, w := range l.wakes {
		if w == s {
			return
		}
	}
	l.wakes = append(l.wakes, s)
}

// flushStage queues the staged messages and notes their consumer for a
// wake-up if its queue was empty.
func (l *link) flushStage() {
	if len(l.stage) == 0 {
		return
	}
	if l.stageSub.pushAll(l.stage) {
		l.deferWake(l.stageSub)
	}
	clear(l.stage)
	l.stage = l.stage[:0]
}

// wakeAll queues what is staged and wakes the consumers noted by
// deferWake.
func (l *link) wakeAll() {
	l.flushStage()
	l.flushStats()
	for i, s := range l.wakes {
		s.signal()
		l.wakes[i] = nil
	}
	l.wakes = l.wakes[:0]
	l.held = 0
}

func newLink(c net.Conn) *link {
	l := &link{c: c, buf: make([]byte, minReadBuf), handback: make(chan struct{}, 1), lost: make(chan struct{})}
	l.parkTimer = time.NewTimer(parkDelay)
	l.parkTimer.Stop()
	l.p.Alloc = l.alloc.bytes
	l.inline = inlineCapable(c)
	l.role.Store(true) // the handshake, then the reader goroutine
	return l
}

// inlineCapable reports whether requesters may read c inline: a read
// deadline that expires must leave it usable. It does for TCP and TLS (for
// TLS a timeout is a temporary error, not a broken record layer). A
// variable so that tests over in-memory pipes can allow theirs.
var inlineCapable = func(c net.Conn) bool {
	switch c.(type) {
	case *net.TCPConn, *tls.Conn:
		return true
	}
	return isFastConn(c)
}

// shut closes the link's socket and tells a parked reader goroutine.
func (l *link) shut() {
	l.lostOnce.Do(func() { close(l.lost) })
	_ = l.c.Close()
}

// next returns the next op, reading from the connection as needed. The op
// is valid until the next call.
func (l *link) next() (*proto.Op, error) {
	for {
		op, err := l.p.Next()
		if err != nil {
			return nil, &ProtocolError{Err: err}
		}
		if op != nil {
			return op, nil
		}
		if err := l.fill(); err != nil {
			return nil, err
		}
	}
}

// fill reads the next chunk from the socket into the parser. A read error
// that came with data is held back (l.err) until that data is parsed. An
// inline reader's own deadline returns errInlineDeadline and leaves the
// link usable.
func (l *link) fill() error {
	if l.err != nil {
		return l.err
	}
	l.wakeAll()
	l.flushStats()
	l.keepLent()
	if l.filled && len(l.buf) < readBufSize {
		// The last read filled the buffer: more is coming than it holds.
		// The old buffer stays valid for whatever still refers to it
		// (lent messages).
		l.buf = make([]byte, min(2*len(l.buf), readBufSize))
	}
	n, err := l.c.Read(l.buf)
	l.filled = n == len(l.buf)
	if n > 0 {
		l.sockIn += uint64(n)
		l.p.Feed(l.buf[:n])
	}
	if err != nil {
		if l.deadline && isTimeout(err) {
			// An inline reader's own deadline: the link is fine.
			if n == 0 {
				return errInlineDeadline
			}
			return nil
		}
		l.err = err
	}
	return nil
}

// flushStats publishes the reader's counters.
func (l *link) flushStats() {
	if l.stats == nil {
		return
	}
	if l.inMsgs > 0 {
		l.stats.inMsgs.Add(l.inMsgs)
		l.stats.inBytes.Add(l.inBytes)
		l.inMsgs, l.inBytes = 0, 0
	}
	if l.sockIn > 0 {
		l.stats.socketIn.Add(l.sockIn)
		l.sockIn = 0
	}
	if l.lentMsgs > 0 || l.lentBufs > 0 {
		l.stats.lentMsgs.Add(l.lentMsgs)
		l.stats.lentBufs.Add(l.lentBufs)
		l.lentMsgs, l.lentBufs = 0, 0
	}
}

// inboundLineSlack is how much longer than MaxControlLine a line from the
// server may be: a delivered message adds its subscription ID to the
// subject and reply the server accepted, and the server may compose a
// reply subject of its own (a JetStream acknowledgement subject names the
// stream, the consumer and seven numbers).
const inboundLineSlack = 4096

func (l *link) setMaxPayload(n int64) {
	l.p.Limits.MaxPayload = max(int(n)*inboundPerPayload, minInboundLimit) + payloadSlack
}

// connectMsg is the CONNECT JSON.
type connectMsg struct {
	Verbose      bool   `json:"verbose"`
	Pedantic     bool   `json:"pedantic"`
	TLSRequired  bool   `json:"tls_required"`
	Name         string `json:"name,omitempty"`
	Lang         string `json:"lang"`
	Version      string `json:"version"`
	Protocol     int    `json:"protocol"`
	Echo         bool   `json:"echo"`
	Headers      bool   `json:"headers"`
	NoResponders bool   `json:"no_responders"`
	User         string `json:"user,omitempty"`
	Pass         string `json:"pass,omitempty"`
	Token        string `json:"auth_token,omitempty"`
	JWT          string `json:"jwt,omitempty"`
	NKey         string `json:"nkey,omitempty"`
	Sig          string `json:"sig,omitempty"`
}

// Version is the client version sent in CONNECT.
const Version = "0.1.0"

// handshake dials s and completes INFO, TLS, CONNECT and PING/PONG within
// the connect timeout (and ctx).
func (nc *Conn) handshake(ctx context.Context, s *server) (*link, *ServerInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, nc.opts.connectTimeout)
	defer cancel()
	deadline, _ := ctx.Deadline()

	dial := nc.opts.dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	c, err := dial(ctx, "tcp", s.addr())
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, context.Canceled) || errors.Is(err, os.ErrDeadlineExceeded) {
			err = &timeoutError{err} // matches ErrTimeout and context.DeadlineExceeded
		}
		return nil, nil, err
	}
	if !nc.opts.stdSocketIO {
		c = fastConn(c)
	}
	// Canceling ctx interrupts blocking reads and writes at once.
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	_ = c.SetDeadline(deadline)

	l, info, err := nc.handshakeOn(ctx, c, s)
	if err != nil {
		_ = c.Close()
		// The socket deadline equals ctx's: either may fire first.
		if !errors.Is(err, context.Canceled) && (ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded)) {
			err = &timeoutError{err}
		}
		return nil, nil, err
	}
	if !stop() {
		_ = l.c.Close()
		return nil, nil, ctx.Err()
	}
	_ = l.c.SetDeadline(time.Time{})
	return l, info, nil
}

func (nc *Conn) handshakeOn(ctx context.Context, c net.Conn, s *server) (*link, *ServerInfo, error) {
	base := c
	secure := false
	wantTLS := nc.opts.secure || s.wantsTLS()
	if nc.opts.tlsFirst || (s.isWS() && s.wantsTLS()) {
		tc, err := nc.tlsUpgrade(ctx, c, s)
		if err != nil {
			return nil, nil, err
		}
		c, secure = tc, true
	}
	if s.isWS() {
		wc, err := wsHandshake(ctx, c, s.url, wsOptions{Compression: nc.opts.wsCompression})
		if err != nil {
			return nil, nil, err
		}
		c = wc
	}
	l := newLink(c)
	l.base, l.quiet = base, nc.quiet
	l.stats = &nc.stats // socket bytes count from the first one
	l.p.Limits.MaxControlLine = nc.opts.maxControlLine + inboundLineSlack
	op, err := l.next()
	if err != nil {
		return nil, nil, err
	}
	if op.Kind != proto.KindInfo {
		return nil, nil, &ProtocolError{Err: fmt.Errorf("expected INFO, got %v", op.Kind)}
	}
	info, err := parseInfo(op.Text)
	if err != nil {
		return nil, nil, err
	}
	l.setMaxPayload(info.MaxPayload)
	if wc, ok := l.c.(*wsConn); ok {
		// Compressed messages must not inflate past max_payload.
		wc.setMaxMessage(int(info.MaxPayload))
	}
	if !secure && !s.isWS() && (info.TLSRequired || wantTLS) {
		if !info.TLSRequired && !info.TLSAvailable {
			return nil, nil, ErrTLSRequired
		}
		tc, err := nc.tlsUpgrade(ctx, c, s)
		if err != nil {
			return nil, nil, err
		}
		l.c, secure = tc, true
	}
	if wantTLS && !secure {
		return nil, nil, ErrTLSRequired
	}
	cm, err := nc.connectMsg(s, info, secure)
	if err != nil {
		return nil, nil, err
	}
	js, err := json.Marshal(cm)
	if err != nil {
		return nil, nil, err
	}
	out := proto.AppendConnect(nil, js)
	out = proto.AppendPing(out)
	wipe(js)
	n, err := l.c.Write(out)
	nc.stats.socketOut.Add(uint64(n))
	wipe(out)
	if err != nil {
		return nil, nil, err
	}
	for {
		op, err := l.next()
		if err != nil {
			return nil, nil, err
		}
		switch op.Kind {
		case proto.KindPong:
			return l, info, nil
		case proto.KindErr:
			return nil, nil, classifyErr(op.Text)
		case proto.KindPing:
			n, err := l.c.Write(proto.AppendPong(nil))
			nc.stats.socketOut.Add(uint64(n))
			if err != nil {
				return nil, nil, err
			}
		case proto.KindInfo:
			if ni, err := parseInfo(op.Text); err == nil {
				info = ni
				l.setMaxPayload(info.MaxPayload)
			}
		}
	}
}

func (nc *Conn) tlsUpgrade(ctx context.Context, c net.Conn, s *server) (net.Conn, error) {
	tc := tls.Client(c, nc.opts.clientTLS(s.tlsName))
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("tls handshake: %w", err)
	}
	return tc, nil
}

// connectMsg builds CONNECT for server s. Credentials of any kind go to a
// discovered server only over TLS unless SendCredentialsToDiscovered.
func (nc *Conn) connectMsg(s *server, info *ServerInfo, secure bool) (*connectMsg, error) {
	o := &nc.opts
	cm := &connectMsg{
		TLSRequired:  secure,
		Name:         o.name,
		Lang:         "go-natsio",
		Version:      Version,
		Protocol:     1,
		Echo:         !o.noEcho,
		Headers:      true,
		NoResponders: true,
	}
	user, pass, token := o.user, o.pass.reveal(), o.token.reveal()
	if ui := s.url.User; user == "" && token == "" {
		if ui == nil && s.discovered {
			// A gossiped server inherits the credentials of the named URLs.
			ui = nc.pool.userInfo
		}
		if ui != nil {
			if p, ok := ui.Password(); ok {
				user, pass = ui.Username(), p
			} else {
				token = ui.Username()
			}
		}
	}
	if s.discovered && !secure && !o.discoveredCreds {
		// Nothing at all for a gossiped server over plaintext: not even a
		// signature, which it could relay to a server whose nonce it is.
		return cm, nil
	}
	cm.User, cm.Pass, cm.Token = user, pass, token
	if o.userJWT != nil {
		jwt, err := o.userJWT()
		if err != nil {
			return nil, fmt.Errorf("%w: user JWT: %v", ErrBadCredentials, err)
		}
		cm.JWT = jwt
	} else if o.nkeyPub != "" {
		cm.NKey = o.nkeyPub
	}
	if o.signer != nil && info.Nonce != "" {
		sig, err := o.signNonce(info.Nonce)
		if err != nil {
			return nil, err
		}
		cm.Sig = sig
	}
	return cm, nil
}
