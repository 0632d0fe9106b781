package jsapi

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/natsio/natsio/conn"
)

// Msg is a message delivered by a JetStream consumer. Its fields belong to
// the receiver. Acknowledge it with one of Ack, AckSync, Nak, NakWithDelay,
// Term or TermWithReason (terminal: a second one returns ErrAlreadyAcked);
// InProgress may be sent any number of times before.
//
// The embedded conn.Msg holds Subject, Reply (the $JS.ACK subject: metadata
// and acknowledgement), Header and Data, and lends its methods (Status;
// Respond publishes to the $JS.ACK subject, which the server reads as an
// acknowledgement: use the methods above instead).
type Msg struct {
	conn.Msg

	nc    *conn.Conn
	acked atomic.Bool
	lazy  bool // acknowledgements go out with the next write (msgSlab.lazy)
}

// ErrAlreadyAcked is returned by a second terminal acknowledgement.
var ErrAlreadyAcked = errors.New("jsapi: message already acknowledged")

// ErrNotJSMessage is returned when acknowledging or reading the metadata of
// a message that did not come from a consumer.
var ErrNotJSMessage = errors.New("jsapi: not a JetStream consumer message")

// newMsg wraps a message delivered on connection nc for a consumer.
func newMsg(nc *conn.Conn, m *conn.Msg) *Msg {
	return &Msg{Msg: *m, nc: nc}
}

// msgSlab carves Msgs from arrays for the subscriptions of consumers on one
// connection, so that a delivered message costs no allocation and no copy
// of its own: it is the shell of the subscription (conn.SubscribeBatchesOf),
// which the connection calls on the goroutine that reads it, one call at a
// time; a msgSlab is not safe for any other concurrent use.
type msgSlab struct {
	nc    *conn.Conn
	free  []Msg
	chunk int
	// lazy: acknowledgements of the messages go out with the connection's
	// next write (conn.WriteLazy), for a consumer loop that pulls again
	// before the server could run dry, so that a batch's acknowledgements
	// travel with its next pull instead of each waking the connection's
	// flusher.
	lazy bool
}

const slabMsgs = 128

// newMsgSlab returns a msgSlab for messages received on nc; hint is about
// how many messages are expected (it sizes the first array; later ones
// hold 128).
func newMsgSlab(nc *conn.Conn, hint int, lazy bool) *msgSlab {
	return &msgSlab{nc: nc, chunk: min(max(hint, 8), slabMsgs), lazy: lazy}
}

// shell supplies the Msgs of a subscription: given nil a fresh one carved
// from the slab, given one of an earlier batch of a lent subscription that
// one, reset (no acknowledgement sent yet) for reuse.
func (s *msgSlab) shell(reuse *Msg) *Msg {
	jm := reuse
	if jm == nil {
		if len(s.free) == 0 {
			s.free = make([]Msg, s.chunk)
			s.chunk = slabMsgs
		}
		jm = &s.free[0]
		s.free = s.free[1:]
	} else {
		jm.acked.Store(false)
	}
	jm.nc, jm.lazy = s.nc, s.lazy
	return jm
}

// Ack acknowledges the message. It does not wait for the server: the
// acknowledgement is queued and written by the connection. A pull
// consumer's Messages loop that reads the socket itself lets its
// acknowledgements travel with its next pull request (written within a
// millisecond at the latest), when the consumer's MaxAckPending leaves
// the server no reason to wait for them. The same goes for Nak, Term and
// InProgress; AckSync waits for the server.
func (jm *Msg) Ack() error { return jm.ack(ackAck, true) }

// Nak asks for redelivery now.
func (jm *Msg) Nak() error { return jm.ack(ackNak, true) }

// NakWithDelay asks for redelivery after d.
func (jm *Msg) NakWithDelay(d time.Duration) error {
	if d <= 0 {
		return jm.Nak()
	}
	var buf [48]byte
	b := append(buf[:0], `-NAK {"delay": `...)
	b = strconv.AppendInt(b, int64(d), 10)
	b = append(b, '}')
	return jm.ack(b, true)
}

// Term stops redelivery of the message.
func (jm *Msg) Term() error { return jm.ack(ackTerm, true) }

// TermWithReason stops redelivery; the reason appears in the server's
// MSG_TERMINATED advisory (servers before 2.10.4 ignore such a Term).
func (jm *Msg) TermWithReason(reason string) error {
	if reason == "" {
		return jm.Term()
	}
	if strings.ContainsAny(reason, "\r\n") {
		return fmt.Errorf("%w: reason with CR or LF", conn.ErrInvalidOption)
	}
	return jm.ack([]byte("+TERM "+reason), true)
}

// InProgress tells the server the message is being worked on, resetting its
// ack wait. It may be sent repeatedly before the final acknowledgement.
func (jm *Msg) InProgress() error { return jm.ack(ackProgress, false) }

// AckSync acknowledges and waits for the server to confirm it recorded the
// ack, bounded by ctx.
func (jm *Msg) AckSync(ctx context.Context) error {
	if err := jm.check(); err != nil {
		return err
	}
	if !jm.acked.CompareAndSwap(false, true) {
		return ErrAlreadyAcked
	}
	_, err := jm.nc.RequestUnobserved(ctx, jm.Reply, nil, ackAck)
	if err != nil {
		jm.acked.Store(false)
	}
	jm.settled("ack", err)
	return err
}

var (
	ackAck      = []byte("+ACK")
	ackNak      = []byte("-NAK")
	ackTerm     = []byte("+TERM")
	ackProgress = []byte("+WPI")
)

func (jm *Msg) check() error {
	if jm.nc == nil || !strings.HasPrefix(jm.Reply, "$JS.ACK.") {
		return ErrNotJSMessage
	}
	return nil
}

func (jm *Msg) ack(body []byte, terminal bool) error {
	if err := jm.check(); err != nil {
		return err
	}
	if terminal {
		if !jm.acked.CompareAndSwap(false, true) {
			return ErrAlreadyAcked
		}
	} else if jm.acked.Load() {
		return ErrAlreadyAcked
	}
	var err error
	if jm.lazy {
		err = jm.nc.PublishUnobserved(jm.Reply, "", nil, body, conn.WriteLazy)
	} else {
		err = jm.nc.PublishUnobserved(jm.Reply, "", nil, body, conn.WriteQueued)
	}
	jm.settled(ackOp(body), err)
	if err != nil {
		if terminal {
			jm.acked.Store(false)
		}
		return err
	}
	return nil
}

// Acked reports whether a terminal acknowledgement was sent.
func (jm *Msg) Acked() bool { return jm.acked.Load() }

// Metadata is what the $JS.ACK reply subject says about a message.
type Metadata struct {
	Stream       string
	Consumer     string
	Domain       string // "" when none
	NumDelivered uint64
	StreamSeq    uint64
	ConsumerSeq  uint64
	Timestamp    time.Time
	NumPending   uint64
}

// Metadata decodes the message's metadata from its reply subject. The
// strings are views into Reply (no allocation).
func (jm *Msg) Metadata() (Metadata, error) { return ParseAckSubject(jm.Reply) }
