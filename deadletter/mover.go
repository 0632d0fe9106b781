package deadletter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
	"github.com/natsio/natsio/pull"
)

// Headers a dead letter carries, naming its origin.
const (
	HeaderStream      = "Dead-Letter-Stream"      // the stream it was consumed from
	HeaderConsumer    = "Dead-Letter-Consumer"    // the consumer that gave up
	HeaderSequence    = "Dead-Letter-Sequence"    // its sequence in that stream
	HeaderDeliveries  = "Dead-Letter-Deliveries"  // how many times it was delivered
	HeaderReason      = "Dead-Letter-Reason"      // max_deliveries or terminated
	HeaderDescription = "Dead-Letter-Description" // the reason given to TermWithReason
	HeaderSubject     = "Dead-Letter-Subject"     // the subject it was published on
	HeaderTime        = "Dead-Letter-Time"        // when the stream stored it (RFC 3339)
	// HeaderMissing is "true" when the message was gone from the stream
	// (limits, a work-queue removal, a purge) when the advisory was read:
	// the letter then has the origin headers and no body.
	HeaderMissing = "Dead-Letter-Missing"
)

// DefaultSubject is the prefix of dead-letter subjects when Config.Subject
// is empty.
const DefaultSubject = "deadletter"

// moverConsumer is the durable consumer of the advisory stream.
const moverConsumer = "mover"

// Config describes a Mover.
type Config struct {
	// Stream is the stream whose consumers' dead letters are moved.
	// Required.
	Stream string
	// Consumer names the consumer; "" or "*" moves the dead letters of
	// every consumer of Stream.
	Consumer string
	// Subject is the prefix of the dead-letter subjects: a letter is
	// published to Subject.<stream>.<consumer> (default DefaultSubject).
	// A stream must capture those subjects; its duplicate window is what
	// makes moving idempotent.
	Subject string
	// Name names the stream that captures the advisories (default
	// DL_<Stream>, or DL_<Stream>_<Consumer> for one consumer). Two movers
	// must not capture the same advisories: their streams would overlap.
	Name string
	// AckWait is how long an advisory handed to a Mover that stopped or
	// crashed before moving it waits to be moved again (default 30 s).
	AckWait time.Duration
	// Storage and Replicas of the advisory stream (defaults: file, 1).
	Storage  jsapi.StorageType
	Replicas int
	// Filter, when set, chooses the advisories to move; the others are
	// acknowledged and dropped (for instance, the consumers of one group).
	Filter func(*Advisory) bool
	// OnError receives the failures the Mover retries: a message it could
	// not read, a letter it could not publish (the advisory is then
	// redelivered after a second), a malformed advisory (dropped). It must
	// not block.
	OnError func(error)
}

func (cfg *Config) setDefaults() error {
	if err := jsapi.ValidateName(cfg.Stream); err != nil {
		return fmt.Errorf("%w: stream %q: %v", conn.ErrInvalidOption, cfg.Stream, err)
	}
	if cfg.Consumer == "" {
		cfg.Consumer = "*"
	}
	if cfg.Consumer != "*" {
		if err := jsapi.ValidateName(cfg.Consumer); err != nil {
			return fmt.Errorf("%w: consumer %q: %v", conn.ErrInvalidOption, cfg.Consumer, err)
		}
	}
	if cfg.AckWait < 0 {
		return fmt.Errorf("%w: negative AckWait", conn.ErrInvalidOption)
	}
	if cfg.AckWait == 0 {
		cfg.AckWait = 30 * time.Second
	}
	if cfg.Subject == "" {
		cfg.Subject = DefaultSubject
	}
	if strings.ContainsAny(cfg.Subject, "*> \t") || strings.HasSuffix(cfg.Subject, ".") || strings.HasPrefix(cfg.Subject, ".") {
		return fmt.Errorf("%w: dead-letter subject prefix %q", conn.ErrInvalidOption, cfg.Subject)
	}
	if cfg.Name == "" {
		cfg.Name = "DL_" + cfg.Stream
		if cfg.Consumer != "*" {
			cfg.Name += "_" + cfg.Consumer
		}
	}
	return nil
}

// Stats are a Mover's counters.
type Stats struct {
	// Moved counts letters published (duplicates the stream dropped
	// included); Missing those published without a body because the
	// message was gone; Skipped the advisories Filter dropped.
	Moved, Missing, Skipped uint64
}

// Mover republishes the dead letters of a stream's consumers. Create it
// with Start.
type Mover struct {
	js     *jsapi.JS
	src    *jsapi.Stream
	cfg    Config
	cc     *pull.ConsumeContext
	closed chan struct{}
	err    error

	mu sync.Mutex
	st Stats
}

