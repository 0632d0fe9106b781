package fakeserver

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/natsio/natsio/internal/wire"
	"github.com/natsio/natsio/proto"
)

// readBufSize is the size of each connection's read buffer.
const readBufSize = 32 << 10

// Info is an INFO body; SendInfo marshals it to JSON.
type Info map[string]any

// DefaultInfo returns the INFO of a plain server: protocol 1, headers,
// max_payload 1 MiB, no auth, no TLS, no JetStream.
func DefaultInfo() Info {
	return Info{
		"server_id":   "NFAKESERVER",
		"server_name": "fake",
		"version":     "2.15.2",
		"proto":       1,
		"go":          "go1.26",
		"host":        "127.0.0.1",
		"port":        4222,
		"headers":     true,
		"max_payload": 1 << 20,
	}
}

// With returns a copy of i with key set to v.
func (i Info) With(key string, v any) Info {
	out := make(Info, len(i)+1)
	for k, x := range i {
		out[k] = x
	}
	out[key] = v
	return out
}

// Client is one connection accepted by the fake server. Its methods are
// safe for concurrent use.
type Client struct {
	s      *Server
	raw    net.Conn // the accepted connection
	conn   net.Conn // raw, or the TLS connection over it once tlsDone is closed
	index  int
	ctx    context.Context
	cancel context.CancelFunc

	wmu sync.Mutex // serialises writes

	// With WithTLS: closed once the first SendInfo has done the TLS
	// handshake (conn is set then), with tlsErr if it failed. The reader
	// waits for it before its first read.
	tlsDone chan struct{}
	tlsErr  error

	// maxPayload is the parser's payload limit, from the last INFO sent.
	maxPayload atomic.Int64
	discard    atomic.Bool
	discarded  atomic.Int64
	stopRead   atomic.Bool

	mu         sync.Mutex
	ops        []proto.Op
	answered   []bool // PING at the same index already answered
	next       int    // index of the op Next returns next
	basic      bool
	parseErr   error
	violations []error
	truncated  bool
	readErr    error
	changed    chan struct{} // closed and replaced on every change
	done       chan struct{} // closed when the reader has returned
	subs       map[uint64]*interest
}

// interest is one of the client's subscriptions, as SUB and UNSUB made it.
type interest struct {
	subject   string
	max       uint64 // from UNSUB <sid> <max>; 0: none
	delivered uint64 // messages routed to it by SendTo
}

func newClient(s *Server, nc net.Conn, index int) *Client {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{
		s: s, raw: nc, conn: nc, index: index, ctx: ctx, cancel: cancel,
		changed: make(chan struct{}),
		done:    make(chan struct{}),
		subs:    map[uint64]*interest{},
	}
	if s.tls != nil {
		c.tlsDone = make(chan struct{})
	}
	c.maxPayload.Store(proto.DefaultMaxPayload)
	c.stopRead.Store(s.raw) // the reader then only waits for the close
	return c
}

// Index returns the connection's position in accept order, from 1.
func (c *Client) Index() int { return c.index }

// Conn returns the underlying connection, as accepted (for tests that take
// over the byte stream; prefer the Send methods).
func (c *Client) Conn() net.Conn { return c.raw }

// Context returns a context canceled when the connection closes.
func (c *Client) Context() context.Context { return c.ctx }

// Done returns a channel closed when the connection has closed (by either
// side) and its reader has returned.
func (c *Client) Done() <-chan struct{} { return c.done }

// Close closes the connection and waits for its reader to return.
func (c *Client) Close() {
	c.shut()
	<-c.done
}

func (c *Client) shut() {
	c.cancel()
	_ = c.raw.Close()
}

