package conn

import (
	"github.com/natsio/natsio/proto"
)

// deliveryMode is how deliver hands a subscription its messages. It is
// fixed when the subscription is made, except that the first Messages
// loop with Borrowed moves a deliverQueue subscription to deliverLent for
// the rest of its life.
type deliveryMode = uint32

const (
	// deliverQueue: owned copies (carved from the subscription's own
	// chunks, msgAlloc) are queued for its consumer.
	deliverQueue deliveryMode = iota
	// deliverLent: copies in memory the subscription recycles once its
	// consumer is done with them (lend.go) are queued.
	deliverLent
	// deliverView: a view of the read buffer is handed to a function on
	// the reader goroutine (SubscribeInlineUnsafe); nothing is queued.
	deliverView
	// deliverMux: the request inbox; an owned copy is routed to its
	// requester (respMux) on the reader goroutine.
	deliverMux
)

// handleOp dispatches one op read by the reader goroutine. It reports
// true when the op ended the connection (connLost was called).
func (nc *Conn) handleOp(r *reader, gen uint64, op *proto.Op) bool {
	if op.Kind != proto.KindMsg && op.Kind != proto.KindHMsg {
		r.flushStage() // messages before a PONG are queued when it is seen
	}
	switch op.Kind {
	case proto.KindMsg, proto.KindHMsg:
		nc.deliver(r, op)
	case proto.KindPing:
		nc.mu.Lock()
		// One PONG waiting to be written answers every PING read until
		// it is (see pongOwed): what the server makes the client queue
		// stays bounded when it never reads.
		if nc.gen == gen && nc.state == stateConnected && !nc.pongOwed {
			nc.wbuf = proto.AppendPong(nc.wbuf)
			nc.pongOwed = true
			nc.kickLocked()
		}
		nc.mu.Unlock()
	case proto.KindPong:
		nc.gotPong(gen)
	case proto.KindInfo:
		if err := nc.asyncInfo(r, gen, op.Text); err != nil {
			r.wakeAll()
			nc.stats.protocolErrors.Add(1)
			nc.ev.push(Event{Kind: EventProtocolError, Err: err})
			nc.connLost(gen, err)
			return true
		}
	case proto.KindErr:
		se := classifyErr(op.Text)
		nc.stats.serverErrors.Add(1)
		nc.opts.logger.Warn("nats: server error", "err", se)
		nc.ev.push(Event{Kind: EventServerError, Err: se})
		if se.Fatal() {
			r.wakeAll()
			nc.connLost(gen, se)
			return true
		}
	}
	return false
}

// lookup finds the subscription of sid, remembering the last one.
func (nc *Conn) lookup(r *reader, sid uint64) *Subscription {
	if r.lastSub != nil && r.lastSID == sid {
		return r.lastSub
	}
	nc.subMu.RLock()
	s := nc.subs[sid]
	nc.subMu.RUnlock()
	if s != nil {
		r.lastSID, r.lastSub = sid, s
	}
	return s
}

// deliver routes a MSG or HMSG to its subscription, by the subscription's
// delivery mode. A queued message is admitted to its subscription's queue
// (admit) before it is copied: a dropped message costs no memory.
func (nc *Conn) deliver(r *reader, op *proto.Op) {
	r.inMsgs++
	r.inBytes += uint64(op.Size())
	s := nc.lookup(r, op.SID)
	if s == nil {
		nc.stats.unknownSID.Add(1)
		return
	}
	if proto.ValidateHeaderBlock(op.Header) != nil {
		nc.stats.badHeaders.Add(1)
		nc.ev.push(Event{Kind: EventProtocolError, Sub: s, Err: &ProtocolError{Err: proto.ErrBadHeader}})
		return
	}
	mode := s.mode.Load()
	switch mode {
	case deliverView:
		// The function may act on what arrived before: that is queued
		// first.
		r.flushStage()
		s.fn(r.view(op, s))
		return
	case deliverMux:
		r.flushStage()
		// The response is counted before its requester can see it.
		m := s.alloc.build(op, s, nil)
		r.flushStats()
		s.fn(m)
		return
	}
	size := opPendingSize(op)
	if s.max.Load() != 0 {
		nc.deliverCounted(r, op, s, mode, size)
		return
	}
	if !r.admit(s, size) {
		return
	}
	r.stage = append(r.stage, r.build(op, s, mode))
	r.held++
	if r.held >= wakeBatch {
		r.wakeAll()
	}
}

