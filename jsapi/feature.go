package jsapi

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/proto"
)

// Feature is a JetStream feature that needs a server newer than 2.10. A
// call that uses one checks the server's JetStream API level (ADR-44)
// first and fails with a *FeatureError, before anything is sent, when the
// server is too old: older servers would refuse the request with an
// opaque error, leave it unanswered, or, worse, ignore the feature
// silently (a 2.10 server stores a message with a TTL header and never
// expires it).
type Feature uint8

// The version-gated features natsio uses, with the server version and API
// level each needs.
const (
	// FeatureMsgTTL: per-message TTL (TTL, StreamConfig.AllowMsgTTL and
	// SubjectDeleteMarkerTTL, KV per-key TTL); 2.11.0, level 1.
	FeatureMsgTTL Feature = iota + 1
	// FeatureExpectLastSubjectSeqFor: ExpectLastSubjectSeqFor; 2.11.0,
	// level 1.
	FeatureExpectLastSubjectSeqFor
	// FeaturePriorityGroups: consumer priority groups (overflow, pinned
	// client) and UnpinConsumer; 2.11.0, level 1.
	FeaturePriorityGroups
	// FeatureConsumerPause: PauseConsumer and ConsumerConfig.PauseUntil;
	// 2.11.0, level 1.
	FeatureConsumerPause
	// FeatureBatchDirectGet: batch and multi-last Direct Get (package
	// extra); 2.11.0, level 1.
	FeatureBatchDirectGet
	// FeatureAtomicBatch: atomic batch publish (package extra,
	// StreamConfig.AllowAtomicPublish); 2.12.0, level 2.
	FeatureAtomicBatch
	// FeatureCounters: counters (Incr, StreamConfig.AllowMsgCounter);
	// 2.12.0, level 2.
	FeatureCounters
	// FeatureSchedules: message schedules at a time (ScheduleAt,
	// ScheduleTTL, StreamConfig.AllowMsgSchedules); 2.12.0, level 2.
	FeatureSchedules
	// FeaturePrioritizedPolicy: PriorityPrioritized; 2.12.0, level 2.
	FeaturePrioritizedPolicy
	// FeatureAsyncPersist: StreamConfig.PersistMode PersistAsync; 2.12.0,
	// level 2.
	FeatureAsyncPersist
	// FeatureFastBatch: fast-ingest batch publish (package extra,
	// StreamConfig.AllowBatchPublish); 2.14.0, level 4.
	FeatureFastBatch
	// FeatureBatchCommitEOB: an atomic batch committed by an end-of-batch
	// marker (package extra); 2.14.0, level 4.
	FeatureBatchCommitEOB
	// FeatureScheduleInterval: ScheduleEvery and "@every" in ScheduleCron;
	// 2.14.0, level 4.
	FeatureScheduleInterval
	// FeatureScheduleCron: cron schedules and their aliases
	// (ScheduleCron), ScheduleTimeZone; 2.14.0, level 4.
	FeatureScheduleCron
	// FeatureScheduleExtensions: ScheduleSource, ScheduleRollup and
	// CancelSchedule; 2.14.0, level 4.
	FeatureScheduleExtensions
	// FeatureConsumerReset: ResetConsumer; 2.14.0, level 4.
	FeatureConsumerReset
	// FeatureFlowControlAck: AckFlowControl; 2.14.0, level 4.
	FeatureFlowControlAck
	// FeatureAPILevel5: a request that requires API level 5; 2.15.0.
	FeatureAPILevel5

	numFeatures
)

// featureSpec is what a Feature needs.
type featureSpec struct {
	name    string
	version string
	level   int32
}

