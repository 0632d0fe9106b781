package conn

import (
	"github.com/natsio/natsio/proto"
)

// reader is the state of whoever holds a link's reader role (role.go):
// the parser, the read buffer, the message allocator, the messages staged
// for a subscription, the consumers to wake, the lent buffers. Every field
// is owned by the role holder: the reader goroutine, or a requester or
// consumer reading inline. acquire hands it out with the role and release
// takes it back; in race builds its dispatch methods panic when called
// while nobody holds the role (mustHold).
type reader struct {
	l *link // fixed

	p     proto.Parser
	buf   []byte
	err   error // read error held back until buffered ops are consumed
	alloc msgAlloc
	// filled: the last read filled buf (fill grows it).
	filled bool
	// deadline: the holder reads with a read deadline of its own (an
	// inline read); its expiry leaves the link usable.
	deadline bool

	// lastSID and lastSub remember the last routed subscription.
	lastSID uint64
	lastSub *Subscription

	// Counters published to the connection's atomics once per read
	// (flushStats), not once per message. stats is set before the
	// reader goroutine starts, then fixed.
	inMsgs, inBytes    uint64
	sockIn             uint64 // bytes read from the socket
	lentMsgs, lentBufs uint64
	stats              *connStats

	// wakes holds the subscriptions that received messages into an empty
	// queue since the last wake-up; held counts the messages queued
	// meanwhile. Consumers are woken before the next read from the
	// socket, or every wakeBatch messages: a burst costs one wake-up.
	wakes []*Subscription
	held  int
	// stage holds the messages for stageSub read since the last flush
	// (flushStage): consecutive messages of one subscription are queued in
	// one go, under one lock and one pending-bytes reservation. It is
	// flushed before any other op, any message for another subscription
	// or for a subscription not in a queue mode, each socket read, and
	// the release of the role, so it changes no order anyone can observe.
	stageSub *Subscription
	stage    []*Msg
	// scratch is the view handed to a deliverView subscription's function.
	scratch Msg

	// Lent batches (lend.go): lendSub is the subscription whose own
	// consumer holds the role and takes views; lentTo the lender whose
	// messages may alias buf, lent for its batch lentSeq.
	lendSub *Subscription
	lentTo  *lender
	lentSeq uint64
	// self is the request whose own goroutine holds the role (readFor):
	// its response is handed over without a channel (respMux.routeTo).
	self *waiter
}

// next returns the next op, reading from the socket as needed. The op is
// valid until the next call. The handshake reads with it; the read loop
// (readUntil) calls the parser and fill itself.
func (r *reader) next() (*proto.Op, error) {
	for {
		op, err := r.p.Next()
		if err != nil {
			return nil, &ProtocolError{Err: err}
		}
		if op != nil {
			return op, nil
		}
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
}

// fill reads the next chunk from the socket into the parser. Before it
// reads, what is staged is queued, the consumers noted are woken and a
// lent buffer is handed over (keepLent). A read error that came with data
// is held back (r.err) until that data is parsed. An inline reader's own
// deadline returns errInlineDeadline and leaves the link usable.
func (r *reader) fill() error {
	r.mustHold()
	if r.err != nil {
		return r.err
	}
	r.wakeAll()
	r.keepLent()
	if r.filled && len(r.buf) < readBufSize {
		// The last read filled the buffer: more is coming than it holds.
		// The old buffer stays valid for whatever still refers to it
		// (lent messages).
		r.buf = make([]byte, min(2*len(r.buf), readBufSize))
	}
	n, err := r.l.c.Read(r.buf)
	r.filled = n == len(r.buf)
	if n > 0 {
		r.sockIn += uint64(n)
		r.p.Feed(r.buf[:n])
	}
	if err != nil {
		if r.deadline && isTimeout(err) {
			// An inline reader's own deadline: the link is fine.
			if n == 0 {
				return errInlineDeadline
			}
			return nil
		}
		r.err = err
	}
	return nil
}

// flushStats publishes the reader's counters.
func (r *reader) flushStats() {
	if r.stats == nil {
		return
	}
	if r.inMsgs > 0 {
		r.stats.inMsgs.Add(r.inMsgs)
		r.stats.inBytes.Add(r.inBytes)
		r.inMsgs, r.inBytes = 0, 0
	}
	if r.sockIn > 0 {
		r.stats.socketIn.Add(r.sockIn)
		r.sockIn = 0
	}
	if r.lentMsgs > 0 || r.lentBufs > 0 {
		r.stats.lentMsgs.Add(r.lentMsgs)
		r.stats.lentBufs.Add(r.lentBufs)
		r.lentMsgs, r.lentBufs = 0, 0
	}
}

// deferWake notes that s must be woken before the next read. When s's
// consumer is blocked waiting, the reader goroutine steps aside once
// what it read is dispatched: the woken consumer reads next (role.go).
func (r *reader) deferWake(s *Subscription) {
	if s.waiting.Load() {
		r.stepAside()
	}
	for _, w := range r.wakes {
		if w == s {
			return
		}
	}
	r.wakes = append(r.wakes, s)
}

// flushStage queues the staged messages and notes their consumer for a
// wake-up if its queue was empty.
func (r *reader) flushStage() {
	r.mustHold()
	if len(r.stage) == 0 {
		return
	}
	if r.stageSub.pushAll(r.stage) {
		r.deferWake(r.stageSub)
	}
	clear(r.stage)
	r.stage = r.stage[:0]
}

// wakeAll queues what is staged, publishes the counters and wakes the
// consumers noted by deferWake.
func (r *reader) wakeAll() {
	r.mustHold()
	r.flushStage()
	r.flushStats()
	for i, s := range r.wakes {
		s.signal()
		r.wakes[i] = nil
	}
	r.wakes = r.wakes[:0]
	r.held = 0
}

// stepAside makes the reader goroutine, if it holds the role, step aside
// once the parser has used up what was read: a requester got its response
// or a waiting consumer was woken, and will read next itself.
func (r *reader) stepAside() {
	if r.l.inlineOK && r.l.role.Load() == roleGoroutine {
		r.l.roleStep(roleGoroutine, roleYielding)
	}
}