// Start captures the MAX_DELIVERIES and MSG_TERMINATED advisories of
// cfg's consumers in a work-queue stream (cfg.Name, created or updated),
// and moves each: it reads the message by its stream sequence and publishes
// it, with its headers and body and the Dead-Letter-* headers naming its
// origin, to Subject.<stream>.<consumer>, with a Nats-Msg-Id made of the
// stream, consumer and sequence. The advisory is acknowledged only once the
// letter's publish was acknowledged, and the advisories wait in their stream
// while no Mover runs, so a letter is moved after a crash or a restart; one
// moved twice is dropped by the dead-letter stream's duplicate window.
//
// Advisories are core NATS messages: those published before the advisory
// stream existed are lost, so Start the Mover (once; it is idempotent)
// before consuming. Headers of the original that the server interprets
// (Nats-*) are not copied.
//
// Start fails with conn.ErrInvalidOption for a bad cfg, jsapi.ErrStreamNotFound
// when cfg.Stream does not exist, and an *jsapi.APIError when the advisory
// stream cannot be made (one overlapping it, for instance). The Mover runs
// until ctx ends or Stop; Closed and Err tell when and why it ended.
func Start(ctx context.Context, js *jsapi.JS, cfg Config) (*Mover, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	src, err := js.Stream(ctx, cfg.Stream)
	if err != nil {
		return nil, err
	}
	if _, err := js.CreateOrUpdateStream(ctx, jsapi.StreamConfig{
		Name:        cfg.Name,
		Description: "dead-letter advisories of " + cfg.Stream,
		Subjects:    AdvisorySubjects(cfg.Stream, cfg.Consumer),
		Retention:   jsapi.RetentionWorkQueue,
		Storage:     cfg.Storage,
		Replicas:    cfg.Replicas,
	}); err != nil {
		return nil, fmt.Errorf("deadletter: advisory stream %s: %w", cfg.Name, err)
	}
	info, err := js.CreateOrUpdateConsumer(ctx, cfg.Name, jsapi.ConsumerConfig{
		Durable: moverConsumer, AckPolicy: jsapi.AckExplicit, AckWait: cfg.AckWait,
	})
	if err != nil {
		return nil, fmt.Errorf("deadletter: advisory consumer: %w", err)
	}
	c, err := pull.FromInfo(js, info)
	if err != nil {
		return nil, fmt.Errorf("deadletter: advisory consumer: %w", err)
	}
	mv := &Mover{js: js, src: src, cfg: cfg, closed: make(chan struct{})}
	mv.cc, err = c.Consume(ctx, func(m *jsapi.Msg) { mv.move(ctx, m) }, pull.MaxMessages(32))
	if err != nil {
		return nil, err
	}
	go func() {
		<-mv.cc.Closed()
		mv.err = mv.cc.Err()
		close(mv.closed)
	}()
	return mv, nil
}

func (mv *Mover) report(err error) {
	if mv.cfg.OnError != nil {
		mv.cfg.OnError(err)
	}
}

func (mv *Mover) count(f func(*Stats)) {
	mv.mu.Lock()
	f(&mv.st)
	mv.mu.Unlock()
}

// LetterID is the Nats-Msg-Id of the dead letter of the message at seq in
// stream, given up by consumer.
func LetterID(stream, consumer string, seq uint64) string {
	return "dl:" + stream + ":" + consumer + ":" + strconv.FormatUint(seq, 10)
}

// move handles one advisory.
func (mv *Mover) move(ctx context.Context, m *jsapi.Msg) {
	a, err := ParseAdvisory(m.Subject, m.Data)
	if err != nil {
		mv.report(err)
		_ = m.Term()
		return
	}
	if mv.cfg.Filter != nil && !mv.cfg.Filter(a) {
		mv.count(func(s *Stats) { s.Skipped++ })
		_ = m.Ack()
		return
	}
	h := proto.Header{}
	var data []byte
	missing := false
	sm, err := mv.src.GetMsg(ctx, a.StreamSeq)
	switch {
	case err == nil:
		for k, v := range sm.Header.All() {
			if !strings.HasPrefix(k, "Nats-") {
				h.Add(k, v)
			}
		}
		data = sm.Data
		h.Set(HeaderSubject, sm.Subject)
		h.Set(HeaderTime, sm.Time.UTC().Format(time.RFC3339Nano))
	case errors.Is(err, jsapi.ErrMsgNotFound):
		missing = true
		h.Set(HeaderMissing, "true")
	default:
		mv.report(fmt.Errorf("deadletter: reading %s seq %d: %w", a.Stream, a.StreamSeq, err))
		_ = m.NakWithDelay(time.Second)
		return
	}
	h.Set(HeaderStream, a.Stream)
	h.Set(HeaderConsumer, a.Consumer)
	h.Set(HeaderSequence, strconv.FormatUint(a.StreamSeq, 10))
	h.Set(HeaderDeliveries, strconv.FormatUint(a.Deliveries, 10))
	h.Set(HeaderReason, string(a.Reason))
	if a.Description != "" {
		h.Set(HeaderDescription, a.Description)
	}
	subject := mv.cfg.Subject + "." + a.Stream + "." + a.Consumer
	if _, err := mv.js.PublishMsg(ctx, subject, &h, data, jsapi.MsgID(LetterID(a.Stream, a.Consumer, a.StreamSeq))); err != nil {
		mv.report(fmt.Errorf("deadletter: publishing to %s: %w", subject, err))
		_ = m.NakWithDelay(time.Second)
		return
	}
	mv.count(func(s *Stats) {
		s.Moved++
		if missing {
			s.Missing++
		}
	})
	if err := m.AckSync(ctx); err != nil {
		mv.report(fmt.Errorf("deadletter: acknowledging advisory: %w", err))
	}
}

// Stop ends the Mover; an advisory being moved is finished or left to be
// moved again. Closed tells when it has ended.
func (mv *Mover) Stop() { mv.cc.Stop() }

// Closed returns a channel closed once the Mover has ended.
func (mv *Mover) Closed() <-chan struct{} { return mv.closed }

// Err reports why the Mover ended, once Closed is closed: nil after Stop or
// the end of its context, otherwise the error that ended reading the
// advisories (the advisory stream deleted, the connection closed).
func (mv *Mover) Err() error {
	select {
	case <-mv.closed:
		return mv.err
	default:
		return nil
	}
}

// Stats returns the Mover's counters.
func (mv *Mover) Stats() Stats {
	mv.mu.Lock()
	defer mv.mu.Unlock()
	return mv.st
}
