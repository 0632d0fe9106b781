package conn

import (
	"github.com/natsio/natsio/proto"
)

// readLoop reads and dispatches ops of connection generation gen until the
// connection fails. It holds the link's reader role, except while parked
// after handing a response to a requester (see inline.go).
func (nc *Conn) readLoop(l *link, gen uint64) {
	defer nc.wg.Done()
	defer l.parkTimer.Stop()
	for {
		op, err := l.next()
		if err != nil {
			nc.readFailed(l, gen, err)
			l.release()
			return
		}
		if nc.handleOp(l, gen, op) {
			l.release()
			return
		}
		if l.p.Unread() == 0 {
			l.flushStage() // may note a waiting consumer (wokeWaiter)
		}
		if (l.replied || l.wokeWaiter) && l.inline && l.p.Unread() == 0 {
			l.replied, l.wokeWaiter = false, false
			// A requester just got its response and will likely send the
			// next request soon: let it read that response itself. Not
			// while others wait on their channels: nobody would read for
			// them.
			if !nc.othersWaiting() {
				if !l.park() {
					return
				}
				nc.stats.readerResumes.Add(1)
			}
		}
	}
}

// readFailed handles a read error of the role holder: the link is lost.
func (nc *Conn) readFailed(l *link, gen uint64, err error) {
	l.wakeAll()
	l.flushStats()
	if IsProtocolError(err) {
		nc.stats.protocolErrors.Add(1)
		nc.ev.push(Event{Kind: EventProtocolError, Err: err})
	}
	nc.connLost(gen, err)
}

// handleOp dispatches one op read by the role holder. It reports true when
// the op ended the connection (connLost was called).
func (nc *Conn) handleOp(l *link, gen uint64, op *proto.Op) bool {
	if op.Kind != proto.KindMsg && op.Kind != proto.KindHMsg {
		l.flushStage() // messages before a PONG are queued when it is seen
	}
	switch op.Kind {
	case proto.KindMsg, proto.KindHMsg:
		nc.deliver(l, op)
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
		if err := nc.asyncInfo(l, gen, op.Text); err != nil {
			l.wakeAll()
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
			l.wakeAll()
			nc.connLost(gen, se)
			return true
		}
	}
	return false
}

// lookup finds the subscription of sid, remembering the last one.
func (nc *Conn) lookup(l *link, sid uint64) *Subscription {
	if l.lastSub != nil && l.lastSID == sid {
		return l.lastSub
	}
	nc.subMu.RLock()
	s := nc.subs[sid]
	nc.subMu.RUnlock()
	if s != nil {
		l.lastSID, l.lastSub = sid, s
	}
	return s
}

// deliver routes a MSG or HMSG to its subscription.
func (nc *Conn) deliver(l *link, op *proto.Op) {
	l.inMsgs++
	l.inBytes += uint64(op.Size())
	s := nc.lookup(l, op.SID)
	if s == nil {
		nc.stats.unknownSID.Add(1)
		return
	}
	if proto.ValidateHeaderBlock(op.Header) != nil {
		nc.stats.badHeaders.Add(1)
		nc.ev.push(Event{Kind: EventProtocolError, Sub: s, Err: &ProtocolError{Err: proto.ErrBadHeader}})
		return
	}
	if s.inline != nil {
		// A response or an inline handler may act on what arrived
		// before it: that is queued first.
		l.flushStage()
	}
	if s.inline != nil && s.borrowed {
		s.inline(l.view(op, s))
		return
	}
	var m *Msg
	if l.lendSub == s && inBuf(op, l.buf) {
		m = l.lendMsg(op, s)
	} else {
		m = l.alloc.build(op, s)
	}
	if s.inline != nil {
		// The request inbox: the response is counted before its
		// requester can see it. A requester reading inline (l.self) made
		// its request after the inbox existed, so nc.resp.sub is set and
		// visible to it.
		l.flushStats()
		if w := l.self; w != nil && s == nc.resp.sub {
			nc.resp.routeTo(m, w)
		} else {
			s.inline(m)
		}
		l.replied = true
		return
	}
	if s.max.Load() == 0 {
		if l.stageSub != s {
			l.flushStage()
			l.stageSub = s
		}
		l.stage = append(l.stage, m)
		l.held++
		if l.held >= wakeBatch {
			l.wakeAll()
		}
		return
	}
	// Auto-unsubscribe: count under the lock shared with AutoUnsubscribe.
	l.flushStage() // what is staged for s goes first
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
func (nc *Conn) asyncInfo(l *link, gen uint64, text []byte) error {
	info, err := parseInfo(text)
	if err != nil {
		return err
	}
	l.setMaxPayload(info.MaxPayload)
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
