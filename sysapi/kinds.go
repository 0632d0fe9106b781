package sysapi

import (
	"encoding/json"
	"time"
)

// Kind names a monitoring request: the last token of its subject.
type Kind string

// The kinds every server answers. Those with a typed call (Varz, Connz,
// Routez, Gatewayz, Leafz, Subsz, Jsz, Accountz, Healthz, Statsz, Idz) are
// also reachable raw, with the others, through Request and PingRequest.
const (
	KindVarz      Kind = "VARZ"
	KindConnz     Kind = "CONNZ"
	KindRoutez    Kind = "ROUTEZ"
	KindGatewayz  Kind = "GATEWAYZ"
	KindLeafz     Kind = "LEAFZ"
	KindSubsz     Kind = "SUBSZ"
	KindJsz       Kind = "JSZ"
	KindAccountz  Kind = "ACCOUNTZ"
	KindHealthz   Kind = "HEALTHZ"
	KindStatsz    Kind = "STATSZ"
	KindIdz       Kind = "IDZ"
	KindExpvarz   Kind = "EXPVARZ"
	KindIpqueuesz Kind = "IPQUEUESZ"
	KindRaftz     Kind = "RAFTZ"
	KindProfilez  Kind = "PROFILEZ"
)

// ServerInfo identifies the server that sent a reply (the "server" object
// of every reply).
type ServerInfo struct {
	Name      string            `json:"name"`
	Host      string            `json:"host"`
	ID        string            `json:"id"`
	Cluster   string            `json:"cluster,omitempty"`
	Domain    string            `json:"domain,omitempty"`
	Version   string            `json:"ver"`
	Tags      []string          `json:"tags,omitempty"`
	Metadata  map[string]string `json:"metadata,omitempty"`
	JetStream bool              `json:"jetstream"`
	Flags     uint64            `json:"flags"`
	Seq       uint64            `json:"seq"`
	Time      time.Time         `json:"time"`
}

// Reply is one server's answer: who sent it, its typed data, and Raw, the
// reply exactly as the server sent it (fields the typed struct lacks are
// there). Error is set, and Data zero, when the server refused the request;
// only Ping calls return such replies, a call to one server returns the
// *APIError instead. A Reply and its Raw belong to the caller.
type Reply[T any] struct {
	Server ServerInfo
	Data   T
	Error  *APIError
	Raw    json.RawMessage
	// Elapsed is the time from sending the request to receiving this
	// reply: the round trip to that server, as the client saw it.
	Elapsed time.Duration
}

// Filter selects which servers answer a request to all servers: those
// whose name, cluster or host contain the given text (or equal it, with
// ExactMatch), that have all Tags, or are in the JetStream Domain. The
// zero Filter selects every server. It has no effect on a request to one
// server.
type Filter struct {
	Name       string   `json:"server_name,omitempty"`
	Cluster    string   `json:"cluster,omitempty"`
	Host       string   `json:"host,omitempty"`
	ExactMatch bool     `json:"exact_match,omitempty"`
	Tags       []string `json:"tags,omitempty"`
	Domain     string   `json:"domain,omitempty"`
}

// MsgBytes counts messages and their bytes.
type MsgBytes struct {
	Msgs  int64 `json:"msgs"`
	Bytes int64 `json:"bytes"`
}

// DataStats counts traffic, in total and by connection type.
type DataStats struct {
	MsgBytes
	Gateways *MsgBytes `json:"gateways,omitempty"`
	Routes   *MsgBytes `json:"routes,omitempty"`
	Leafs    *MsgBytes `json:"leafs,omitempty"`
}
