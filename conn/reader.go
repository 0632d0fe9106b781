package conn

import (
	"github.com/natsio/natsio/proto"
)

// reader is the state of the goroutine that reads a link's socket: the
// parser, the read buffer, the messages staged for a subscription and the
// consumers to wake. Every field belongs to that goroutine (the
// handshake's, then the link's reader goroutine, readLoop): nothing here
// is shared, so nothing here is locked.
type reader struct {
	l *link // fixed

	p   proto.Parser
	buf []byte
	err error // read error held back until buffered ops are consumed
	// filled: the last read filled buf (fill grows it).
	filled bool

	// lastSID and lastSub remember the last routed subscription.
	lastSID uint64
	lastSub *Subscription

	// Counters published to the connection's atomics once per read
	// (flushStats), not once per message. stats is set before the
	// reader goroutine starts, then fixed.
	inMsgs, inBytes uint64
	sockIn          uint64 // bytes read from the socket
	lentMsgs        uint64
	stats           *connStats

	// wakes holds the subscriptions that received messages into an empty
	// queue since the last wake-up; held counts the messages queued
	// meanwhile. Consumers are woken before the next read from the
	// socket, or every wakeBatch messages: a burst costs one wake-up.
	wakes []*Subscription
	held  int
	// stage holds the messages for stageSub read since the last flush
	// (flushStage): consecutive messages of one subscription are queued in
	// one go, under one lock. Each was admitted before it was copied
	// (stageRoom), so flushing queues them all. It is flushed before any
	// other op, any message for another subscription or for one not in a
	// queue mode, and each socket read, so it changes no order anyone can
	// observe.
	stageSub *Subscription
	stage    []*Msg
	// stageMsgs and stageBytes are the room stageSub's queue had when its
	// stage began, less what is staged: staged messages are admitted
	// against it without taking the subscription's lock (the room only
	// grows meanwhile: its consumer takes).
	stageMsgs, stageBytes int
	// scratch is the view handed to a deliverView subscription's function.
	scratch Msg
	// cut holds the body of a message cut by a socket read while the
	// parser assembles it (cutBody): it is copied like any other before
	// the parser goes on, so one buffer serves them all.
	cut []byte
}

// cutBody is the parser's allocator, for the body of a message that spans
// socket reads. Bodies up to readBufSize are assembled in r.cut, reused
// (the message is copied from it, msgAlloc.build); a larger one gets
// memory of its own, which becomes the message's (ownedBody).
func (r *reader) cutBody(n int) []byte {
	if n > readBufSize {
		return make([]byte, n)
	}
	if cap(r.cut) < n {
		r.cut = make([]byte, max(n, min(2*cap(r.cut), readBufSize)))
	}
	return r.cut[:n:n]
}

// ownedBody reports whether op's body is memory of its own (cutBody) that
// a message may keep instead of a copy.
func ownedBody(op *proto.Op) bool { return op.Owned && len(op.Body) > readBufSize }

// next returns the next op, reading from the socket as needed. The op is
// valid until the next call. The handshake reads with it; the read loop
// (readLoop) calls the parser and fill itself.
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
// reads, what is staged is queued and the consumers noted are woken. A
// read error that came with data is held back (r.err) until that data is
// parsed.
func (r *reader) fill() error {
	if r.err != nil {
		return r.err
	}
	r.wakeAll()
	if r.filled && len(r.buf) < readBufSize {
		// The last read filled the buffer: more is coming than it holds.
		r.buf = make([]byte, min(2*len(r.buf), readBufSize))
	}
	n, err := r.l.c.Read(r.buf)
	r.filled = n == len(r.buf)
	if n > 0 {
		r.sockIn += uint64(n)
		r.p.Feed(r.buf[:n])
	}
	if err != nil {
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
	if r.lentMsgs > 0 {
		r.stats.lentMsgs.Add(r.lentMsgs)
		r.lentMsgs = 0
	}
}

// deferWake notes that s must be woken before the next read.
func (r *reader) deferWake(s *Subscription) {
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
	if len(r.stage) == 0 {
		r.stageSub = nil
		return
	}
	r.flushStats() // counted before anyone can take them
	if r.stageSub.pushAll(r.stage) {
		r.deferWake(r.stageSub)
	}
	clear(r.stage)
	r.stage = r.stage[:0]
	r.stageSub = nil
}

// wakeAll queues what is staged, publishes the counters and wakes the
// consumers noted by deferWake.
func (r *reader) wakeAll() {
	r.flushStage()
	r.flushStats()
	for i, s := range r.wakes {
		s.signal()
		r.wakes[i] = nil
	}
	r.wakes = r.wakes[:0]
	r.held = 0
}
