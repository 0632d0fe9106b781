package sysapi

import (
	"encoding/json"
	"time"
)

// JszOptions are the options of a JSZ request.
type JszOptions struct {
	Filter
	// Account limits the details to one account.
	Account string `json:"account,omitempty"`
	// Accounts adds per-account details; Streams adds streams to them,
	// Consumer adds consumers to those, Config adds their configurations.
	Accounts       bool `json:"accounts,omitempty"`
	Streams        bool `json:"streams,omitempty"`
	Consumer       bool `json:"consumer,omitempty"`
	DirectConsumer bool `json:"direct_consumer,omitempty"`
	Config         bool `json:"config,omitempty"`
	// LeaderOnly makes only the meta leader answer.
	LeaderOnly       bool `json:"leader_only,omitempty"`
	Offset           int  `json:"offset,omitempty"`
	Limit            int  `json:"limit,omitempty"`
	RaftGroups       bool `json:"raft,omitempty"`
	StreamLeaderOnly bool `json:"stream_leader_only,omitempty"`
}

// Jsz is a server's JetStream state (/jsz).
type Jsz struct {
	JetStreamStats
	ID              string           `json:"server_id"`
	Now             time.Time        `json:"now"`
	Disabled        bool             `json:"disabled,omitempty"`
	Config          JetStreamConfig  `json:"config"`
	Limits          json.RawMessage  `json:"limits,omitempty"`
	Streams         int              `json:"streams"`
	StreamsLeader   int              `json:"streams_leader,omitempty"`
	Consumers       int              `json:"consumers"`
	ConsumersLeader int              `json:"consumers_leader,omitempty"`
	Messages        uint64           `json:"messages"`
	Bytes           uint64           `json:"bytes"`
	Meta            *MetaCluster     `json:"meta_cluster,omitempty"`
	AccountDetails  []*AccountDetail `json:"account_details,omitempty"`
	Total           int              `json:"total"`
}

// AccountDetail is one account of Jsz.
type AccountDetail struct {
	Name string `json:"name"`
	ID   string `json:"id"`
	JetStreamStats
	Streams []StreamDetail `json:"stream_detail,omitempty"`
}

// StreamDetail is one stream of an AccountDetail. Config, Cluster and the
// consumers are kept as sent (the JetStream API's JSON: jsapi's types read
// them).
type StreamDetail struct {
	Name      string          `json:"name"`
	Created   time.Time       `json:"created"`
	Cluster   json.RawMessage `json:"cluster,omitempty"`
	Config    json.RawMessage `json:"config,omitempty"`
	State     StreamState     `json:"state"`
	Consumers json.RawMessage `json:"consumer_detail,omitempty"`
	RaftGroup string          `json:"stream_raft_group,omitempty"`
}

// StreamState is the part of a stream's state that Jsz reports.
type StreamState struct {
	Msgs      uint64    `json:"messages"`
	Bytes     uint64    `json:"bytes"`
	FirstSeq  uint64    `json:"first_seq"`
	FirstTime time.Time `json:"first_ts"`
	LastSeq   uint64    `json:"last_seq"`
	LastTime  time.Time `json:"last_ts"`
	Consumers int       `json:"consumer_count"`
}
