package sysapi

import (
	"encoding/json"
	"time"
)

// VarzOptions are the options of a VARZ request: only the server filter.
type VarzOptions struct {
	Filter
}

// Varz is a server's general state and configuration (/varz).
type Varz struct {
	ID               string             `json:"server_id"`
	Name             string             `json:"server_name"`
	Version          string             `json:"version"`
	Proto            int                `json:"proto"`
	GitCommit        string             `json:"git_commit,omitempty"`
	GoVersion        string             `json:"go"`
	Host             string             `json:"host"`
	Port             int                `json:"port"`
	AuthRequired     bool               `json:"auth_required,omitempty"`
	TLSRequired      bool               `json:"tls_required,omitempty"`
	TLSVerify        bool               `json:"tls_verify,omitempty"`
	IP               string             `json:"ip,omitempty"`
	ConnectURLs      []string           `json:"connect_urls,omitempty"`
	WSConnectURLs    []string           `json:"ws_connect_urls,omitempty"`
	MaxConn          int                `json:"max_connections"`
	MaxSubs          int                `json:"max_subscriptions,omitempty"`
	PingInterval     time.Duration      `json:"ping_interval"`
	MaxPingsOut      int                `json:"ping_max"`
	HTTPHost         string             `json:"http_host"`
	HTTPPort         int                `json:"http_port"`
	HTTPSPort        int                `json:"https_port"`
	AuthTimeout      float64            `json:"auth_timeout"`
	MaxControlLine   int32              `json:"max_control_line"`
	MaxPayload       int                `json:"max_payload"`
	MaxPending       int64              `json:"max_pending"`
	Cluster          ClusterVarz        `json:"cluster"`
	Gateway          GatewayVarz        `json:"gateway"`
	LeafNode         LeafNodeVarz       `json:"leaf"`
	JetStream        JetStreamVarz      `json:"jetstream"`
	TLSTimeout       float64            `json:"tls_timeout"`
	WriteDeadline    time.Duration      `json:"write_deadline"`
	Start            time.Time          `json:"start"`
	Now              time.Time          `json:"now"`
	Uptime           string             `json:"uptime"`
	Mem              int64              `json:"mem"`
	Cores            int                `json:"cores"`
	MaxProcs         int                `json:"gomaxprocs"`
	CPU              float64            `json:"cpu"`
	Connections      int                `json:"connections"`
	TotalConnections uint64             `json:"total_connections"`
	Routes           int                `json:"routes"`
	Remotes          int                `json:"remotes"`
	Leafs            int                `json:"leafnodes"`
	InMsgs           int64              `json:"in_msgs"`
	InBytes          int64              `json:"in_bytes"`
	OutMsgs          int64              `json:"out_msgs"`
	OutBytes         int64              `json:"out_bytes"`
	SlowConsumers    int64              `json:"slow_consumers"`
	StaleConnections int64              `json:"stale_connections"`
	Subscriptions    uint32             `json:"subscriptions"`
	HTTPReqStats     map[string]uint64  `json:"http_req_stats"`
	ConfigLoadTime   time.Time          `json:"config_load_time"`
	ConfigDigest     string             `json:"config_digest"`
	Tags             []string           `json:"tags,omitempty"`
	Metadata         map[string]string  `json:"metadata,omitempty"`
	SystemAccount    string             `json:"system_account,omitempty"`
	SlowConsumerStat *SlowConsumerStats `json:"slow_consumer_stats"`
}

// ClusterVarz is the cluster part of Varz.
type ClusterVarz struct {
	Name     string   `json:"name,omitempty"`
	Host     string   `json:"addr,omitempty"`
	Port     int      `json:"cluster_port,omitempty"`
	URLs     []string `json:"urls,omitempty"`
	PoolSize int      `json:"pool_size,omitempty"`
}

// GatewayVarz is the gateway (super-cluster) part of Varz.
type GatewayVarz struct {
	Name string `json:"name,omitempty"`
	Host string `json:"host,omitempty"`
	Port int    `json:"port,omitempty"`
}

// LeafNodeVarz is the leaf node listener part of Varz.
type LeafNodeVarz struct {
	Host string `json:"host,omitempty"`
	Port int    `json:"port,omitempty"`
}

// JetStreamVarz is the JetStream part of Varz; Limits is kept as sent.
type JetStreamVarz struct {
	Config *JetStreamConfig `json:"config,omitempty"`
	Stats  *JetStreamStats  `json:"stats,omitempty"`
	Meta   *MetaCluster     `json:"meta,omitempty"`
	Limits json.RawMessage  `json:"limits,omitempty"`
}

// JetStreamConfig is a server's JetStream configuration.
type JetStreamConfig struct {
	MaxMemory    int64         `json:"max_memory"`
	MaxStore     int64         `json:"max_storage"`
	StoreDir     string        `json:"store_dir,omitempty"`
	SyncInterval time.Duration `json:"sync_interval,omitempty"`
	SyncAlways   bool          `json:"sync_always,omitempty"`
	Domain       string        `json:"domain,omitempty"`
	CompressOK   bool          `json:"compress_ok,omitempty"`
	UniqueTag    string        `json:"unique_tag,omitempty"`
	Strict       bool          `json:"strict,omitempty"`
}

// JetStreamStats is JetStream usage: storage, accounts, replicated assets
// and API calls.
type JetStreamStats struct {
	Memory         uint64            `json:"memory"`
	Store          uint64            `json:"storage"`
	ReservedMemory uint64            `json:"reserved_memory"`
	ReservedStore  uint64            `json:"reserved_storage"`
	Accounts       int               `json:"accounts"`
	HAAssets       int               `json:"ha_assets"`
	API            JetStreamAPIStats `json:"api"`
}

// JetStreamAPIStats counts JetStream API calls.
type JetStreamAPIStats struct {
	Level    int    `json:"level"`
	Total    uint64 `json:"total"`
	Errors   uint64 `json:"errors"`
	Inflight uint64 `json:"inflight,omitempty"`
}

// MetaCluster is the JetStream meta group as a server sees it.
type MetaCluster struct {
	Name     string  `json:"name,omitempty"`
	Leader   string  `json:"leader,omitempty"`
	Peer     string  `json:"peer,omitempty"`
	Replicas []*Peer `json:"replicas,omitempty"`
	Size     int     `json:"cluster_size"`
	Pending  int     `json:"pending"`
}

// Peer is a member of a Raft group as its leader sees it.
type Peer struct {
	Name    string        `json:"name"`
	Current bool          `json:"current"`
	Offline bool          `json:"offline,omitempty"`
	Active  time.Duration `json:"active"`
	Lag     uint64        `json:"lag,omitempty"`
	Peer    string        `json:"peer"`
}

// SlowConsumerStats counts slow consumers by connection type.
type SlowConsumerStats struct {
	Clients  uint64 `json:"clients"`
	Routes   uint64 `json:"routes"`
	Gateways uint64 `json:"gateways"`
	Leafs    uint64 `json:"leafs"`
}
