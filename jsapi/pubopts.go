package jsapi

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/proto"
)

// Header names JetStream reads on publish.
const (
	HeaderMsgID                   = "Nats-Msg-Id"
	HeaderExpectedStream          = "Nats-Expected-Stream"
	HeaderExpectedLastSeq         = "Nats-Expected-Last-Sequence"
	HeaderExpectedLastSubjSeq     = "Nats-Expected-Last-Subject-Sequence"
	HeaderExpectedLastSubjSeqSubj = "Nats-Expected-Last-Subject-Sequence-Subject"
	HeaderExpectedLastMsgID       = "Nats-Expected-Last-Msg-Id"
	HeaderTTL                     = "Nats-TTL"
	HeaderRollup                  = "Nats-Rollup"
	HeaderIncr                    = "Nats-Incr"
	HeaderSchedule                = "Nats-Schedule"
	HeaderScheduleTarget          = "Nats-Schedule-Target"
	HeaderScheduleTTL             = "Nats-Schedule-TTL"
	HeaderScheduleTimeZone        = "Nats-Schedule-Time-Zone"
	HeaderScheduleSource          = "Nats-Schedule-Source"
	HeaderScheduleRollup          = "Nats-Schedule-Rollup"
	HeaderScheduleNext            = "Nats-Schedule-Next"
	HeaderScheduler               = "Nats-Scheduler"
	HeaderRequiredAPILevel        = "Nats-Required-Api-Level"
	HeaderStream                  = "Nats-Stream"
	HeaderSequence                = "Nats-Sequence"
	HeaderSubject                 = "Nats-Subject"
	HeaderTimeStamp               = "Nats-Time-Stamp"
	HeaderLastSequence            = "Nats-Last-Sequence"
	HeaderNumPending              = "Nats-Num-Pending"
	HeaderMarkerReason            = "Nats-Marker-Reason"
	HeaderRollupValueSubject      = "sub"
	HeaderRollupValueAll          = "all"
	HeaderScheduleNextValuePurge  = "purge"
)

// TTLNever makes a message exempt from expiry (Nats-TTL: never).
const TTLNever = time.Duration(-1)

type pubOptKind uint8

const (
	optMsgID pubOptKind = iota + 1
	optExpectStream
	optExpectLastSeq
	optExpectLastSubjSeq
	optExpectLastSubjSeqSubj
	optExpectLastMsgID
	optTTL
	optHeader
	optSchedule       // v: the Nats-Schedule pattern; d: the @every interval
	optScheduleTZ     // v: the IANA zone
	optCancelSchedule // s: the schedule's subject
	optIncr           // v: the signed decimal increment
	optScheduleTTL    // d: the TTL of produced messages
	optScheduleCron   // v: the pattern given to ScheduleCron
)

// PubOpt is a publish option: a message ID, an expectation, a TTL, or any
// header. Options are plain values; passing them allocates nothing.
type PubOpt struct {
	kind pubOptKind
	s, v string
	n    uint64
	d    time.Duration
}

// MsgID sets Nats-Msg-Id: the stream stores a message with an ID it has
// seen within its duplicate window only once and acks the retry with the
// original sequence and Duplicate set. Retries of one logical message must
// reuse its ID. An empty id means no ID: the option does nothing.
func MsgID(id string) PubOpt { return PubOpt{kind: optMsgID, s: id} }

// ExpectStream fails the publish (ErrWrongStream) unless it lands in stream.
func ExpectStream(stream string) PubOpt { return PubOpt{kind: optExpectStream, s: stream} }

// ExpectLastSeq fails the publish (ErrWrongLastSequence) unless the stream's
// last sequence is seq.
func ExpectLastSeq(seq uint64) PubOpt { return PubOpt{kind: optExpectLastSeq, n: seq} }

// ExpectLastSubjectSeq fails the publish (ErrWrongLastSequence) unless the
// last message on the published subject (or on the ExpectLastSubjectSeqFor
// filter) has sequence seq; 0 means no message on it.
func ExpectLastSubjectSeq(seq uint64) PubOpt { return PubOpt{kind: optExpectLastSubjSeq, n: seq} }

// ExpectLastSubjectSeqFor scopes ExpectLastSubjectSeq to filter (which may
// hold wildcards) instead of the published subject. It requires
// ExpectLastSubjectSeq in the same publish; alone it is rejected locally.
func ExpectLastSubjectSeqFor(filter string) PubOpt {
	return PubOpt{kind: optExpectLastSubjSeqSubj, s: filter}
}

