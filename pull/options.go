package pull

import (
	"fmt"
	"strconv"
	"time"

	"github.com/natsio/natsio/conn"

	"github.com/natsio/natsio/jsapi"
)

// Defaults of Messages.
const (
	DefaultMaxMessages = 500
	DefaultExpires     = 30 * time.Second
	// Fetch and Next wait this long when their context has no deadline.
	DefaultFetchWait = 30 * time.Second
)

type optKind uint8

const (
	optMaxMessages optKind = iota + 1
	optMaxBytes
	optExpires
	optHeartbeat
	optThreshold
	optNoWait
	optGroup
	optMinPending
	optMinAckPending
	optPriority
	optOnError
	optReadAhead
	optBorrowed
	optDrainOn
)

// Opt is an option of Messages, Consume and ConsumeKeyed, which take the
// same ones. Fetch and Next take FetchOpt: the options both kinds of call
// honour have a constructor for each (MaxBytes and FetchMaxBytes, …), so
// an option handed to a call that would ignore or refuse it does not
// compile. Options are plain values; a bad one, or the zero value, is
// rejected with conn.ErrInvalidOption before any pull is sent.
type Opt struct {
	kind optKind
	n    int64
	d    time.Duration
	s    string
	f    func(error)
	ch   <-chan struct{}
}

// MaxMessages bounds the messages Messages keeps requested (default 500).
func MaxMessages(n int) Opt { return Opt{kind: optMaxMessages, n: int64(n)} }

// MaxBytes bounds the bytes Messages keeps requested (then MaxMessages
// defaults to a large number). FetchMaxBytes bounds a Fetch.
func MaxBytes(n int) Opt { return Opt{kind: optMaxBytes, n: int64(n)} }

// Expires sets how long each pull of Messages waits at the server (default
// 30 s); Fetch derives it from its context.
func Expires(d time.Duration) Opt { return Opt{kind: optExpires, d: d} }

// Heartbeat asks for idle heartbeats at this interval; two missed ones
// make Messages pull again. It defaults to half of Expires, at most 30 s
// (FetchHeartbeat for Fetch).
func Heartbeat(d time.Duration) Opt { return Opt{kind: optHeartbeat, d: d} }

// Threshold makes Messages pull more once fewer than n messages remain
// requested (default half of MaxMessages).
func Threshold(n int) Opt { return Opt{kind: optThreshold, n: int64(n)} }

// FetchOpt is an option of Fetch and Next (see Opt).
type FetchOpt struct{ o Opt }

// NoWait makes Fetch return at once with what is available, an empty
// batch when there is nothing. A no-wait pull the server keeps open
// (messages pending that MaxAckPending holds back) ends 0.9 s after its
// last message, and is withdrawn at the server.
func NoWait() FetchOpt { return FetchOpt{Opt{kind: optNoWait}} }

// FetchMaxBytes is MaxBytes for Fetch and Next: the batch's size in bytes.
func FetchMaxBytes(n int) FetchOpt { return FetchOpt{MaxBytes(n)} }

// FetchHeartbeat is Heartbeat for Fetch and Next: two missed heartbeats
// end the call with an error (none asked for unless set).
func FetchHeartbeat(d time.Duration) FetchOpt { return FetchOpt{Heartbeat(d)} }

// FetchGroup is Group for Fetch and Next.
func FetchGroup(g string) FetchOpt { return FetchOpt{Group(g)} }

// FetchMinPending is MinPending for Fetch and Next.
func FetchMinPending(n int64) FetchOpt { return FetchOpt{MinPending(n)} }

// FetchMinAckPending is MinAckPending for Fetch and Next.
func FetchMinAckPending(n int64) FetchOpt { return FetchOpt{MinAckPending(n)} }

// FetchPriority is Priority for Fetch and Next.
func FetchPriority(p int) FetchOpt { return FetchOpt{Priority(p)} }

// Group names the priority group pulls are made in (required on consumers
// with a priority policy, rejected on others).
func Group(g string) Opt { return Opt{kind: optGroup, s: g} }

// MinPending: an overflow-policy pull is served only while the consumer has
// at least n pending messages.
func MinPending(n int64) Opt { return Opt{kind: optMinPending, n: n} }

// MinAckPending: an overflow-policy pull is served only while at least n
// messages await acks.
func MinAckPending(n int64) Opt { return Opt{kind: optMinAckPending, n: n} }

// Priority sets the priority of pulls on a prioritized consumer (0-9, lower
// is served first; server 2.12+).
func Priority(p int) Opt { return Opt{kind: optPriority, n: int64(p)} }