// notifyLocked wakes waiters. c.mu held.
func (c *Client) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// readLoop parses what the client sends until the connection ends or a
// parse error closes it.
func (c *Client) readLoop() {
	defer c.s.wg.Done()
	defer close(c.done)
	defer c.cancel()
	if c.tlsDone != nil {
		select {
		case <-c.tlsDone:
		case <-c.ctx.Done():
		}
		c.mu.Lock()
		err := c.tlsErr
		if err == nil && c.ctx.Err() != nil {
			err = net.ErrClosed
		}
		if err != nil {
			c.readErr = err
			c.notifyLocked()
		}
		c.mu.Unlock()
		if err != nil {
			_ = c.raw.Close()
			return
		}
	}
	p := proto.Parser{ClientOps: true}
	buf := make([]byte, readBufSize)
	for {
		if c.stopRead.Load() {
			<-c.ctx.Done() // until the connection is closed
			c.mu.Lock()
			c.readErr = net.ErrClosed
			c.notifyLocked()
			c.mu.Unlock()
			return
		}
		n, err := c.conn.Read(buf)
		if n > 0 {
			if c.discard.Load() {
				c.discarded.Add(int64(n))
			} else {
				p.Limits.MaxPayload = int(c.maxPayload.Load())
				p.Feed(buf[:n])
				if perr := c.parse(&p); perr != nil {
					c.mu.Lock()
					c.parseErr = perr
					c.readErr = perr
					c.notifyLocked()
					c.mu.Unlock()
					_ = c.raw.Close()
					return
				}
			}
		}
		if err != nil {
			c.mu.Lock()
			c.readErr = err
			c.truncated = p.Buffered() && !c.discard.Load()
			c.notifyLocked()
			c.mu.Unlock()
			return
		}
	}
}

// parse records every complete op of the chunk fed to p.
func (c *Client) parse(p *proto.Parser) error {
	for {
		op, err := p.Next()
		if err != nil {
			return err
		}
		if op == nil {
			return nil
		}
		c.record(op)
	}
}

