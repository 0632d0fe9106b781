package jsapi

import (
	"encoding/json"
	"time"
)

// RetentionPolicy decides when a stream's messages may be removed (besides
// its limits).
type RetentionPolicy string

const (
	// RetentionLimits keeps messages until a limit removes them (the
	// server's default).
	RetentionLimits RetentionPolicy = "limits"
	// RetentionInterest keeps messages while a consumer has not acknowledged
	// them.
	RetentionInterest RetentionPolicy = "interest"
	// RetentionWorkQueue removes a message once one consumer acknowledged it.
	RetentionWorkQueue RetentionPolicy = "workqueue"
)

// StorageType is where a stream (or consumer) keeps its data.
type StorageType string

const (
	// StorageFile stores on disk (the server's default).
	StorageFile StorageType = "file"
	// StorageMemory stores in memory only.
	StorageMemory StorageType = "memory"
)

// DiscardPolicy decides what happens when a stream reaches a limit.
type DiscardPolicy string

const (
	// DiscardOld removes the oldest messages (the server's default).
	DiscardOld DiscardPolicy = "old"
	// DiscardNew rejects new messages.
	DiscardNew DiscardPolicy = "new"
)

// Compression is a file stream's on-disk compression.
type Compression string

const (
	// CompressionNone stores messages uncompressed (the server's default).
	CompressionNone Compression = "none"
	// CompressionS2 compresses message blocks with S2.
	CompressionS2 Compression = "s2"
)

// PersistMode decides when a publish is acknowledged relative to the write
// to storage (server 2.12+).
type PersistMode string

const (
	// PersistDefault acknowledges after the write is flushed.
	PersistDefault PersistMode = "default"
	// PersistAsync may acknowledge before the write is flushed: messages
	// can be lost on a hard crash.
	PersistAsync PersistMode = "async"
)

// StreamConfig is a stream's configuration, field for field the server's
// JSON. Zero fields are not sent, so the server applies its defaults (file
// storage, limits retention, one replica, unlimited limits, a 2-minute
// duplicate window, …); a boolean left false is sent as absent, which the
// server reads as false, and an update replaces the whole configuration.
// Enum fields left empty take the server's default.
//
// JSON members this version does not know are kept when a StreamConfig is
// decoded and written back when it is encoded, so a configuration read from
// a newer server can be modified and sent back without losing settings.
// Copies of a StreamConfig share those members (they are never modified).
type StreamConfig struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Subjects    []string        `json:"subjects,omitempty"`
	Retention   RetentionPolicy `json:"retention,omitempty"`
	// MaxConsumers limits the stream's consumers (0: server default).
	MaxConsumers int `json:"max_consumers,omitempty"`
	// MaxMsgs, MaxBytes, MaxMsgsPerSubject and MaxMsgSize: 0 or -1 mean
	// unlimited.
	MaxMsgs           int64         `json:"max_msgs,omitempty"`
	MaxBytes          int64         `json:"max_bytes,omitempty"`
	MaxAge            time.Duration `json:"max_age,omitempty"`
	MaxMsgsPerSubject int64         `json:"max_msgs_per_subject,omitempty"`
	MaxMsgSize        int32         `json:"max_msg_size,omitempty"`
	Discard           DiscardPolicy `json:"discard,omitempty"`
	Storage           StorageType   `json:"storage,omitempty"`
	Replicas          int           `json:"num_replicas,omitempty"`
	// NoAck: publishes to the stream get no PubAck.
	NoAck bool `json:"no_ack,omitempty"`
	// DuplicateWindow is the Nats-Msg-Id deduplication window (0: 2 min).
	DuplicateWindow time.Duration  `json:"duplicate_window,omitempty"`
	Placement       *Placement     `json:"placement,omitempty"`
	Mirror          *StreamSource  `json:"mirror,omitempty"`
	Sources         []StreamSource `json:"sources,omitempty"`
	Compression     Compression    `json:"compression,omitempty"`
	// FirstSeq is the sequence of the stream's first message.
	FirstSeq uint64 `json:"first_seq,omitempty"`
	// SubjectTransform rewrites the subjects of incoming messages.
	SubjectTransform *SubjectTransformConfig `json:"subject_transform,omitempty"`
	// RePublish republishes stored messages to another subject.
	RePublish *RePublish `json:"republish,omitempty"`
	// AllowDirect enables Direct Get ($JS.API.DIRECT.GET).
	AllowDirect bool `json:"allow_direct,omitempty"`
	// MirrorDirect lets a mirror answer Direct Gets for its origin.
	MirrorDirect bool `json:"mirror_direct,omitempty"`
	// DiscardNewPerSubject applies DiscardNew per subject (needs
	// MaxMsgsPerSubject).
	DiscardNewPerSubject bool `json:"discard_new_per_subject,omitempty"`
	// Sealed, DenyDelete and DenyPurge cannot be undone once set.
	Sealed      bool `json:"sealed,omitempty"`
	DenyDelete  bool `json:"deny_delete,omitempty"`
	DenyPurge   bool `json:"deny_purge,omitempty"`
	AllowRollup bool `json:"allow_rollup_hdrs,omitempty"`
	// ConsumerLimits are defaults (and maxima) for the stream's consumers.
	ConsumerLimits ConsumerLimits `json:"consumer_limits,omitzero"`
	// AllowMsgTTL honours per-message TTLs (Nats-TTL, server 2.11+).
	AllowMsgTTL bool `json:"allow_msg_ttl,omitempty"`
	// SubjectDeleteMarkerTTL leaves a delete marker with this TTL when
	// the last message of a subject is removed (needs AllowMsgTTL).
	SubjectDeleteMarkerTTL time.Duration `json:"subject_delete_marker_ttl,omitempty"`
	// AllowMsgCounter makes the stream a counter stream (server 2.12+).
	AllowMsgCounter bool `json:"allow_msg_counter,omitempty"`
	// AllowAtomicPublish enables atomic batch publishing (server 2.12+).
	AllowAtomicPublish bool `json:"allow_atomic,omitempty"`
	// AllowMsgSchedules enables message schedules (server 2.12+).
	AllowMsgSchedules bool `json:"allow_msg_schedules,omitempty"`
	// PersistMode (server 2.12+).
	PersistMode PersistMode `json:"persist_mode,omitempty"`
	// AllowBatchPublish enables fast batch publishing (server 2.14+).
	AllowBatchPublish bool `json:"allow_batched,omitempty"`
	// Metadata is free-form; the server adds "_nats." keys.
	Metadata map[string]string `json:"metadata,omitempty"`

	extra extraFields
}