// ExpectLastMsgID fails the publish (ErrWrongLastMsgID) unless the
// stream's last message ID is id.
func ExpectLastMsgID(id string) PubOpt { return PubOpt{kind: optExpectLastMsgID, s: id} }

// TTL sets the message's time to live (Nats-TTL, stream needs
// AllowMsgTTL): a whole number of seconds, at least one, or TTLNever,
// which exempts the message from expiry. The server keeps whole seconds
// only, so anything else (1500 ms, 500 ms) is refused before sending, with
// an error matching conn.ErrInvalidOption and ErrInvalidTTL, rather than
// rounded.
func TTL(d time.Duration) PubOpt { return PubOpt{kind: optTTL, d: d} }

// Incr publishes a counter increment (Nats-Incr) to a stream with
// AllowMsgCounter; the data must be empty and PubAck.Value holds the total.
func Incr(delta int64) PubOpt {
	return PubOpt{kind: optIncr, v: strconv.FormatInt(delta, 10)}
}

// Rollup sets Nats-Rollup to "sub" (purge the subject below this message)
// or "all" (purge the stream); the stream needs AllowRollup.
func Rollup(scope string) PubOpt { return PubOpt{kind: optHeader, s: HeaderRollup, v: scope} }

// ScheduleAt makes the message a schedule (stream needs AllowMsgSchedules)
// that publishes once at t to target, a subject of the same stream that is
// not the schedule's own subject.
func ScheduleAt(t time.Time) PubOpt {
	return PubOpt{kind: optSchedule, v: "@at " + t.UTC().Format(time.RFC3339)}
}

// ScheduleEvery makes the message a repeating schedule (server 2.14+),
// sent as "@every " and every's Go form ("@every 1m30s"); every must be at
// least a second (refused before sending otherwise, with an error matching
// conn.ErrInvalidOption and ErrSchedules).
func ScheduleEvery(every time.Duration) PubOpt {
	return PubOpt{kind: optSchedule, v: "@every " + every.String(), d: every}
}

// ScheduleCron makes the message a cron schedule (server 2.14+), sent as
// Nats-Schedule unchanged. spec is six fields separated by spaces, seconds
// first ("0 30 9 * * 1-5"), or one of the server's aliases: "@yearly" (or
// "@annually"), "@monthly", "@weekly" (Sunday), "@daily" (or
// "@midnight"), "@hourly", all at second 0 in the schedule's time zone
// (UTC unless ScheduleTimeZone); or the forms of ScheduleEvery and
// ScheduleAt, "@every <Go duration of at least a second>" and
// "@at <RFC 3339 time>". Anything else is refused before sending, with an
// error matching conn.ErrInvalidOption and ErrSchedules: another "@" word,
// a field count other than six. The server checks the fields themselves
// (ErrSchedules).
func ScheduleCron(spec string) PubOpt { return PubOpt{kind: optScheduleCron, v: spec} }

// checkCron validates a ScheduleCron pattern as far as its shape: the
// server parses the fields.
func checkCron(spec string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: %w: cron schedule %q: %s", conn.ErrInvalidOption, ErrSchedules, spec, why)
	}
	switch {
	case spec == "":
		return bad("empty")
	case strings.HasPrefix(spec, "@every "):
		d, err := time.ParseDuration(spec[len("@every "):])
		if err != nil {
			return bad("not a Go duration")
		}
		if d < time.Second {
			return bad("interval below one second")
		}
		return nil
	case strings.HasPrefix(spec, "@at "):
		if _, err := time.Parse(time.RFC3339, spec[len("@at "):]); err != nil {
			return bad("not an RFC 3339 time")
		}
		return nil
	case spec[0] == '@':
		switch spec {
		case "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly":
			return nil
		}
		return bad("unknown alias")
	}
	if n := len(strings.Fields(spec)); n != 6 {
		return bad(fmt.Sprintf("%d fields, want 6 (seconds first)", n))
	}
	return nil
}

// ScheduleTarget sets the subject a schedule publishes to.
func ScheduleTarget(subject string) PubOpt {
	return PubOpt{kind: optHeader, s: HeaderScheduleTarget, v: subject}
}