// record stores a deep copy of op, checks its content, and answers a PING
// in basic mode.
func (c *Client) record(op *proto.Op) {
	cp := copyOp(op)
	v := violation(&cp)
	c.mu.Lock()
	c.ops = append(c.ops, cp)
	switch cp.Kind {
	case proto.KindSub:
		c.subs[cp.SID] = &interest{subject: string(cp.Subject)}
	case proto.KindUnsub:
		if in := c.subs[cp.SID]; in != nil {
			if cp.Max == 0 || in.delivered >= uint64(cp.Max) {
				delete(c.subs, cp.SID)
			} else {
				in.max = uint64(cp.Max)
			}
		}
	}
	pong := c.basic && cp.Kind == proto.KindPing
	c.answered = append(c.answered, pong)
	if v != nil {
		c.violations = append(c.violations, v)
	}
	c.notifyLocked()
	c.mu.Unlock()
	if pong {
		_ = c.SendPong()
	}
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func copyOp(op *proto.Op) proto.Op {
	return proto.Op{
		Kind:    op.Kind,
		Owned:   true,
		SID:     op.SID,
		Max:     op.Max,
		Subject: clone(op.Subject),
		Reply:   clone(op.Reply),
		Queue:   clone(op.Queue),
		Header:  clone(op.Header),
		Payload: clone(op.Payload),
		Text:    clone(op.Text),
	}
}

// violation checks the content of a well-formed op.
func violation(op *proto.Op) error {
	switch op.Kind {
	case proto.KindPub, proto.KindHPub:
		if err := proto.ValidatePublishSubject(string(op.Subject)); err != nil {
			return fmt.Errorf("%v subject %q: %w", op.Kind, op.Subject, err)
		}
		if len(op.Reply) > 0 {
			if err := proto.ValidatePublishSubject(string(op.Reply)); err != nil {
				return fmt.Errorf("%v reply %q: %w", op.Kind, op.Reply, err)
			}
		}
		if op.Kind == proto.KindHPub {
			if len(op.Header) == 0 {
				return fmt.Errorf("HPUB %q without header block", op.Subject)
			}
			if err := proto.ValidateHeaderBlock(op.Header); err != nil {
				return fmt.Errorf("HPUB %q header: %w", op.Subject, err)
			}
		}
	case proto.KindSub:
		if err := proto.ValidateSubscribeSubject(string(op.Subject)); err != nil {
			return fmt.Errorf("SUB subject %q: %w", op.Subject, err)
		}
		if len(op.Queue) > 0 {
			if err := proto.ValidateQueue(string(op.Queue)); err != nil {
				return fmt.Errorf("SUB queue %q: %w", op.Queue, err)
			}
		}
	case proto.KindConnect:
		if !json.Valid(op.Text) {
			return fmt.Errorf("CONNECT: invalid JSON %s", proto.Excerpt(op.Text))
		}
	}
	return nil
}

// Next returns the next operation the client sent (a deep copy the caller
// owns), waiting until one arrives, ctx ends or the connection closes with
// nothing left to read (then the read or parse error, io.EOF for an orderly
// close).
func (c *Client) Next(ctx context.Context) (*proto.Op, error) {
	for {
		c.mu.Lock()
		if c.next < len(c.ops) {
			op := copyOp(&c.ops[c.next])
			c.next++
			c.mu.Unlock()
			return &op, nil
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
			continue
		case <-c.done:
			// Take what was recorded before the reader returned.
			c.mu.Lock()
			more := c.next < len(c.ops)
			err := c.readErr
			c.mu.Unlock()
			if more {
				continue
			}
			if err == nil || errors.Is(err, net.ErrClosed) {
				err = ErrClosed
			}
			return nil, err
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// Expect returns the next operation of kind k, skipping others.
func (c *Client) Expect(ctx context.Context, k proto.Kind) (*proto.Op, error) {
	for {
		op, err := c.Next(ctx)
		if err != nil {
			return nil, err
		}
		if op.Kind == k {
			return op, nil
		}
	}
}

// ExpectConnect returns the JSON of the CONNECT the client sent. CONNECT
// must be the first operation.
func (c *Client) ExpectConnect(ctx context.Context) ([]byte, error) {
	op, err := c.Next(ctx)
	if err != nil {
		return nil, err
	}
	if op.Kind != proto.KindConnect {
		return nil, fmt.Errorf("fakeserver: first op is %v, not CONNECT", op.Kind)
	}
	return op.Text, nil
}

// Handshake sends info (see SendInfo), waits for CONNECT and switches to
// ServeBasic, which answers the client's PING with the PONG that completes
// its handshake. It returns the CONNECT JSON.
func (c *Client) Handshake(ctx context.Context, info any) ([]byte, error) {
	if err := c.SendInfo(info); err != nil {
		return nil, err
	}
	js, err := c.ExpectConnect(ctx)
	if err != nil {
		return nil, err
	}
	c.ServeBasic()
	return js, nil
}

// ServeBasic answers every PING with a PONG from now on, and at once every
// PING received but not yet returned by Next. PINGs still appear in Next
// and Ops.
func (c *Client) ServeBasic() {
	c.mu.Lock()
	c.basic = true
	pongs := 0
	for i := c.next; i < len(c.ops); i++ {
		if c.ops[i].Kind == proto.KindPing && !c.answered[i] {
			c.answered[i] = true
			pongs++
		}
	}
	c.mu.Unlock()
	for range pongs {
		_ = c.SendPong()
	}
}

// StopReading makes the connection stop reading what the client sends,
// once the read under way (if any) returns: like a server that never
// reads, it lets the client's writes fill the socket buffers and block.
// Nothing more is recorded; the connection stays open until closed.
func (c *Client) StopReading() { c.stopRead.Store(true) }

// Discard stops parsing: bytes from the client are read and counted
// (Discarded) but not recorded. Call it before sending what makes the
// client switch protocols (an INFO with tls_required).
func (c *Client) Discard() { c.discard.Store(true) }

// Discarded returns the number of bytes read in Discard mode.
func (c *Client) Discarded() int64 { return c.discarded.Load() }

// Ops returns a snapshot of every operation recorded so far. The ops must
// not be modified.
func (c *Client) Ops() []proto.Op {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]proto.Op(nil), c.ops...)
}

// Pubs returns the PUB and HPUB operations recorded so far.
func (c *Client) Pubs() []proto.Op {
	var out []proto.Op
	for _, op := range c.Ops() {
		if op.Kind == proto.KindPub || op.Kind == proto.KindHPub {
			out = append(out, op)
		}
	}
	return out
}

// Count returns how many operations of kind k were recorded so far.
func (c *Client) Count(k proto.Kind) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for i := range c.ops {
		if c.ops[i].Kind == k {
			n++
		}
	}
	return n
}

// ParseErr returns the parse error that closed the connection, or nil.
func (c *Client) ParseErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.parseErr
}

// Violations returns the content violations recorded so far.
func (c *Client) Violations() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]error(nil), c.violations...)
}

// Truncated reports whether the connection ended in the middle of an
// operation (known once Done is closed).
func (c *Client) Truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.truncated
}

// Err returns why the reader stopped (io.EOF when the client closed the
// connection), or nil while it runs.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readErr
}

// Send writes raw bytes to the client.
func (c *Client) Send(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.conn.Write(b)
	return err
}

