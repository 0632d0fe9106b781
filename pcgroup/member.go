package pcgroup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/pull"
)

// MemberConfig configures one instance of a member.
type MemberConfig struct {
	// Consumer is the member's consumer configuration: AckWait (0:
	// DefaultAckWait), MaxDeliver, BackOff, MaxAckPending and the like.
	// The group sets its name, filters, priority group and policy, pin
	// timeout and (elastic) inactive threshold; its AckPolicy must be
	// explicit (the zero value is).
	Consumer jsapi.ConsumerConfig
	// Keyed is how the instance runs handlers. By default a message's key
	// is its partition, so each partition is handled in order, one
	// message at a time, and the member's partitions in parallel (up to
	// Keyed.Workers). A Key or KeyToken of its own (applied to the subject
	// without the partition token) gives order per finer key instead.
	// The instance holds its handlers each time it takes the pin
	// (HoldFor, with HoldConfirmed set), on top of any HoldFor given.
	Keyed pull.Keyed
	// OnError receives what the instance heals from: consumer creation
	// failures it retries, pull conditions (see pull.OnError). It must not
	// block.
	OnError func(error)
}

// Member is one running instance of a member of a group. Several
// instances may join under one member name: the server gives the
// member's messages to one of them (the pinned one) and the others stand
// by until it stops pulling for the pin timeout, or StepDown.
type Member struct {
	kind    Kind
	js      *jsapi.JS
	bucket  *kv.Bucket
	stream  string // the stream the member's consumer is on
	group   string
	source  string // the group's stream as named in its key
	name    string
	handler pull.KeyedHandler
	cfg     MemberConfig
	ackWait time.Duration

	cancel context.CancelFunc
	done   chan struct{}
	err    error

	mu       sync.Mutex
	static   *StaticConfig
	elastic  *ElasticConfig
	filters  []string
	kc       *pull.KeyedContext
	consumer string
	pin      string
}

