package sysapi

import "time"

// ConnState selects connections by state in ConnzOptions.
type ConnState int

// Connection states (the server's numbers).
const (
	ConnOpen ConnState = iota
	ConnClosed
	ConnAll
)

// ConnzOptions are the options of a CONNZ request. The zero value lists
// the first 1024 open connections by connection ID.
type ConnzOptions struct {
	Filter
	// Sort orders the connections: "cid", "start", "subs", "pending",
	// "msgs_to", "msgs_from", "bytes_to", "bytes_from", "last", "idle",
	// "uptime", "stop", "reason", "rtt".
	Sort string `json:"sort,omitempty"`
	// Auth adds the user and account of each connection.
	Auth bool `json:"auth,omitempty"`
	// Subscriptions adds each connection's subjects; SubscriptionsDetail
	// adds them with queue groups and counts.
	Subscriptions       bool      `json:"subscriptions,omitempty"`
	SubscriptionsDetail bool      `json:"subscriptions_detail,omitempty"`
	Offset              int       `json:"offset,omitempty"`
	Limit               int       `json:"limit,omitempty"`
	CID                 uint64    `json:"cid,omitempty"`
	MQTTClient          string    `json:"mqtt_client,omitempty"`
	State               ConnState `json:"state,omitempty"`
	User                string    `json:"user,omitempty"`
	Account             string    `json:"acc,omitempty"`
	FilterSubject       string    `json:"filter_subject,omitempty"`
}

// Connz lists a server's connections (/connz).
type Connz struct {
	ID       string      `json:"server_id"`
	Now      time.Time   `json:"now"`
	NumConns int         `json:"num_connections"`
	Total    int         `json:"total"`
	Offset   int         `json:"offset"`
	Limit    int         `json:"limit"`
	Conns    []*ConnInfo `json:"connections"`
}

// ConnInfo is one connection of Connz.
type ConnInfo struct {
	Cid            uint64      `json:"cid"`
	Kind           string      `json:"kind,omitempty"`
	Type           string      `json:"type,omitempty"`
	IP             string      `json:"ip"`
	Port           int         `json:"port"`
	Start          time.Time   `json:"start"`
	LastActivity   time.Time   `json:"last_activity"`
	Stop           *time.Time  `json:"stop,omitempty"`
	Reason         string      `json:"reason,omitempty"`
	RTT            string      `json:"rtt,omitempty"`
	Uptime         string      `json:"uptime"`
	Idle           string      `json:"idle"`
	Pending        int         `json:"pending_bytes"`
	InMsgs         int64       `json:"in_msgs"`
	OutMsgs        int64       `json:"out_msgs"`
	InBytes        int64       `json:"in_bytes"`
	OutBytes       int64       `json:"out_bytes"`
	NumSubs        uint32      `json:"subscriptions"`
	Name           string      `json:"name,omitempty"`
	Lang           string      `json:"lang,omitempty"`
	Version        string      `json:"version,omitempty"`
	TLSVersion     string      `json:"tls_version,omitempty"`
	TLSCipher      string      `json:"tls_cipher_suite,omitempty"`
	AuthorizedUser string      `json:"authorized_user,omitempty"`
	Account        string      `json:"account,omitempty"`
	Subs           []string    `json:"subscriptions_list,omitempty"`
	SubsDetail     []SubDetail `json:"subscriptions_list_detail,omitempty"`
	NameTag        string      `json:"name_tag,omitempty"`
	Tags           []string    `json:"tags,omitempty"`
	MQTTClient     string      `json:"mqtt_client,omitempty"`
}

// SubDetail is one subscription in detail.
type SubDetail struct {
	Account string `json:"account,omitempty"`
	Subject string `json:"subject"`
	Queue   string `json:"qgroup,omitempty"`
	Sid     string `json:"sid"`
	Msgs    int64  `json:"msgs"`
	Max     int64  `json:"max,omitempty"`
	Cid     uint64 `json:"cid"`
}