// SendInfo sends "INFO <json>". info may be nil (DefaultInfo()), a []byte,
// string or json.RawMessage sent as is, or anything json.Marshal accepts.
// A max_payload in it becomes the limit for the client's PUBs.
func (c *Client) SendInfo(info any) error {
	var js []byte
	switch v := info.(type) {
	case nil:
		js, _ = json.Marshal(DefaultInfo())
	case []byte:
		js = v
	case json.RawMessage:
		js = v
	case string:
		js = []byte(v)
	default:
		var err error
		if js, err = json.Marshal(v); err != nil {
			return fmt.Errorf("fakeserver: marshal INFO: %w", err)
		}
	}
	var mp struct {
		MaxPayload int64 `json:"max_payload"`
	}
	if json.Unmarshal(js, &mp) == nil && mp.MaxPayload > 0 {
		c.maxPayload.Store(mp.MaxPayload)
	}
	if c.tlsDone == nil {
		return c.Send(wire.AppendInfo(nil, js))
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.tlsDone:
		_, err := c.conn.Write(wire.AppendInfo(nil, js))
		return err
	default:
	}
	// The first INFO, then the TLS handshake; the reader waits for it.
	_, err := c.raw.Write(wire.AppendInfo(nil, js))
	if err == nil {
		tc := tls.Server(c.raw, c.s.tls)
		if err = tc.HandshakeContext(c.ctx); err == nil {
			c.conn = tc
		}
	}
	c.mu.Lock()
	c.tlsErr = err
	c.mu.Unlock()
	close(c.tlsDone)
	if err != nil {
		c.shut()
	}
	return err
}

// SendMsg sends "MSG <subject> <sid> [reply] <size>" and the payload.
func (c *Client) SendMsg(subject string, sid uint64, reply string, payload []byte) error {
	return c.Send(wire.AppendMsg(nil, subject, sid, reply, payload))
}

// SendHMsg sends an HMSG with the raw header block (not validated).
func (c *Client) SendHMsg(subject string, sid uint64, reply string, header, payload []byte) error {
	return c.Send(wire.AppendHMsg(nil, subject, sid, reply, header, payload))
}

// SendErr sends "-ERR '<text>'".
func (c *Client) SendErr(text string) error { return c.Send(wire.AppendErr(nil, text)) }

// SendPing sends "PING".
func (c *Client) SendPing() error { return c.Send(proto.AppendPing(nil)) }

// SendPong sends "PONG".
func (c *Client) SendPong() error { return c.Send(proto.AppendPong(nil)) }

// SendOK sends "+OK".
func (c *Client) SendOK() error { return c.Send(wire.AppendOK(nil)) }

// ErrNoInterest is returned by SendTo when no subscription of the client
// matches the subject.
var ErrNoInterest = errors.New("fakeserver: no subscription matches the subject")

// SendTo delivers a message as a server routes a publish: to the client's
// subscription whose subject matches subject (wildcards included; the
// lowest SID when several do), as MSG, or as HMSG when header is not nil
// (the raw header block, not validated). The subscriptions are those the
// client's SUB and UNSUB operations have made so far, an UNSUB with a
// maximum counting the messages SendTo routed. It returns ErrNoInterest
// when none matches.
func (c *Client) SendTo(subject, reply string, header, payload []byte) error {
	c.mu.Lock()
	var sid uint64
	for id, in := range c.subs {
		if (sid == 0 || id < sid) && MatchSubject(in.subject, subject) {
			sid = id
		}
	}
	if sid != 0 {
		in := c.subs[sid]
		in.delivered++
		if in.max != 0 && in.delivered >= in.max {
			delete(c.subs, sid)
		}
	}
	c.mu.Unlock()
	if sid == 0 {
		return fmt.Errorf("%w: %s", ErrNoInterest, subject)
	}
	if header != nil {
		return c.SendHMsg(subject, sid, reply, header, payload)
	}
	return c.SendMsg(subject, sid, reply, payload)
}

// MatchSubject reports whether the subscription subject pattern (tokens,
// "*" for any one token, a final ">" for one or more) matches the publish
// subject subject.
func MatchSubject(pattern, subject string) bool {
	for {
		ptok, prest, pmore := strings.Cut(pattern, ".")
		stok, srest, smore := strings.Cut(subject, ".")
		switch {
		case ptok == ">" && !pmore:
			return stok != ""
		case ptok != "*" && ptok != stok, stok == "":
			return false
		case !pmore || !smore:
			return !pmore && !smore
		}
		pattern, subject = prest, srest
	}
}