// ScheduleTTL sets the TTL of the messages a schedule produces
// (Nats-Schedule-TTL; the stream needs AllowMsgTTL as well). The rule of
// TTL applies: a whole number of seconds, at least one, or TTLNever;
// anything else is refused before sending, with an error matching
// conn.ErrInvalidOption and ErrSchedules (the server's sentinel for an
// invalid schedule TTL).
func ScheduleTTL(d time.Duration) PubOpt { return PubOpt{kind: optScheduleTTL, d: d} }

// ScheduleTimeZone sets the IANA time zone of a cron schedule (2.14+). It
// is rejected locally with ScheduleAt or ScheduleEvery, which the server
// refuses a zone for, and when the schedule is missing.
func ScheduleTimeZone(tz string) PubOpt { return PubOpt{kind: optScheduleTZ, v: tz} }

// ScheduleSource makes each message a schedule produces a copy of the last
// message on subject (server 2.14+) instead of the schedule's own data.
// subject must be in the same stream and differ from the schedule's
// subject and target.
func ScheduleSource(subject string) PubOpt {
	return PubOpt{kind: optHeader, s: HeaderScheduleSource, v: subject}
}

// ScheduleRollup makes each message a schedule produces roll up its
// target subject (Nats-Schedule-Rollup: sub, server 2.14+): the target
// keeps only the newest produced message.
func ScheduleRollup() PubOpt {
	return PubOpt{kind: optHeader, s: HeaderScheduleRollup, v: HeaderRollupValueSubject}
}

// CancelSchedule makes the message cancel the schedule stored on
// scheduleSubject (server 2.14+): it carries Nats-Schedule-Next: purge and
// Nats-Scheduler: scheduleSubject, and storing it removes the schedule.
// Publish it on another subject of the same stream (its target, say); the
// server refuses it on the schedule's own subject, and when the last
// message there is not a schedule (err_code 10212).
func CancelSchedule(scheduleSubject string) PubOpt {
	return PubOpt{kind: optCancelSchedule, s: scheduleSubject}
}

// pubSettings is the result of applying PubOpts.
type pubSettings struct {
	feature Feature // the version-gated feature needing the highest level, or 0
}

// checkTTL validates a TTL for the header named what: TTLNever, or a whole
// number of seconds, at least one (the server's resolution). A refusal
// matches conn.ErrInvalidOption and serverErr, the sentinel of the
// server's error for it.
func checkTTL(what string, d time.Duration, serverErr error) error {
	switch {
	case d == TTLNever:
		return nil
	case d < time.Second:
		return fmt.Errorf("%w: %w: %s %v is below one second", conn.ErrInvalidOption, serverErr, what, d)
	case d%time.Second != 0:
		return fmt.Errorf("%w: %w: %s %v is not a whole number of seconds", conn.ErrInvalidOption, serverErr, what, d)
	}
	return nil
}

// ttlValue is the header value of a TTL checkTTL accepted.
func ttlValue(d time.Duration) string {
	if d == TTLNever {
		return "never"
	}
	return strconv.FormatInt(int64(d/time.Second), 10)
}