// deliverCounted is deliver for a subscription with an auto-unsubscribe
// limit: the count is kept under the lock shared with AutoUnsubscribe.
func (nc *Conn) deliverCounted(r *reader, op *proto.Op, s *Subscription, mode deliveryMode, size int) {
	r.flushStage() // what is staged for s goes first
	s.mu.Lock()
	s.received++
	limit := s.max.Load()
	reached := s.received >= limit
	over := s.received > limit
	s.mu.Unlock()
	if over {
		return
	}
	if r.admit(s, size) {
		r.stage = append(r.stage, r.build(op, s, mode))
		r.flushStage()
	}
	if reached {
		nc.removeSub(s)
		s.close(nil)
	}
}

// build copies op into a Msg for s: into s's recycled memory when it
// lends, else into its own chunks (in a Msg from s's allocator, if it has
// one).
func (r *reader) build(op *proto.Op, s *Subscription, mode deliveryMode) *Msg {
	if mode == deliverLent {
		if m := r.lendMsg(op, s, s.lend.Load()); m != nil {
			return m
		}
	}
	var m *Msg
	if s.newMsg != nil {
		m = s.newMsg()
	}
	return s.alloc.build(op, s, m)
}

// admit decides whether a message of size bytes (as the pending limits
// count it) joins s's queue, before it is copied, and reserves its bytes
// against the connection's limit. Consecutive messages of s are admitted
// against the room its queue had when their stage began (r.stageMsgs,
// r.stageBytes): the room only grows meanwhile, so a message admitted
// always fits. When that room is used up, what is staged is queued and
// the room looked at again. A message that does not fit is dropped and
// counted. An empty queue takes one message of any size, so that a
// message as large as the server allows is never dropped by a byte
// limit below it.
func (r *reader) admit(s *Subscription, size int) bool {
	if r.stageSub != s {
		r.flushStage()
		r.stageSub = s
		r.stageMsgs, r.stageBytes = s.room()
	}
	if r.stageMsgs < 1 || r.stageBytes < size {
		r.flushStage()
		r.stageSub = s
		var empty bool
		r.stageMsgs, r.stageBytes, empty = s.roomEmpty()
		if r.stageMsgs < 1 || r.stageBytes < size && !empty {
			s.drop()
			return false
		}
	}
	if !s.nc.reservePending(size) {
		s.drop()
		return false
	}
	r.stageMsgs--
	r.stageBytes -= size
	return true
}

// gotPong answers the oldest outstanding PING.
func (nc *Conn) gotPong(gen uint64) {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	if nc.gen != gen {
		return
	}
	nc.pingsOut = 0
	if len(nc.pongs) == 0 {
		return
	}
	ch := nc.pongs[0]
	nc.pongs[0] = nil
	nc.pongs = nc.pongs[1:]
	if ch != nil {
		ch <- nil
	}
}

// asyncInfo applies an INFO received after the handshake.
func (nc *Conn) asyncInfo(r *reader, gen uint64, text []byte) error {
	info, err := parseInfo(text)
	if err != nil {
		return err
	}
	r.setMaxPayload(info.MaxPayload)
	nc.mu.Lock()
	cur := nc.cur
	nc.mu.Unlock()
	// The server list is parsed without the lock: publishers go on.
	g := nc.gossipFor(info, cur)
	nc.mu.Lock()
	if nc.gen != gen {
		nc.mu.Unlock()
		return nil
	}
	nc.info = info
	nc.jsLevel.Store(jetStreamLevel(info))
	nc.applyGossipLocked(g)
	nc.mu.Unlock()
	if info.LameDuck {
		nc.opts.logger.Warn("nats: server entering lame duck mode", "server", cur.redacted())
		nc.ev.push(Event{Kind: EventLameDuck, Server: cur.redacted()})
		nc.leaveLameDuck(gen)
	}
	return nil
}
