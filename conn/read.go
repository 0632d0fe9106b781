package conn

// readLoop is the reader goroutine of connection generation gen: from the
// handshake on, it alone reads l's socket, and it dispatches every op it
// reads (handleOp) until the link fails. Nobody else ever reads the
// socket, so what it owns (l.rd) needs no lock, and what it hands out
// (queued messages, responses) reaches other goroutines only through the
// subscriptions' queues and the requests' channels. Internal handlers
// (deliverView, deliverMux) run here, never on a user's goroutine.
func (nc *Conn) readLoop(l *link, gen uint64) {
	defer nc.wg.Done()
	r := &l.rd
	for {
		op, err := r.p.Next()
		if err != nil {
			nc.readFailed(r, gen, &ProtocolError{Err: err})
			return
		}
		if op != nil {
			if nc.handleOp(r, gen, op) {
				return
			}
			continue
		}
		// The parser has used up what was read (fill queues what is
		// staged and wakes the consumers before it reads).
		if err := r.fill(); err != nil {
			nc.readFailed(r, gen, err)
			return
		}
	}
}

// readFailed handles a read error of the reader goroutine: the link is
// lost.
func (nc *Conn) readFailed(r *reader, gen uint64, err error) {
	r.wakeAll()
	if IsProtocolError(err) {
		nc.stats.protocolErrors.Add(1)
		nc.ev.push(Event{Kind: EventProtocolError, Err: err})
	}
	nc.connLost(gen, err)
}