var features = [numFeatures]featureSpec{
	FeatureMsgTTL:                  {"per-message TTL", "2.11.0", 1},
	FeatureExpectLastSubjectSeqFor: {"expected last subject sequence for a filter", "2.11.0", 1},
	FeaturePriorityGroups:          {"priority groups", "2.11.0", 1},
	FeatureConsumerPause:           {"consumer pause", "2.11.0", 1},
	FeatureBatchDirectGet:          {"batch direct get", "2.11.0", 1},
	FeatureAtomicBatch:             {"atomic batch publish", "2.12.0", 2},
	FeatureCounters:                {"counters", "2.12.0", 2},
	FeatureSchedules:               {"message schedules", "2.12.0", 2},
	FeaturePrioritizedPolicy:       {"prioritized priority policy", "2.12.0", 2},
	FeatureAsyncPersist:            {"async persist mode", "2.12.0", 2},
	FeatureFastBatch:               {"fast batch publish", "2.14.0", 4},
	FeatureBatchCommitEOB:          {"batch commit by end-of-batch marker", "2.14.0", 4},
	FeatureScheduleInterval:        {"interval schedules", "2.14.0", 4},
	FeatureScheduleCron:            {"cron schedules", "2.14.0", 4},
	FeatureScheduleExtensions:      {"schedule source, rollup and cancel", "2.14.0", 4},
	FeatureConsumerReset:           {"consumer reset", "2.14.0", 4},
	FeatureFlowControlAck:          {"flow_control ack policy", "2.14.0", 4},
	FeatureAPILevel5:               {"API level 5", "2.15.0", 5},
}

// String returns the feature's name ("per-message TTL").
func (f Feature) String() string {
	if f == 0 || f >= numFeatures {
		return "feature(" + strconv.Itoa(int(f)) + ")"
	}
	return features[f].name
}

// Version returns the first server version with the feature ("2.11.0").
func (f Feature) Version() string {
	if f == 0 || f >= numFeatures {
		return ""
	}
	return features[f].version
}

// APILevel returns the JetStream API level the feature needs.
func (f Feature) APILevel() int {
	if f == 0 || f >= numFeatures {
		return 0
	}
	return int(features[f].level)
}

// ErrServerTooOld is matched (errors.Is) by every *FeatureError, and by a
// server's refusal of a request whose Nats-Required-Api-Level it does not
// reach (err_code 10185).
var ErrServerTooOld = errors.New("jsapi: server too old for feature")

// FeatureError reports a feature the server is too old for. When the
// client knew it from the server's INFO (or, for a JS with a Domain or
// APIPrefix, from $JS.API.INFO), nothing was sent; when the server
// refused the request (Nats-Required-Api-Level, err_code 10185), Err is
// that *APIError and the server's level is unknown (-1).
type FeatureError struct {
	Feature        Feature
	NeedVersion    string // first server version with the feature
	NeedAPILevel   int    // JetStream API level the feature needs
	ServerVersion  string // the server's version; "" when not known
	ServerAPILevel int    // the server's API level; -1 when not known
	Err            error  // the server's refusal, or nil when nothing was sent
}

