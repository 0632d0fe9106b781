package jsapi

import (
	"time"
)

// DeliverPolicy selects the first message a consumer delivers.
type DeliverPolicy string

const (
	// DeliverAll starts at the stream's first message (the server's
	// default).
	DeliverAll DeliverPolicy = "all"
	// DeliverLast starts at the stream's last message.
	DeliverLast DeliverPolicy = "last"
	// DeliverNew starts with messages stored after the consumer's creation.
	DeliverNew DeliverPolicy = "new"
	// DeliverByStartSequence starts at OptStartSeq.
	DeliverByStartSequence DeliverPolicy = "by_start_sequence"
	// DeliverByStartTime starts at the first message at or after
	// OptStartTime.
	DeliverByStartTime DeliverPolicy = "by_start_time"
	// DeliverLastPerSubject starts with the last message of each subject.
	DeliverLastPerSubject DeliverPolicy = "last_per_subject"
)

// AckPolicy is how a consumer's messages are acknowledged.
type AckPolicy string

const (
	// AckNone: no acknowledgements; a message counts as handled once
	// delivered. It must be asked for by name: a zero AckPolicy means
	// AckExplicit in every consumer natsio creates or updates.
	AckNone AckPolicy = "none"
	// AckAll: acknowledging a message acknowledges all before it.
	AckAll AckPolicy = "all"
	// AckExplicit: each message is acknowledged on its own.
	AckExplicit AckPolicy = "explicit"
	// AckFlowControl acknowledges through flow-control replies (server
	// 2.14+, used by sourcing).
	AckFlowControl AckPolicy = "flow_control"
)

// ReplayPolicy is the pace at which a consumer replays stored messages.
type ReplayPolicy string

const (
	// ReplayInstant delivers as fast as possible (the server's default).
	ReplayInstant ReplayPolicy = "instant"
	// ReplayOriginal keeps the original spacing of the messages.
	ReplayOriginal ReplayPolicy = "original"
)

// PriorityPolicy is how a pull consumer chooses among waiting clients
// (server 2.11+).
type PriorityPolicy string

const (
	// PriorityNone: no priority groups (the server's default).
	PriorityNone PriorityPolicy = "none"
	// PriorityOverflow serves pulls that state min_pending/min_ack_pending
	// only past those thresholds.
	PriorityOverflow PriorityPolicy = "overflow"
	// PriorityPinnedClient delivers to one pinned client per group
	// (Nats-Pin-Id) until it stops pulling for PriorityTimeout.
	PriorityPinnedClient PriorityPolicy = "pinned_client"
	// PriorityPrioritized serves the pull with the lowest priority first
	// (server 2.12+).
	PriorityPrioritized PriorityPolicy = "prioritized"
)

// ConsumerConfig is a consumer's configuration, field for field the
// server's JSON. Zero fields are not sent and take the server's defaults,
// except AckPolicy, whose zero value creates an AckExplicit consumer (see
// the field). A boolean left false is sent as absent, which the server
// reads as false.
//
// Durable names a durable consumer; Name names a consumer that is removed
// after InactiveThreshold without activity; with neither the server picks a
// name (an ephemeral consumer). When both are set they must be equal.
//
// JSON members this version does not know are kept when a ConsumerConfig
// is decoded and written back when it is encoded (see StreamConfig).
type ConsumerConfig struct {
	Durable       string        `json:"durable_name,omitempty"`
	Name          string        `json:"name,omitempty"`
	Description   string        `json:"description,omitempty"`
	DeliverPolicy DeliverPolicy `json:"deliver_policy,omitempty"`
	OptStartSeq   uint64        `json:"opt_start_seq,omitempty"`
	OptStartTime  time.Time     `json:"opt_start_time,omitzero"`
	// AckPolicy is how messages are acknowledged. The zero value means
	// AckExplicit: CreateConsumer, CreateOrUpdateConsumer and
	// UpdateConsumer send "explicit" for it, not the server's default, none,
	// under which Ack does nothing and nothing is ever redelivered. AckNone is sent when asked for by name. An encoded
	// ConsumerConfig (MarshalJSON) carries the field as it is.
	AckPolicy AckPolicy `json:"ack_policy,omitempty"`
	// AckWait is the redelivery delay of an unacknowledged message
	// (0: 30 s for acked policies).
	AckWait time.Duration `json:"ack_wait,omitempty"`
	// MaxDeliver bounds deliveries of one message (0 or -1: unlimited).
	MaxDeliver int `json:"max_deliver,omitempty"`
	// BackOff are successive redelivery delays; they override AckWait.
	BackOff []time.Duration `json:"backoff,omitempty"`
	// FilterSubject or FilterSubjects (not both) select the subjects
	// delivered.
	FilterSubject  string       `json:"filter_subject,omitempty"`
	FilterSubjects []string     `json:"filter_subjects,omitempty"`
	ReplayPolicy   ReplayPolicy `json:"replay_policy,omitempty"`
	// RateLimit is a push consumer's delivery rate in bits per second.
	RateLimit uint64 `json:"rate_limit_bps,omitempty"`
	// SampleFrequency is the percentage of acks sampled for advisories,
	// e.g. "10%".
	SampleFrequency string `json:"sample_freq,omitempty"`
	// MaxWaiting bounds a pull consumer's waiting pull requests (0: 512).
	MaxWaiting int `json:"max_waiting,omitempty"`
	// MaxAckPending bounds unacknowledged messages (0: 1000 or the
	// stream's limit; -1: unlimited).
	MaxAckPending int  `json:"max_ack_pending,omitempty"`
	FlowControl   bool `json:"flow_control,omitempty"`
	HeadersOnly   bool `json:"headers_only,omitempty"`

	// Pull consumers: bounds on each pull request.
	MaxRequestBatch    int           `json:"max_batch,omitempty"`
	MaxRequestExpires  time.Duration `json:"max_expires,omitempty"`
	MaxRequestMaxBytes int           `json:"max_bytes,omitempty"`

	// Push consumers.
	DeliverSubject string        `json:"deliver_subject,omitempty"`
	DeliverGroup   string        `json:"deliver_group,omitempty"`
	IdleHeartbeat  time.Duration `json:"idle_heartbeat,omitempty"`

	// InactiveThreshold removes the consumer after this long without
	// activity (ephemeral default: 5 s).
	InactiveThreshold time.Duration `json:"inactive_threshold,omitempty"`
	// Replicas: 0 inherits the stream's.
	Replicas int `json:"num_replicas,omitempty"`
	// MemoryStorage keeps the consumer's state in memory.
	MemoryStorage bool `json:"mem_storage,omitempty"`
	// Metadata is free-form; the server adds "_nats." keys.
	Metadata map[string]string `json:"metadata,omitempty"`
	// PauseUntil pauses delivery until this time (server 2.11+).
	PauseUntil time.Time `json:"pause_until,omitzero"`

	// Priority groups (server 2.11+).
	PriorityGroups []string       `json:"priority_groups,omitempty"`
	PriorityPolicy PriorityPolicy `json:"priority_policy,omitempty"`
	// PriorityTimeout is how long a pinned client keeps its pin without
	// pulling (pinned_client policy).
	PriorityTimeout time.Duration `json:"priority_timeout,omitempty"`

	extra extraFields
}

