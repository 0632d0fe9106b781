package conn

import (
	"context"
	"time"

	"github.com/natsio/natsio/proto"
)

// Subscribe expresses interest in subject (wildcards allowed) and returns
// the subscription; read it with Messages or NextMsg. It fails with
// ErrBadSubject before anything is sent. While disconnected the interest is
// registered and sent on reconnect.
func (nc *Conn) Subscribe(subject string) (*Subscription, error) {
	return nc.register(subject, "", nil, deliverQueue, nil, nil, nil, false)
}

// QueueSubscribe is Subscribe in queue group queue: each message goes to
// one member of the group.
func (nc *Conn) QueueSubscribe(subject, queue string) (*Subscription, error) {
	if queue == "" {
		return nil, ErrBadQueue
	}
	return nc.register(subject, queue, nil, deliverQueue, nil, nil, nil, false)
}

// SubscribeFunc calls f for each message on one goroutine of the
// subscription, in order. f may keep the message, unless Borrowed is
// given. A slow f delays only its own subscription: messages wait in its
// bounded queue (PendingLimits) meanwhile.
func (nc *Conn) SubscribeFunc(subject string, f func(*Msg), opts ...SubOpt) (*Subscription, error) {
	return nc.subscribeFunc(subject, "", f, opts)
}

// QueueSubscribeFunc is SubscribeFunc in queue group queue.
func (nc *Conn) QueueSubscribeFunc(subject, queue string, f func(*Msg), opts ...SubOpt) (*Subscription, error) {
	if queue == "" {
		return nil, ErrBadQueue
	}
	return nc.subscribeFunc(subject, queue, f, opts)
}

func (nc *Conn) subscribeFunc(subject, queue string, f func(*Msg), opts []SubOpt) (*Subscription, error) {
	if f == nil {
		return nil, invalid("nil handler")
	}
	so, err := resolveSubOpts(opts)
	if err != nil {
		return nil, err
	}
	return nc.register(subject, queue, f, deliverQueue, nil, nil, nil, so.borrowed)
}

// SubOpt is an option of SubscribeFunc, QueueSubscribeFunc and
// Subscription.Messages.
type SubOpt struct{ kind subOptKind }

type subOptKind uint8

const subBorrowed subOptKind = 1

type subOpts struct{ borrowed bool }

func resolveSubOpts(opts []SubOpt) (subOpts, error) {
	var so subOpts
	for _, o := range opts {
		switch o.kind {
		case subBorrowed:
			so.borrowed = true
		default:
			return so, invalid("zero SubOpt")
		}
	}
	return so, nil
}

// Borrowed lends each message instead of handing over a copy: the message
// and every string and slice in it (Subject, Reply, Header, Data) are
// valid only until the loop body or handler it was given to returns.
// Respond to it there, and copy (strings.Clone, bytes.Clone) anything kept
// longer, map keys included: a map assignment stores its key even when the
// key is already there, so assign only with a copy. A borrowed message
// costs no allocation once the subscription is warm: the connection's
// reader goroutine copies it into memory the subscription reuses once
// the handler or loop body is done with it. Messages larger than 16 KiB
// are ordinary copies; they follow the same rule. Stats.BorrowedMsgs
// counts the lent ones.
//
// For Messages, the first iteration with Borrowed makes the subscription
// lend for the rest of its life.
func Borrowed() SubOpt { return SubOpt{kind: subBorrowed} }

// subscribeMux subscribes the request inbox: f routes each response, an
// owned copy, to its requester on the goroutine that reads it.
func (nc *Conn) subscribeMux(subject string, f func(*Msg)) (*Subscription, error) {
	return nc.register(subject, "", nil, deliverMux, f, nil, nil, false)
}