// streamConfigJSON is StreamConfig without its JSON methods.
type streamConfigJSON StreamConfig

// MarshalJSON encodes c, including the members it was decoded with but
// does not know.
func (c StreamConfig) MarshalJSON() ([]byte, error) {
	return marshalWithExtra(streamConfigJSON(c), c.extra)
}

// UnmarshalJSON decodes c, keeping members it does not know.
func (c *StreamConfig) UnmarshalJSON(data []byte) error {
	var p streamConfigJSON
	extra, err := unmarshalKeepUnknown(data, &p)
	if err != nil {
		return err
	}
	p.extra = extra
	*c = StreamConfig(p)
	return nil
}

// ConsumerLimits are a stream's defaults for its consumers.
type ConsumerLimits struct {
	InactiveThreshold time.Duration `json:"inactive_threshold,omitempty"`
	MaxAckPending     int           `json:"max_ack_pending,omitempty"`
}

// Placement asks for a stream's replicas in a cluster and/or on servers
// with tags.
type Placement struct {
	Cluster   string   `json:"cluster,omitempty"`
	Tags      []string `json:"tags,omitempty"`
	Preferred string   `json:"preferred,omitempty"`
}

// StreamSource is a stream a mirror or a sourcing stream copies from.
type StreamSource struct {
	Name              string                   `json:"name"`
	OptStartSeq       uint64                   `json:"opt_start_seq,omitempty"`
	OptStartTime      time.Time                `json:"opt_start_time,omitzero"`
	FilterSubject     string                   `json:"filter_subject,omitempty"`
	SubjectTransforms []SubjectTransformConfig `json:"subject_transforms,omitempty"`
	// External reaches the source in another account or domain.
	External *External `json:"external,omitempty"`
	// Consumer names a durable consumer used for sourcing.
	Consumer *StreamConsumerSource `json:"consumer,omitempty"`
}

// StreamConsumerSource names the durable consumer a source uses.
type StreamConsumerSource struct {
	Name           string `json:"name,omitempty"`
	DeliverSubject string `json:"deliver_subject,omitempty"`
}

// External is the API prefix (and delivery prefix) of a stream in another
// account or JetStream domain, e.g. {APIPrefix: "$JS.hub.API"}.
type External struct {
	APIPrefix     string `json:"api"`
	DeliverPrefix string `json:"deliver"`
}