// Join starts an instance of member of the group (of kind k on stream),
// running handler on its messages until Stop, ctx's end, or the group's
// deletion. The handler gets each message with the partition token taken
// off its subject; it returning nil acknowledges the message (unless it
// did), an error naks it (see pull.ConsumeKeyed for the order kept).
//
// The instance creates the member's consumer on the group's stream (for a
// static group the durable "<group>-<member>" on stream, for an elastic one
// the consumer "<member>" on "<stream>-<group>"), filtered to the member's
// partitions, in priority group PriorityGroup with the pinned-client policy.
// An elastic instance follows the group's membership as it changes: when its
// partitions change, it stops, lets the pinned instance delete the consumer,
// and creates it anew with its new filters; an instance that is not a
// member (yet) waits to be added. A static instance ends with
// ErrConfigChanged when the group's configuration changes.
//
// Join fails with a *jsapi.FeatureError on servers before 2.11 (priority
// groups), ErrGroupNotFound, ErrNotMember (static groups only),
// conn.ErrInvalidOption for a nil handler or a non-explicit AckPolicy, and
// the errors of creating the consumer. Done is closed once the instance has
// ended and its handlers have returned; Err tells why.
func Join(ctx context.Context, js *jsapi.JS, k Kind, stream, group, member string, handler pull.KeyedHandler, cfg MemberConfig) (*Member, error) {
	if handler == nil {
		return nil, fmt.Errorf("%w: nil handler", conn.ErrInvalidOption)
	}
	if cfg.Consumer.AckPolicy != "" && cfg.Consumer.AckPolicy != jsapi.AckExplicit {
		return nil, fmt.Errorf("%w: group members acknowledge explicitly", conn.ErrInvalidOption)
	}
	if err := checkNames(stream, group); err != nil {
		return nil, err
	}
	if err := jsapi.ValidateName(member); err != nil {
		return nil, err
	}
	if err := js.Check(ctx, jsapi.FeaturePriorityGroups); err != nil {
		return nil, err
	}
	b, err := bind(ctx, js, k)
	if err != nil {
		return nil, err
	}
	m := &Member{kind: k, js: js, bucket: b, group: group, source: stream, name: member, handler: handler,
		cfg: cfg, ackWait: cfg.Consumer.AckWait, done: make(chan struct{})}
	if m.ackWait <= 0 {
		m.ackWait = DefaultAckWait
	}
	switch k {
	case Static:
		m.stream = stream
		m.static = &StaticConfig{}
		if _, err := load(ctx, b, stream, group, m.static); err != nil {
			return nil, err
		}
		if !m.static.IsMember(member) {
			return nil, fmt.Errorf("%w: %q in %s", ErrNotMember, member, key(stream, group))
		}
	case Elastic:
		m.stream = ElasticStreamName(stream, group)
		m.elastic = &ElasticConfig{}
		if _, err := load(ctx, b, stream, group, m.elastic); err != nil {
			return nil, err
		}
	}
	if _, err := js.Stream(ctx, m.stream); err != nil {
		return nil, fmt.Errorf("pcgroup: the group's stream: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.cancel = cancel
	if err := m.join(ctx, runCtx); err != nil {
		if k == Static {
			cancel()
			return nil, err
		}
		m.report(err) // an elastic member retries
	}
	stop := context.AfterFunc(ctx, cancel)
	go func() {
		defer stop()
		m.run(runCtx)
	}()
	return m, nil
}

func (m *Member) report(err error) {
	if m.cfg.OnError != nil {
		m.cfg.OnError(err)
	}
}

// currentFilters returns the member's filters under the configuration held.
func (m *Member) currentFilters() []string {
	if m.kind == Static {
		return m.static.MemberFilters(m.name)
	}
	return m.elastic.MemberFilters(m.name)
}

// join creates the member's consumer for its current filters, with
// requests bounded by reqCtx, and starts consuming it until ctx ends;
// without partitions it does nothing.
func (m *Member) join(reqCtx, ctx context.Context) error {
	m.mu.Lock()
	filters := m.currentFilters()
	m.mu.Unlock()
	if len(filters) == 0 {
		return nil
	}
	cc := m.cfg.Consumer
	cc.AckPolicy = jsapi.AckExplicit
	cc.AckWait = m.ackWait
	cc.FilterSubject = ""
	cc.FilterSubjects = filters
	cc.PriorityGroups = []string{PriorityGroup}
	cc.PriorityPolicy = jsapi.PriorityPinnedClient
	cc.PriorityTimeout = max(m.ackWait, minPinnedTTL)
	if m.kind == Static {
		cc.Durable, cc.Name = StaticConsumerName(m.group, m.name), ""
	} else {
		cc.Durable, cc.Name = "", m.name
		cc.InactiveThreshold = m.ackWait
	}
	cctx, cancel := context.WithTimeout(reqCtx, m.js.Timeout())
	defer cancel()
	info, err := m.js.CreateConsumer(cctx, m.stream, cc)
	if m.kind == Elastic && m.mustReplace(cctx, err, filters) {
		if derr := m.js.DeleteConsumer(cctx, m.stream, cc.Name); derr != nil && !errors.Is(derr, jsapi.ErrConsumerNotFound) {
			return derr
		}
		info, err = m.js.CreateConsumer(cctx, m.stream, cc)
	} else if m.kind == Elastic && errors.Is(err, jsapi.ErrConsumerExists) {
		info, err = m.js.CreateConsumer(cctx, m.stream, cc) // replaced meanwhile by another instance
	}
	if err != nil {
		return fmt.Errorf("pcgroup: member %s consumer: %w", m.name, err)
	}
	c, err := pull.FromInfo(m.js, info)
	if err != nil {
		return err
	}
	keyed := m.cfg.Keyed
	userKey, tok := keyed.Key, keyed.KeyToken
	keyed.KeyToken = 0
	keyed.Key = func(msg *jsapi.Msg) string {
		part := msg.Subject
		if i := strings.IndexByte(part, '.'); i >= 0 {
			part = part[:i]
		}
		msg.Subject = StripPartition(msg.Subject)
		switch {
		case userKey != nil:
			return userKey(msg)
		case tok != 0:
			return subjectToken(msg.Subject, tok)
		}
		return part
	}
	// Taking a pin (over from another instance, or first), hold the
	// handlers until the server confirms that every message the consumer
	// delivered and has not had acknowledged is here: what a previous
	// holder left unacknowledged is redelivered first, and handled before
	// its keys' later messages, however late the server redelivers it.
	// The pin is known from then on (isPinned), handled or not.
	lastPin := ""
	userHold := keyed.HoldFor
	keyed.HoldConfirmed = true
	keyed.HoldFor = func(msg *jsapi.Msg) time.Duration {
		var d time.Duration
		if userHold != nil {
			d = userHold(msg)
		}
		pin := msg.Header.Get("Nats-Pin-Id")
		if pin == "" || pin == lastPin {
			return d
		}
		lastPin = pin
		m.mu.Lock()
		m.pin = pin
		m.mu.Unlock()
		return max(d, time.Millisecond)
	}
	// Cut off from the server (the connection lost, or two heartbeats
	// missed), the instance stops handing out what it holds: it can no
	// longer acknowledge, and a standby is about to be given the same
	// messages. Handlers running finish; the loop is joined again later.
	var running atomic.Pointer[pull.KeyedContext]
	fence := func() {
		if kc := running.Load(); kc != nil {
			kc.Stop()
		}
	}
	// Pulls expire after half the pin timeout, so that the pinned
	// instance's next pull always comes before its pin lapses (pulls as long
	// as the pin timeout let the pin flap between instances). An instance
	// told it lost the pin (ErrPinMismatch) stops too: another holds it now.
	opts := []pull.Opt{pull.Group(PriorityGroup), pull.Expires(max(m.ackWait, minPinnedTTL) / 2),
		pull.OnError(func(err error) {
			if errors.Is(err, pull.ErrNoHeartbeat) || errors.Is(err, pull.ErrPinMismatch) {
				fence()
			}
			m.report(err)
		})}
	remove := m.js.Conn().OnDisconnect(func(error) { fence() })
	kc, err := c.ConsumeKeyed(ctx, m.handler, keyed, opts...)
	if err != nil {
		remove()
		return err
	}
	running.Store(kc)
	go func() {
		<-kc.Closed()
		remove()
	}()
	m.mu.Lock()
	m.kc, m.consumer, m.filters = kc, info.Name, filters
	m.mu.Unlock()
	return nil
}

// mustReplace reports whether an elastic member's consumer, whose creation
// failed with err, is to be deleted and created anew: it exists with other
// filters (unless another instance has just replaced it with filters), or
// the server failed to update it (a server error: a consumer whose store
// was removed under it, as when one instance's deletion of it finishes
// after another instance created it anew, cannot be updated again).
func (m *Member) mustReplace(ctx context.Context, err error, filters []string) bool {
	var apiErr *jsapi.APIError
	switch {
	case errors.Is(err, jsapi.ErrConsumerExists):
		cur, ierr := m.js.Consumer(ctx, m.stream, m.name)
		return ierr != nil || !slices.Equal(cur.Config.FilterSubjects, filters)
	case errors.As(err, &apiErr):
		return apiErr.Code >= 500
	}
	return false
}

// subjectToken is the tok'th token of subject (as pull.Keyed.KeyToken).
func subjectToken(subject string, tok int) string {
	toks := strings.Split(subject, ".")
	if tok < 0 {
		tok = len(toks) + tok + 1
	}
	if tok < 1 || tok > len(toks) {
		return subject
	}
	return toks[tok-1]
}

// stopConsuming stops the consume loop and waits for its handlers.
func (m *Member) stopConsuming() {
	m.mu.Lock()
	kc := m.kc
	m.kc, m.filters = nil, nil
	m.mu.Unlock()
	if kc != nil {
		kc.Stop()
		<-kc.Closed()
	}
}

// closedCh returns the consume loop's Closed channel, or nil.
func (m *Member) closedCh() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.kc == nil {
		return nil
	}
	return m.kc.Closed()
}

// run follows the group's configuration until the member ends.
func (m *Member) run(ctx context.Context) {
	defer close(m.done)
	updates := make(chan *kv.Entry)
	werr := make(chan error, 1)
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	go func() {
		for e, err := range m.bucket.Watch(wctx, key(m.source, m.group)) {
			if err != nil {
				werr <- err
				return
			}
			if e == nil {
				continue
			}
			select {
			case updates <- e:
			case <-wctx.Done():
				return
			}
		}
	}()
	retry := time.NewTicker(m.ackWait + 500*time.Millisecond)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			m.stopConsuming()
			return
		case err := <-werr:
			m.stopConsuming()
			if ctx.Err() == nil {
				m.err = fmt.Errorf("pcgroup: watching the group's configuration: %w", err)
			}
			return
		case <-m.closedCh():
			// The consume loop ended by itself (its consumer was deleted:
			// by another instance, or for inactivity); join again.
			m.mu.Lock()
			if m.kc != nil {
				m.report(fmt.Errorf("pcgroup: member %s consuming ended: %v", m.name, m.kc.Err()))
			}
			m.kc, m.filters = nil, nil
			m.mu.Unlock()
			if m.kind == Static {
				if err := m.join(ctx, ctx); err != nil {
					m.report(err)
				}
			}
		case <-retry.C:
			m.mu.Lock()
			idle := m.kc == nil
			m.mu.Unlock()
			if idle {
				if err := m.join(ctx, ctx); err != nil {
					m.report(err)
				}
			}
		case e := <-updates:
			if done := m.apply(ctx, e); done {
				return
			}
		}
	}
}