// OnError receives the non-terminal conditions Messages heals from, each
// once: reconnects (ErrReconnected), missed heartbeats (ErrNoHeartbeat),
// leadership changes, pin mismatches, too many waiting pulls, a message
// larger than what is left of a pull (ErrMessageTooLarge), statuses this
// client does not know (ErrUnknownStatus), statuses claiming a terminal
// condition that consumer info did not confirm (ErrUnconfirmedStatus),
// JetStream not answering (conn.ErrNoResponders), and each message skipped
// because the server did not deliver it (ErrStrayMessage). A pull that
// merely expired is not reported. It runs on internal goroutines and must
// not block.
func OnError(f func(error)) Opt { return Opt{kind: optOnError, f: f} }

// ReadAhead chooses how a Messages loop's acknowledgements are written.
// (The connection's reader goroutine always reads ahead of the loop body.)
// With on, each acknowledgement is written at once (by the connection's
// flusher). With off, acknowledgements are queued to travel with the
// loop's next pull (written within a millisecond at the latest), when
// MaxAckPending is at least twice MaxMessages or unlimited, so that the
// server never waits for them.
//
// By default acknowledgements travel with the next pull when that is safe
// (MaxAckPending at least twice MaxMessages, or unlimited), and are
// written at once otherwise. Messages and Consume only.
func ReadAhead(on bool) Opt {
	n := int64(0)
	if on {
		n = 1
	}
	return Opt{kind: optReadAhead, n: n}
}

// Borrowed lends each message instead of handing over a copy: the message
// and every string and slice in it (Subject, Reply, Header, Data,
// Metadata) are valid only until the loop body or handler it was given to
// returns. Acknowledge it there, and copy (strings.Clone, bytes.Clone)
// anything kept longer. A borrowed message costs no copy and no
// allocation.
//
// Acknowledged later, a message may stand for another one by then (Ack,
// Nak, Term, InProgress and AckSync copy what they send, so acknowledging
// within the body is safe). The lending happens when the loop reads the
// socket itself (see ReadAhead):
// messages read ahead by the reader goroutine are copies, under the same
// contract. Messages and Consume only.
func Borrowed() Opt { return Opt{kind: optBorrowed} }

// DrainOn makes Messages (or Consume) end in order once ch is closed: no
// more pulls are sent, the subscription is drained (an UNSUB, then a round
// trip to the server, bounded by the JetStream API timeout), every message
// received by then is still yielded, and the loop ends with no error.
// Messages the pulls had asked for and the server had not yet sent are
// redelivered after AckWait. ConsumeContext.Drain does the same for a
// Consume. Messages and Consume only.
func DrainOn(ch <-chan struct{}) Opt { return Opt{kind: optDrainOn, ch: ch} }

// settings are resolved options.
type settings struct {
	maxMsgs, maxBytes int
	expires, hb       time.Duration
	threshold         int
	noWait            bool
	group             string
	minPending        int64
	minAckPending     int64
	priority          int
	hasPriority       bool
	onError           func(error)
	// readAhead: 0 by the ack policy, 1 on, -1 off (ReadAhead).
	readAhead int
	borrowed  bool
	drainOn   <-chan struct{}
}

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{conn.ErrInvalidOption}, a...)...)
}

// resolve applies opts for the given call ("fetch" or "messages") and
// checks them against the consumer's configuration.
func resolve(call string, cfg *jsapi.ConsumerConfig, opts []Opt) (settings, error) {
	var s settings
	for _, o := range opts {
		if err := s.apply(call, o); err != nil {
			return s, err
		}
	}
	return s, s.finish(call, cfg)
}

// resolveFetch is resolve for Fetch and Next.
func resolveFetch(cfg *jsapi.ConsumerConfig, opts []FetchOpt) (settings, error) {
	var s settings
	for _, o := range opts {
		if err := s.apply("fetch", o.o); err != nil {
			return s, err
		}
	}
	return s, s.finish("fetch", cfg)
}