// consumerConfigJSON is ConsumerConfig without its JSON methods.
type consumerConfigJSON ConsumerConfig

// MarshalJSON encodes c, including the members it was decoded with but
// does not know.
func (c ConsumerConfig) MarshalJSON() ([]byte, error) {
	return marshalWithExtra(consumerConfigJSON(c), c.extra)
}

// UnmarshalJSON decodes c, keeping members it does not know.
func (c *ConsumerConfig) UnmarshalJSON(data []byte) error {
	var p consumerConfigJSON
	extra, err := unmarshalKeepUnknown(data, &p)
	if err != nil {
		return err
	}
	p.extra = extra
	*c = ConsumerConfig(p)
	return nil
}

// ConsumerInfo is a consumer's configuration and state.
type ConsumerInfo struct {
	Stream  string         `json:"stream_name"`
	Name    string         `json:"name"`
	Created time.Time      `json:"created"`
	Config  ConsumerConfig `json:"config"`
	// Delivered is the last delivered message; AckFloor the highest
	// message at and below which everything is acknowledged.
	Delivered SequenceInfo `json:"delivered"`
	AckFloor  SequenceInfo `json:"ack_floor"`
	// NumAckPending counts delivered, unacknowledged messages.
	NumAckPending int `json:"num_ack_pending"`
	// NumRedelivered counts messages delivered more than once.
	NumRedelivered int `json:"num_redelivered"`
	// NumWaiting counts waiting pull requests.
	NumWaiting int `json:"num_waiting"`
	// NumPending counts messages not yet delivered.
	NumPending uint64       `json:"num_pending"`
	Cluster    *ClusterInfo `json:"cluster,omitempty"`
	// PushBound: a push consumer has an active subscriber.
	PushBound      bool          `json:"push_bound,omitempty"`
	Paused         bool          `json:"paused,omitempty"`
	PauseRemaining time.Duration `json:"pause_remaining,omitempty"`
	// TimeStamp is when the server gathered the information.
	TimeStamp      time.Time            `json:"ts"`
	PriorityGroups []PriorityGroupState `json:"priority_groups,omitempty"`
}

// SequenceInfo is a consumer sequence with its stream sequence and the
// time of the last activity.
type SequenceInfo struct {
	Consumer   uint64    `json:"consumer_seq"`
	Stream     uint64    `json:"stream_seq"`
	LastActive time.Time `json:"last_active,omitzero"`
}

// PriorityGroupState is the state of one priority group: the pinned
// client's id (pinned_client policy) and since when it is pinned.
type PriorityGroupState struct {
	Group          string    `json:"group"`
	PinnedClientID string    `json:"pinned_client_id,omitempty"`
	PinnedTS       time.Time `json:"pinned_ts,omitzero"`
}

// ConsumerPauseState is the reply to PauseConsumer and ResumeConsumer.
type ConsumerPauseState struct {
	Paused         bool          `json:"paused"`
	PauseUntil     time.Time     `json:"pause_until"`
	PauseRemaining time.Duration `json:"pause_remaining,omitempty"`
}
