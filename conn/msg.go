package conn

import (
	"strings"
	"unsafe"

	"github.com/natsio/natsio/proto"
)

// Msg is a message delivered to a subscription. It and every field belong to
// the receiver: the client never reuses a delivered message's memory, so a
// Msg may be kept, passed to other goroutines and read at any time.
//
// Messages are carved from shared slabs to keep allocation far below one per
// message; a retained message keeps its slab (64 KiB) reachable. Copy Data
// out of messages you keep for long if that matters.
type Msg struct {
	Subject string
	Reply   string
	// Header is the message's header, read in place (see proto.Header): its
	// strings are views of the message's memory, with the message's
	// lifetime. It is zero (IsZero) when the message has none.
	Header proto.Header
	Data   []byte
	sub    *Subscription
}

// msgOverhead is what the pending limits (PendingLimits,
// ConnectionPendingLimit) count for each queued message on top of its
// subject, reply, header and data: the Msg (88 bytes) and its place in the
// queue. Without it a flood of empty messages would be free.
const msgOverhead = 128

// opPendingSize is what the message op counts against the pending limits
// (pendingSize of the Msg built from it).
func opPendingSize(op *proto.Op) int {
	return len(op.Subject) + len(op.Reply) + len(op.Body) + msgOverhead
}

// pendingSize is what m counts against the pending limits.
func (m *Msg) pendingSize() int {
	return len(m.Subject) + len(m.Reply) + len(m.Header.Block()) + len(m.Data) + msgOverhead
}

// Sub returns the subscription that received m.
func (m *Msg) Sub() *Subscription { return m.sub }

// Status returns the status code of a status message (for example 503 for
// no responders, 100 for a JetStream heartbeat), or 0.
func (m *Msg) Status() int {
	code, _ := m.Header.Status()
	return code
}

// Respond publishes data to m's reply subject.
func (m *Msg) Respond(data []byte) error {
	if m.Reply == "" {
		return ErrNoReply
	}
	if m.sub == nil {
		return ErrBadSubscription
	}
	if m.sub.nc.opts.observer != nil {
		return m.sub.nc.publishObserved(PubRespond, m.Reply, "", nil, data, m.sub.replyMode(), m)
	}
	return m.sub.nc.publish(m.Reply, "", nil, data, m.sub.replyMode())
}

// RespondMsg publishes data with headers to m's reply subject.
func (m *Msg) RespondMsg(h *proto.Header, data []byte) error {
	if m.Reply == "" {
		return ErrNoReply
	}
	if m.sub == nil {
		return ErrBadSubscription
	}
	if m.sub.nc.opts.observer != nil {
		return m.sub.nc.publishObserved(PubRespond, m.Reply, "", h, data, m.sub.replyMode(), m)
	}
	return m.sub.nc.publish(m.Reply, "", h, data, m.sub.replyMode())
}

// replyMode is how a response to a message of s is written: at once by the
// responding goroutine, unless s's handler has more messages of the same
// batch to handle, whose responses will share its write (a reply that no
// later one takes along is written within lazyDelay).
func (s *Subscription) replyMode() pubMode {
	if s.more.Load() {
		return pubLazy
	}
	return pubUrgent
}

// clone returns an owned copy of m, for a lent message that must outlive
// its batch.
func (m *Msg) clone() *Msg {
	c := &Msg{sub: m.sub, Subject: strings.Clone(m.Subject), Reply: strings.Clone(m.Reply)}
	block := m.Header.Block()
	body := make([]byte, len(block)+len(m.Data))
	n := copy(body, block)
	copy(body[n:], m.Data)
	switch {
	case n > 0:
		c.Header = proto.HeaderFromBlock(body[:n:n])
	case !m.Header.IsZero():
		c.Header = *m.Header.Clone()
	}
	c.Data = body[n:len(body):len(body)]
	return c
}

// msgAlloc carves messages and their bytes out of chunks. Each
// subscription has its own (Subscription.alloc), used only by the reader
// goroutine: a subscription's chunks hold its own messages only, so what a
// queued message pins is a share of memory that holds other messages of
// the same queue, taken in order, never another subscription's. Its
// chunks start small and double with each refill up to msgChunk Msgs and
// slabBytes bytes: an idle subscription holds little, a busy one
// allocates rarely.
type msgAlloc struct {
	msgs []Msg
	slab []byte
	// nMsgs and nSlab are the sizes of the last chunks made.
	nMsgs, nSlab int
	// lastSubject is the subject of the previous message: messages of a
	// wildcard or JetStream subscription often repeat it, and then share
	// one copy.
	lastSubject string
}

func (a *msgAlloc) msg() *Msg {
	if len(a.msgs) == 0 {
		a.nMsgs = min(max(2*a.nMsgs, firstMsgChunk), msgChunk)
		a.msgs = make([]Msg, a.nMsgs)
	}
	m := &a.msgs[0]
	a.msgs = a.msgs[1:]
	return m
}

// bytes returns n bytes no one else references.
func (a *msgAlloc) bytes(n int) []byte {
	if n > slabBytes/4 {
		return make([]byte, n)
	}
	if len(a.slab) < n {
		a.nSlab = min(max(2*a.nSlab, firstSlabBytes), slabBytes)
		a.slab = make([]byte, max(a.nSlab, n))
	}
	b := a.slab[:n:n]
	a.slab = a.slab[n:]
	return b
}

// string returns a string holding a copy of b, carved from a slab. The
// slab bytes are never written again, so the string is immutable.
func (a *msgAlloc) string(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	c := a.bytes(len(b))
	copy(c, b)
	return unsafe.String(&c[0], len(c))
}

// view fills the reader's scratch message with views of op, for a
// deliverView subscription's function: valid until it returns.
func (r *reader) view(op *proto.Op, sub *Subscription) *Msg {
	m := &r.scratch
	fillView(m, op, sub)
	return m
}

// fillView points m's fields at op's views.
func fillView(m *Msg, op *proto.Op, sub *Subscription) {
	m.sub = sub
	m.Subject = unsafeString(op.Subject)
	m.Reply = unsafeString(op.Reply)
	h := len(op.Header)
	m.Header = proto.HeaderFromBlock(op.Body[:h:h])
	m.Data = op.Body[h:len(op.Body):len(op.Body)]
}

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// build turns a parsed MSG/HMSG into an owned Msg for sub, carved from
// sub's own chunks (a), in the Msg m (nil: one of a's).
func (a *msgAlloc) build(op *proto.Op, sub *Subscription, m *Msg) *Msg {
	if m == nil {
		m = a.msg()
	}
	m.sub = sub
	if sub.literal && string(op.Subject) == sub.Subject {
		m.Subject = sub.Subject
	} else if string(op.Subject) == a.lastSubject {
		m.Subject = a.lastSubject
	} else {
		m.Subject = a.string(op.Subject)
		a.lastSubject = m.Subject
	}
	m.Reply = a.string(op.Reply)
	var body []byte
	if ownedBody(op) {
		body = op.Body
	} else if n := len(op.Body); n > 0 {
		body = a.bytes(n)
		copy(body, op.Body)
	}
	h := len(op.Header)
	m.Header = proto.HeaderFromBlock(body[:h:h])
	m.Data = body[h:len(body):len(body)]
	return m
}