// apply takes a new revision of the group's configuration and reports
// whether the member has ended.
func (m *Member) apply(ctx context.Context, e *kv.Entry) bool {
	if e.Operation != kv.OpPut {
		m.stopConsuming()
		if m.kind == Static {
			m.deleteConsumer()
		}
		return true
	}
	if m.kind == Static {
		var c StaticConfig
		err := json.Unmarshal(e.Value, &c)
		if err == nil {
			err = c.Validate()
		}
		if err == nil && (c.MaxMembers != m.static.MaxMembers || !slices.Equal(c.Filters, m.static.Filters) ||
			!reflect.DeepEqual(c.Members, m.static.Members) || !reflect.DeepEqual(c.MemberMappings, m.static.MemberMappings)) {
			err = ErrConfigChanged
		}
		if err != nil {
			m.stopConsuming()
			m.deleteConsumer()
			m.err = err
			return true
		}
		return false
	}
	var c ElasticConfig
	err := json.Unmarshal(e.Value, &c)
	if err == nil {
		err = c.Validate()
	}
	if err == nil && (c.MaxMembers != m.elastic.MaxMembers || c.MaxBufferedMsgs != m.elastic.MaxBufferedMsgs ||
		c.MaxBufferedBytes != m.elastic.MaxBufferedBytes || !reflect.DeepEqual(c.PartitioningFilters, m.elastic.PartitioningFilters)) {
		err = fmt.Errorf("%w: partitions, filters or buffers of an elastic group changed", ErrInvalidConfig)
	}
	if err != nil {
		m.stopConsuming()
		m.err = err
		return true
	}
	m.mu.Lock()
	m.elastic.Members, m.elastic.MemberMappings = c.Members, c.MemberMappings
	next := m.currentFilters()
	same := m.kc != nil && slices.Equal(m.filters, next)
	idle := m.kc == nil && len(next) == 0
	m.mu.Unlock()
	if same || idle {
		return false // this instance's partitions did not change
	}
	pinned := m.isPinned(ctx)
	m.stopConsuming()
	if pinned {
		m.deleteConsumer()
	} else {
		// Let the pinned instance delete and recreate it first.
		t := time.NewTimer(time.Duration(400+rand.IntN(100)) * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
	if err := m.join(ctx, ctx); err != nil {
		m.report(err)
	}
	return false
}

// isPinned reports whether this instance holds the pin of the member's
// consumer.
func (m *Member) isPinned(ctx context.Context) bool {
	m.mu.Lock()
	name, pin, consuming := m.consumer, m.pin, m.kc != nil
	m.mu.Unlock()
	if !consuming || pin == "" {
		return false
	}
	cctx, cancel := context.WithTimeout(ctx, m.js.Timeout())
	defer cancel()
	info, err := m.js.Consumer(cctx, m.stream, name)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(info.PriorityGroups, func(g jsapi.PriorityGroupState) bool {
		return g.Group == PriorityGroup && g.PinnedClientID == pin
	})
}

func (m *Member) deleteConsumer() {
	name := m.name
	if m.kind == Static {
		name = StaticConsumerName(m.group, m.name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.js.Timeout())
	defer cancel()
	if err := m.js.DeleteConsumer(ctx, m.stream, name); err != nil && !errors.Is(err, jsapi.ErrConsumerNotFound) {
		m.report(fmt.Errorf("pcgroup: deleting member %s consumer: %w", m.name, err))
	}
}

// Stop ends the instance: no handler starts any more, the running ones
// finish and the messages it held are naked for redelivery (to a standby
// instance). The member's consumer is left in place: a static member's
// durable keeps its position, an elastic one is removed after AckWait
// without a pull. Done tells when it has ended.
func (m *Member) Stop() { m.cancel() }

// Done returns a channel closed once the instance has ended: Stop, its
// context, the group's deletion, or an error (Err).
func (m *Member) Done() <-chan struct{} { return m.done }

// Err reports why the instance ended, once Done is closed: nil after Stop,
// its context's end or the group's deletion; ErrConfigChanged for a static
// group changed; an ErrInvalidConfig for an elastic group's configuration
// changed in what cannot change (partitions, filters, buffers) or made
// invalid; or the failure of watching the configuration.
func (m *Member) Err() error {
	select {
	case <-m.done:
		return m.err
	default:
		return nil
	}
}

// Name returns the member's name.
func (m *Member) Name() string { return m.name }

// Partitions returns the consumer filters the instance consumes now, one
// per partition ("<partition>.<filter>"); none while it has no partition
// or no consumer.
func (m *Member) Partitions() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.filters)
}

// Messages is Join with an iterator in place of a handler: it yields the
// member's messages one at a time, with the partition token taken off their
// subject. A message the loop body did not acknowledge (Ack, Nak, Term…) is
// acknowledged when the body returns, also when it breaks out of the loop.
// Breaking out or ctx's end stops the instance (messages received and not
// yielded are naked); the iteration ends with the instance, yielding its
// error, if any, last. Join's errors are yielded
// before any message.
func Messages(ctx context.Context, js *jsapi.JS, k Kind, stream, group, member string, cfg MemberConfig) iter.Seq2[*jsapi.Msg, error] {
	return func(yield func(*jsapi.Msg, error) bool) {
		type item struct {
			m    *jsapi.Msg
			back chan struct{}
		}
		items := make(chan item)
		cfg.Keyed.Workers = 1
		mem, err := Join(ctx, js, k, stream, group, member, func(hctx context.Context, msg *jsapi.Msg) error {
			back := make(chan struct{})
			select {
			case items <- item{msg, back}:
			case <-hctx.Done():
				return hctx.Err()
			}
			<-back
			return nil
		}, cfg)
		if err != nil {
			yield(nil, err)
			return
		}
		defer func() {
			mem.Stop()
			<-mem.Done()
		}()
		for {
			select {
			case it := <-items:
				ok := yield(it.m, nil)
				close(it.back) // the handler acknowledges it if the body did not
				if !ok {
					return
				}
			case <-mem.Done():
				if err := mem.Err(); err != nil {
					yield(nil, err)
				}
				return
			}
		}
	}
}