func (e *FeatureError) Error() string {
	srv := "the server"
	switch {
	case e.ServerVersion != "" && e.ServerAPILevel >= 0:
		srv = fmt.Sprintf("server %s (API level %d)", e.ServerVersion, e.ServerAPILevel)
	case e.ServerAPILevel >= 0:
		srv = fmt.Sprintf("the server (API level %d)", e.ServerAPILevel)
	}
	s := fmt.Sprintf("jsapi: %s needs server %s (API level %d); %s is too old", e.Feature, e.NeedVersion, e.NeedAPILevel, srv)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is matches ErrServerTooOld.
func (e *FeatureError) Is(target error) bool { return target == ErrServerTooOld }

// Unwrap returns the server's refusal, if any.
func (e *FeatureError) Unwrap() error { return e.Err }

// Values of a server level besides an API level (see conn.Conn.JetStreamLevel).
const (
	levelUnknown     = -1
	levelNoJetStream = -2
	levelNotFetched  = -3 // js.remoteLevel before the first $JS.API.INFO
)

// serverLevel is the API level of the server that answers js's requests:
// the connected server's, from its INFO (a cached integer), unless js
// goes through a domain or an API prefix, or the connected server does
// not run JetStream: then $JS.API.INFO's, asked once per JS. levelUnknown
// when neither can tell (nothing is refused then).
func (js *JS) serverLevel(ctx context.Context) int32 {
	if !js.remote {
		if lvl := js.nc.JetStreamLevel(); lvl != levelNoJetStream {
			return int32(lvl)
		}
	}
	if lvl := js.remoteLevel.Load(); lvl != levelNotFetched {
		return lvl
	}
	ai, err := js.AccountInfo(ctx)
	if err != nil {
		return levelUnknown // not cached: the next gated call asks again
	}
	js.remoteLevel.Store(int32(ai.API.Level))
	return int32(ai.API.Level)
}

// check fails with a *FeatureError when the server that answers js's
// requests is too old for f. With INFO's level it is an integer compare.
func (js *JS) check(ctx context.Context, f Feature) error {
	if f == 0 {
		return nil
	}
	lvl := js.serverLevel(ctx)
	if lvl < 0 || lvl >= features[f].level {
		return nil
	}
	return js.featureError(f, lvl)
}

// featureError builds the *FeatureError of a refusal before sending.
func (js *JS) featureError(f Feature, lvl int32) *FeatureError {
	e := &FeatureError{Feature: f, NeedVersion: features[f].version, NeedAPILevel: int(features[f].level), ServerAPILevel: int(lvl)}
	if !js.remote && js.nc.JetStreamLevel() >= 0 {
		e.ServerVersion = js.nc.ServerInfo().Version
	}
	return e
}

// Check fails with a *FeatureError (matching ErrServerTooOld) when the
// server that answers js's requests is too old for f: the connected
// server's level from its INFO, or for a JS with a Domain or APIPrefix
// (or a connected server without JetStream) $JS.API.INFO's, asked once.
// The calls that use a feature check it themselves; Check is for asking
// ahead. A Feature that is not one of the constants fails with
// conn.ErrInvalidOption.
func (js *JS) Check(ctx context.Context, f Feature) error {
	if ctx == nil {
		return conn.ErrNilContext
	}
	if f == 0 || f >= numFeatures {
		return fmt.Errorf("%w: unknown feature %d", conn.ErrInvalidOption, f)
	}
	return js.check(ctx, f)
}

// maxFeature returns the one of a and b that needs the higher API level.
func maxFeature(a, b Feature) Feature {
	if a == 0 || b != 0 && features[b].level > features[a].level {
		return b
	}
	return a
}

// requestFeature is request for a body that uses f: it checks the server
// first, sends Nats-Required-Api-Level with f's level, and maps the
// server's refusal of that level (10185) to a *FeatureError. With f zero
// it is request.
func (js *JS) requestFeature(ctx context.Context, f Feature, subject string, req, resp any) error {
	if f == 0 {
		return js.request(ctx, subject, req, resp)
	}
	if ctx == nil {
		return errNilCtx()
	}
	if err := js.check(ctx, f); err != nil {
		return err
	}
	h := new(proto.Header)
	h.Set(HeaderRequiredAPILevel, strconv.Itoa(int(features[f].level)))
	err := js.requestHeader(ctx, subject, h, req, resp)
	return featureRefusal(f, err)
}

// featureRefusal turns the server's 10185 refusal of a request that
// needed f into a *FeatureError wrapping it.
func featureRefusal(f Feature, err error) error {
	var ae *APIError
	if errors.As(err, &ae) && ae.ErrorCode == 10185 {
		return &FeatureError{Feature: f, NeedVersion: features[f].version, NeedAPILevel: int(features[f].level), ServerAPILevel: -1, Err: ae}
	}
	return err
}

// feature is the version-gated feature of cfg needing the highest level,
// or 0.
func (cfg *StreamConfig) feature() Feature {
	var f Feature
	if cfg.AllowMsgTTL || cfg.SubjectDeleteMarkerTTL != 0 {
		f = maxFeature(f, FeatureMsgTTL)
	}
	if cfg.AllowMsgCounter {
		f = maxFeature(f, FeatureCounters)
	}
	if cfg.AllowAtomicPublish {
		f = maxFeature(f, FeatureAtomicBatch)
	}
	if cfg.AllowMsgSchedules {
		f = maxFeature(f, FeatureSchedules)
	}
	if cfg.PersistMode == PersistAsync {
		f = maxFeature(f, FeatureAsyncPersist)
	}
	if cfg.AllowBatchPublish {
		f = maxFeature(f, FeatureFastBatch)
	}
	return f
}

// feature is the version-gated feature of cfg needing the highest level,
// or 0.
func (cfg *ConsumerConfig) feature() Feature {
	var f Feature
	switch cfg.PriorityPolicy {
	case PriorityOverflow, PriorityPinnedClient:
		f = FeaturePriorityGroups
	case PriorityPrioritized:
		f = FeaturePrioritizedPolicy
	}
	if len(cfg.PriorityGroups) > 0 {
		f = maxFeature(f, FeaturePriorityGroups)
	}
	if !cfg.PauseUntil.IsZero() {
		f = maxFeature(f, FeatureConsumerPause)
	}
	if cfg.AckPolicy == AckFlowControl {
		f = maxFeature(f, FeatureFlowControlAck)
	}
	return f
}