// apply applies one option for the given call.
func (s *settings) apply(call string, o Opt) error {
	switch o.kind {
	case optMaxMessages:
		if o.n <= 0 || call != "messages" {
			return invalid("MaxMessages %d", o.n)
		}
		s.maxMsgs = int(o.n)
	case optMaxBytes:
		if o.n <= 0 {
			return invalid("MaxBytes %d", o.n)
		}
		s.maxBytes = int(o.n)
	case optExpires:
		if o.d < time.Second || call != "messages" {
			return invalid("Expires %v (at least 1 s, Messages and Consume only)", o.d)
		}
		s.expires = o.d
	case optHeartbeat:
		if o.d < 100*time.Millisecond {
			return invalid("Heartbeat %v", o.d)
		}
		s.hb = o.d
	case optThreshold:
		if o.n <= 0 || call != "messages" {
			return invalid("Threshold %d", o.n)
		}
		s.threshold = int(o.n)
	case optNoWait:
		if call != "fetch" {
			return invalid("NoWait is for Fetch")
		}
		s.noWait = true
	case optGroup:
		s.group = o.s
	case optMinPending:
		s.minPending = o.n
	case optMinAckPending:
		s.minAckPending = o.n
	case optPriority:
		if o.n < 0 || o.n > 9 {
			return invalid("Priority %d (0-9)", o.n)
		}
		s.priority, s.hasPriority = int(o.n), true
	case optOnError:
		s.onError = o.f
	case optReadAhead:
		if call != "messages" {
			return invalid("ReadAhead is for Messages and Consume")
		}
		s.readAhead = -1
		if o.n == 1 {
			s.readAhead = 1
		}
	case optBorrowed:
		if call != "messages" {
			return invalid("Borrowed is for Messages and Consume")
		}
		s.borrowed = true
	case optDrainOn:
		if call != "messages" || o.ch == nil {
			return invalid("DrainOn needs a channel, and is for Messages and Consume")
		}
		s.drainOn = o.ch
	default:
		return invalid("zero Opt")
	}
	return nil
}

// finish fills in the defaults of the call and checks the options against
// each other and the consumer's configuration.
func (s *settings) finish(call string, cfg *jsapi.ConsumerConfig) error {
	if call == "messages" {
		if s.maxMsgs == 0 {
			s.maxMsgs = DefaultMaxMessages
			if s.maxBytes > 0 {
				s.maxMsgs = 1_000_000
			}
		}
		if s.expires == 0 {
			s.expires = DefaultExpires
		}
		if s.hb == 0 {
			s.hb = min(s.expires/2, 30*time.Second)
		}
		if s.hb*2 > s.expires {
			return invalid("Heartbeat %v above half of Expires %v", s.hb, s.expires)
		}
		if s.threshold == 0 || s.threshold > s.maxMsgs {
			s.threshold = max(s.maxMsgs/2, 1)
		}
	}
	return checkPriority(cfg, s)
}

// checkPriority validates group options against the consumer's policy.
func checkPriority(cfg *jsapi.ConsumerConfig, s *settings) error {
	policy := cfg.PriorityPolicy
	if policy == "" || policy == jsapi.PriorityNone {
		if s.group != "" || s.minPending != 0 || s.minAckPending != 0 || s.hasPriority {
			return invalid("consumer has no priority policy: no Group, MinPending, MinAckPending or Priority")
		}
		return nil
	}
	if s.group == "" {
		return invalid("consumer has priority policy %q: Group is required", policy)
	}
	found := false
	for _, g := range cfg.PriorityGroups {
		found = found || g == s.group
	}
	if !found {
		return invalid("group %q is not one of the consumer's %v", s.group, cfg.PriorityGroups)
	}
	if (s.minPending != 0 || s.minAckPending != 0) && policy != jsapi.PriorityOverflow {
		return invalid("MinPending/MinAckPending need the overflow policy")
	}
	if s.hasPriority && policy != jsapi.PriorityPrioritized {
		return invalid("Priority needs the prioritized policy")
	}
	return nil
}

// appendPullRequest encodes a pull request's JSON body.
func appendPullRequest(b []byte, batch, maxBytes int, expires, hb time.Duration, noWait bool, s *settings, pin string) []byte {
	b = append(b, `{"batch":`...)
	b = strconv.AppendInt(b, int64(batch), 10)
	if maxBytes > 0 {
		b = append(b, `,"max_bytes":`...)
		b = strconv.AppendInt(b, int64(maxBytes), 10)
	}
	if expires > 0 {
		b = append(b, `,"expires":`...)
		b = strconv.AppendInt(b, int64(expires), 10)
	}
	if hb > 0 {
		b = append(b, `,"idle_heartbeat":`...)
		b = strconv.AppendInt(b, int64(hb), 10)
	}
	if noWait {
		b = append(b, `,"no_wait":true`...)
	}
	if s.group != "" {
		b = append(b, `,"group":`...)
		b = strconv.AppendQuote(b, s.group)
	}
	if s.minPending > 0 {
		b = append(b, `,"min_pending":`...)
		b = strconv.AppendInt(b, s.minPending, 10)
	}
	if s.minAckPending > 0 {
		b = append(b, `,"min_ack_pending":`...)
		b = strconv.AppendInt(b, s.minAckPending, 10)
	}
	if s.hasPriority {
		b = append(b, `,"priority":`...)
		b = strconv.AppendInt(b, int64(s.priority), 10)
	}
	if pin != "" {
		b = append(b, `,"id":`...)
		b = strconv.AppendQuote(b, pin)
	}
	return append(b, '}')
}