// applyPubOpts validates opts and writes their headers into h.
func applyPubOpts(h *proto.Header, opts []PubOpt) (pubSettings, error) {
	var ps pubSettings
	var subjSeq, subjSeqFor, tz bool
	schedule := "" // the Nats-Schedule pattern, when set
	for i := range opts {
		o := &opts[i]
		switch o.kind {
		case optMsgID:
			if o.s == "" {
				continue // no ID
			}
			h.Set(HeaderMsgID, o.s)
		case optExpectStream:
			if ValidateName(o.s) != nil {
				return ps, fmt.Errorf("%w: expected stream %q", conn.ErrInvalidOption, o.s)
			}
			h.Set(HeaderExpectedStream, o.s)
		case optExpectLastSeq:
			h.Set(HeaderExpectedLastSeq, strconv.FormatUint(o.n, 10))
		case optExpectLastSubjSeq:
			subjSeq = true
			h.Set(HeaderExpectedLastSubjSeq, strconv.FormatUint(o.n, 10))
		case optExpectLastSubjSeqSubj:
			if proto.ValidateSubscribeSubject(o.s) != nil {
				return ps, fmt.Errorf("%w: expected-last-subject filter %q", conn.ErrInvalidOption, o.s)
			}
			subjSeqFor = true
			h.Set(HeaderExpectedLastSubjSeqSubj, o.s)
			ps.feature = maxFeature(ps.feature, FeatureExpectLastSubjectSeqFor)
		case optExpectLastMsgID:
			if o.s == "" {
				return ps, fmt.Errorf("%w: empty expected last message ID", conn.ErrInvalidOption)
			}
			h.Set(HeaderExpectedLastMsgID, o.s)
		case optTTL:
			if err := checkTTL("TTL", o.d, ErrInvalidTTL); err != nil {
				return ps, err
			}
			h.Set(HeaderTTL, ttlValue(o.d))
			ps.feature = maxFeature(ps.feature, FeatureMsgTTL)
		case optScheduleTTL:
			if err := checkTTL("schedule TTL", o.d, ErrSchedules); err != nil {
				return ps, err
			}
			h.Set(HeaderScheduleTTL, ttlValue(o.d))
			ps.feature = maxFeature(ps.feature, FeatureSchedules)
		case optHeader:
			h.Add(o.s, o.v)
			switch o.s {
			case HeaderScheduleTarget:
				ps.feature = maxFeature(ps.feature, FeatureSchedules)
			case HeaderScheduleSource, HeaderScheduleRollup:
				ps.feature = maxFeature(ps.feature, FeatureScheduleExtensions)
			}
		case optScheduleCron:
			if err := checkCron(o.v); err != nil {
				return ps, err
			}
			schedule = o.v
			h.Set(HeaderSchedule, o.v)
			ps.feature = maxFeature(ps.feature, scheduleFeature(o.v))
		case optSchedule:
			if strings.HasPrefix(o.v, "@every ") && o.d < time.Second {
				return ps, fmt.Errorf("%w: %w: schedule interval %v is below one second", conn.ErrInvalidOption, ErrSchedules, o.d)
			}
			schedule = o.v
			h.Set(HeaderSchedule, o.v)
			ps.feature = maxFeature(ps.feature, scheduleFeature(o.v))
		case optScheduleTZ:
			if o.v == "" {
				return ps, fmt.Errorf("%w: empty schedule time zone", conn.ErrInvalidOption)
			}
			tz = true
			h.Set(HeaderScheduleTimeZone, o.v)
			ps.feature = maxFeature(ps.feature, FeatureScheduleCron)
		case optCancelSchedule:
			if proto.ValidatePublishSubject(o.s) != nil {
				return ps, fmt.Errorf("%w: schedule subject %q", conn.ErrInvalidOption, o.s)
			}
			h.Set(HeaderScheduleNext, HeaderScheduleNextValuePurge)
			h.Set(HeaderScheduler, o.s)
			ps.feature = maxFeature(ps.feature, FeatureScheduleExtensions)
		case optIncr:
			if !validIncrement(o.v) {
				return ps, fmt.Errorf("%w: counter increment %q", conn.ErrInvalidOption, o.v)
			}
			h.Set(HeaderIncr, o.v)
			ps.feature = maxFeature(ps.feature, FeatureCounters)
		default:
			return ps, fmt.Errorf("%w: zero PubOpt", conn.ErrInvalidOption)
		}
	}
	if tz && (schedule == "" || strings.HasPrefix(schedule, "@at ") || strings.HasPrefix(schedule, "@every ")) {
		return ps, fmt.Errorf("%w: a schedule time zone applies to cron schedules only", conn.ErrInvalidOption)
	}
	if subjSeqFor && !subjSeq {
		return ps, fmt.Errorf("%w: ExpectLastSubjectSeqFor needs ExpectLastSubjectSeq", conn.ErrInvalidOption)
	}
	if err := h.Validate(); err != nil {
		return ps, fmt.Errorf("%w: %v", conn.ErrInvalidOption, err)
	}
	return ps, nil
}

// scheduleFeature is the feature a Nats-Schedule pattern needs.
func scheduleFeature(pattern string) Feature {
	switch {
	case strings.HasPrefix(pattern, "@at "):
		return FeatureSchedules
	case strings.HasPrefix(pattern, "@every "):
		return FeatureScheduleInterval
	}
	return FeatureScheduleCron
}

// applyPubOptHeaders validates opts, checks that the server that answers
// js's requests has the features they use (see JS.Check), and adds their
// headers to h, for publishers built on this package (pubwin, kv, extra).
func applyPubOptHeaders(ctx context.Context, js *JS, h *proto.Header, opts []PubOpt) error {
	ps, err := applyPubOpts(h, opts)
	if err == nil && ps.feature != 0 {
		err = js.check(ctx, ps.feature)
	}
	return err
}
