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
	// deliverQueue: owned copies (from the link's slabs, or from the
	// subscription's own allocator) are queued for its consumer.
	deliverQueue deliveryMode = iota
	// deliverLent: as deliverQueue, except that messages its own consumer
	// reads from the socket (readForSub) are lent views of the read
	// buffer (lend.go).
	deliverLent
	// deliverView: a view of the read buffer is handed to a function on
	// the reading goroutine (subscribeInline); nothing is queued.
	deliverView
	// deliverMux: the request inbox; an owned copy is routed to its
	// requester (respMux).
	deliverMux
)

// handleOp dispatches one op read by the role holder. It reports true when
// the op ended the connection (connLost was called).
func (nc *Conn) handleOp(r *reader, gen uint64, op *proto.Op) bool {
	r.mustHold()
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
// delivery mode.
func (nc *Conn) deliver(r *reader, op *proto.Op) {
	r.mustHold()
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
	var m *Msg
	switch s.mode.Load() {
	case deliverView:
		// The function may act on what arrived before: that is queued
		// first.
		r.flushStage()
		s.fn(r.view(op, s))
		return
	case deliverMux:
		r.flushStage()
		// The response is counted before its requester can see it. A
		// requester reading inline (r.self) made its request after the
		// inbox existed, so nc.resp.sub is set and visible to it.
		m = r.alloc.build(op, s)
		r.flushStats()
		if w := r.self; w != nil && s == nc.resp.sub {
			nc.resp.routeTo(m, w)
		} else {
			s.fn(m)
		}
		r.stepAside()
		return
	case deliverLent:
		if r.lendSub == s && inBuf(op, r.buf) {
			m = r.lendMsg(op, s)
		} else {
			m = r.alloc.build(op, s)
		}
	default: // deliverQueue
		m = r.alloc.build(op, s)
	}
	if s.max.Load() == 0 {
		if r.stageSub != s {
			r.flushStage()
			r.stageSub = s
		}
		r.stage = append(r.stage, m)
		r.held++
		if r.held >= wakeBatch {
			r.wakeAll()
		}
		return
	}
	// Auto-unsubscribe: count under the lock shared with AutoUnsubscribe.
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
	if s.push(m) {
		s.signal()
	}
	if reached {
		nc.removeSub(s)
		s.close(nil)
	}
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
	nc.npongs.Store(int32(len(nc.pongs)))
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