// SubjectTransformConfig maps subjects matching Source to Destination
// (with the server's mapping functions, e.g. "{{wildcard(1)}}").
type SubjectTransformConfig struct {
	Source      string `json:"src"`
	Destination string `json:"dest"`
}

// RePublish republishes each stored message whose subject matches Source
// (all when empty) to Destination, optionally headers only.
type RePublish struct {
	Source      string `json:"src,omitempty"`
	Destination string `json:"dest"`
	HeadersOnly bool   `json:"headers_only,omitempty"`
}

// StreamInfo is a stream's configuration and state.
type StreamInfo struct {
	Config     StreamConfig        `json:"config"`
	Created    time.Time           `json:"created"`
	State      StreamState         `json:"state"`
	Domain     string              `json:"domain,omitempty"`
	Cluster    *ClusterInfo        `json:"cluster,omitempty"`
	Mirror     *StreamSourceInfo   `json:"mirror,omitempty"`
	Sources    []*StreamSourceInfo `json:"sources,omitempty"`
	Alternates []StreamAlternate   `json:"alternates,omitempty"`
	// TimeStamp is when the server gathered the information.
	TimeStamp time.Time `json:"ts"`
}

// StreamState is a stream's message state.
type StreamState struct {
	Msgs      uint64    `json:"messages"`
	Bytes     uint64    `json:"bytes"`
	FirstSeq  uint64    `json:"first_seq"`
	FirstTime time.Time `json:"first_ts"`
	LastSeq   uint64    `json:"last_seq"`
	LastTime  time.Time `json:"last_ts"`
	// NumSubjects counts the stream's distinct subjects.
	NumSubjects int `json:"num_subjects,omitempty"`
	// Subjects holds per-subject message counts when requested with
	// SubjectsFilter.
	Subjects map[string]uint64 `json:"subjects,omitempty"`
	// NumDeleted counts interior deletes; Deleted lists them when
	// requested with DeletedDetails.
	NumDeleted int             `json:"num_deleted,omitempty"`
	Deleted    []uint64        `json:"deleted,omitempty"`
	Lost       *LostStreamData `json:"lost,omitempty"`
	Consumers  int             `json:"consumer_count"`
}

// LostStreamData lists messages the server lost (storage damage).
type LostStreamData struct {
	Msgs  []uint64 `json:"msgs"`
	Bytes uint64   `json:"bytes"`
}

// ClusterInfo describes the replica group of a stream or consumer.
type ClusterInfo struct {
	Name           string      `json:"name,omitempty"`
	RaftGroup      string      `json:"raft_group,omitempty"`
	Leader         string      `json:"leader,omitempty"`
	LeaderSince    time.Time   `json:"leader_since,omitzero"`
	SystemAccount  bool        `json:"system_account,omitempty"`
	TrafficAccount string      `json:"traffic_account,omitempty"`
	Replicas       []*PeerInfo `json:"replicas,omitempty"`
}

// PeerInfo describes one replica other than the leader.
type PeerInfo struct {
	Name    string `json:"name"`
	Current bool   `json:"current"`
	Offline bool   `json:"offline,omitempty"`
	// Active is the time since the peer was last seen.
	Active time.Duration `json:"active"`
	// Lag is how many operations the peer is behind.
	Lag  uint64 `json:"lag,omitempty"`
	Peer string `json:"peer"`
	// Pending: the peer is assigned but not (yet, or any more) part of
	// the group.
	Pending bool `json:"pending,omitempty"`
}

// StreamSourceInfo is the state of a mirror's or a source's copying.
type StreamSourceInfo struct {
	Name     string    `json:"name"`
	External *External `json:"external,omitempty"`
	// Lag is how many messages the copy is behind.
	Lag uint64 `json:"lag"`
	// Seq is the last source sequence copied.
	Seq uint64 `json:"seq,omitempty"`
	// Active is the time since the last activity (-1: none).
	Active            time.Duration            `json:"active"`
	Error             *APIError                `json:"error,omitempty"`
	FilterSubject     string                   `json:"filter_subject,omitempty"`
	SubjectTransforms []SubjectTransformConfig `json:"subject_transforms,omitempty"`
}

// StreamAlternate is a mirror of the stream that may answer reads.
type StreamAlternate struct {
	Name    string `json:"name"`
	Domain  string `json:"domain,omitempty"`
	Cluster string `json:"cluster"`
}

var _ json.Marshaler = StreamConfig{}