// register validates and registers a subscription with its delivery mode:
// handler is a SubscribeFunc handler, fn the function of a deliverView
// or deliverMux subscription, alloc (if set) provides the Msg structs, and
// borrow makes it lend (deliverLent, borrowBatches) in Msgs from lend
// (nil: plain ones).
func (nc *Conn) register(subject, queue string, handler func(*Msg), mode deliveryMode, fn func(*Msg), alloc func() *Msg, lend func(reuse *Msg) *Msg, borrow bool) (*Subscription, error) {
	if err := proto.ValidateSubscribeSubject(subject); err != nil {
		return nil, err
	}
	if queue != "" {
		if err := proto.ValidateQueue(queue); err != nil {
			return nil, err
		}
	}
	// "SUB <subject> [queue] <sid>": room for separators and any sid.
	if len(subject)+len(queue)+22 > nc.opts.maxControlLine {
		return nil, ErrSubjectTooLong
	}
	s := newSubscription(nc, subject, queue)
	s.mode.Store(mode)
	s.fn = fn
	s.newMsg = alloc
	if borrow {
		s.borrowBatches(lend)
	}
	if handler != nil {
		s.consuming = true
		s.handlerDone = make(chan struct{})
		s.handler = handler // its goroutine starts with its first message
	}
	nc.mu.Lock()
	if err := nc.writableLocked(); err != nil {
		nc.mu.Unlock()
		return nil, err
	}
	nc.subMu.Lock()
	nc.sid++
	s.sid = nc.sid
	nc.subs[s.sid] = s
	nc.subMu.Unlock()
	if nc.state == stateConnected {
		nc.queueSubLocked(subject, queue, s.sid)
	}
	nc.mu.Unlock()
	return s, nil
}

// queueSubLocked queues the SUB line of a new subscription. A lone
// subscription is written at once (the flusher is woken). One made less
// than subBurstGap after the previous is part of a burst: its SUB waits,
// as a WriteLazy message does, for the next write of the connection (a
// Publish, a Flush, a request), for 64 KiB of company, or for the burst
// to pause for lazyDelay, subMaxWait at most, so that a loop of Subscribe
// calls shares few writes instead of racing the flusher. The server
// handles a connection's bytes in order: a SUB still waiting is written
// before anything published after it on the same connection.
func (nc *Conn) queueSubLocked(subject, queue string, sid uint64) {
	nc.wbuf, _ = proto.AppendSub(nc.wbuf, subject, queue, sid)
	now := time.Now()
	burst := now.Sub(nc.lastSub) < subBurstGap
	nc.lastSub = now
	if burst && len(nc.wbuf) < lazyKick {
		if !nc.lazy && !nc.kicked {
			nc.lazySince = now
		}
		nc.deferLocked()
		return
	}
	nc.kickLocked()
}

// removeSub forgets s; messages for its sid are counted as unknown.
func (nc *Conn) removeSub(s *Subscription) {
	nc.subMu.Lock()
	delete(nc.subs, s.sid)
	nc.subMu.Unlock()
}

// unsubscribe sends UNSUB (with max > 0: after max messages in total) and,
// for an immediate unsubscribe, ends s.
func (nc *Conn) unsubscribe(s *Subscription, max uint64) error {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	if nc.state == stateClosed {
		return ErrClosed
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrBadSubscription
	}
	reached := max > 0 && s.received >= max
	if max > 0 {
		s.max.Store(max)
	}
	s.mu.Unlock()
	if max > 0 && !reached {
		if nc.state == stateConnected {
			nc.wbuf = proto.AppendUnsub(nc.wbuf, s.sid, max)
			nc.kickLocked()
		}
		return nil
	}
	nc.removeSub(s)
	if nc.state == stateConnected {
		nc.wbuf = proto.AppendUnsub(nc.wbuf, s.sid, 0)
		nc.kickLocked()
	}
	s.close(nil)
	return nil
}

// unsubscribeDrain sends UNSUB for s, waits for the server to confirm with
// a PONG so that every message sent before the UNSUB has arrived, then ends
// s in order.
func (nc *Conn) unsubscribeDrain(ctx context.Context, s *Subscription) error {
	nc.mu.Lock()
	if nc.state == stateClosed {
		nc.mu.Unlock()
		return ErrClosed
	}
	s.mu.Lock()
	if s.closed || s.draining {
		s.mu.Unlock()
		nc.mu.Unlock()
		return ErrBadSubscription
	}
	s.draining = true
	s.mu.Unlock()
	if nc.state == stateConnected {
		nc.wbuf = proto.AppendUnsub(nc.wbuf, s.sid, 0)
		nc.kickLocked()
	}
	nc.mu.Unlock()
	err := nc.Flush(ctx)
	nc.removeSub(s)
	s.close(nil)
	if err == ErrDisconnected {
		// The interest is gone with the connection; nothing more arrives.
		return nil
	}
	return err
}
