package sysapi

import (
	"encoding/json"
	"time"
)

// RoutezOptions are the options of a ROUTEZ request.
type RoutezOptions struct {
	Filter
	Subscriptions       bool `json:"subscriptions,omitempty"`
	SubscriptionsDetail bool `json:"subscriptions_detail,omitempty"`
}

// Routez lists a server's routes to the other servers of its cluster
// (/routez). Import and Export (permissions) are kept as sent.
type Routez struct {
	ID        string          `json:"server_id"`
	Name      string          `json:"server_name"`
	Now       time.Time       `json:"now"`
	Import    json.RawMessage `json:"import,omitempty"`
	Export    json.RawMessage `json:"export,omitempty"`
	NumRoutes int             `json:"num_routes"`
	Routes    []*RouteInfo    `json:"routes"`
}

// RouteInfo is one route of Routez.
type RouteInfo struct {
	Rid          uint64      `json:"rid"`
	RemoteID     string      `json:"remote_id"`
	RemoteName   string      `json:"remote_name"`
	DidSolicit   bool        `json:"did_solicit"`
	IsConfigured bool        `json:"is_configured"`
	IP           string      `json:"ip"`
	Port         int         `json:"port"`
	Start        time.Time   `json:"start"`
	LastActivity time.Time   `json:"last_activity"`
	RTT          string      `json:"rtt,omitempty"`
	Uptime       string      `json:"uptime"`
	Idle         string      `json:"idle"`
	Pending      int         `json:"pending_size"`
	InMsgs       int64       `json:"in_msgs"`
	OutMsgs      int64       `json:"out_msgs"`
	InBytes      int64       `json:"in_bytes"`
	OutBytes     int64       `json:"out_bytes"`
	NumSubs      uint32      `json:"subscriptions"`
	Subs         []string    `json:"subscriptions_list,omitempty"`
	SubsDetail   []SubDetail `json:"subscriptions_list_detail,omitempty"`
	Account      string      `json:"account,omitempty"`
	Compression  string      `json:"compression,omitempty"`
}

// GatewayzOptions are the options of a GATEWAYZ request.
type GatewayzOptions struct {
	Filter
	// Name limits the answer to the gateway to this cluster.
	Name                       string `json:"name,omitempty"`
	Accounts                   bool   `json:"accounts,omitempty"`
	AccountName                string `json:"account_name,omitempty"`
	AccountSubscriptions       bool   `json:"subscriptions,omitempty"`
	AccountSubscriptionsDetail bool   `json:"subscriptions_detail,omitempty"`
}

// Gatewayz lists a server's gateways to other clusters (/gatewayz).
type Gatewayz struct {
	ID               string                      `json:"server_id"`
	Now              time.Time                   `json:"now"`
	Name             string                      `json:"name,omitempty"`
	Host             string                      `json:"host,omitempty"`
	Port             int                         `json:"port,omitempty"`
	OutboundGateways map[string]*RemoteGateway   `json:"outbound_gateways"`
	InboundGateways  map[string][]*RemoteGateway `json:"inbound_gateways"`
}

// RemoteGateway is one gateway connection of Gatewayz; Accounts is kept as
// sent.
type RemoteGateway struct {
	IsConfigured bool            `json:"configured"`
	Connection   *ConnInfo       `json:"connection,omitempty"`
	Accounts     json.RawMessage `json:"accounts,omitempty"`
}

// LeafzOptions are the options of a LEAFZ request.
type LeafzOptions struct {
	Filter
	Subscriptions bool   `json:"subscriptions,omitempty"`
	Account       string `json:"account,omitempty"`
}

// Leafz lists a server's leaf node connections (/leafz).
type Leafz struct {
	ID       string      `json:"server_id"`
	Now      time.Time   `json:"now"`
	NumLeafs int         `json:"leafnodes"`
	Leafs    []*LeafInfo `json:"leafs"`
}

// LeafInfo is one leaf node connection of Leafz.
type LeafInfo struct {
	ID          uint64   `json:"id"`
	Name        string   `json:"name"`
	IsSpoke     bool     `json:"is_spoke"`
	IsIsolated  bool     `json:"is_isolated,omitempty"`
	Account     string   `json:"account"`
	IP          string   `json:"ip"`
	Port        int      `json:"port"`
	RTT         string   `json:"rtt,omitempty"`
	InMsgs      int64    `json:"in_msgs"`
	OutMsgs     int64    `json:"out_msgs"`
	InBytes     int64    `json:"in_bytes"`
	OutBytes    int64    `json:"out_bytes"`
	NumSubs     uint32   `json:"subscriptions"`
	Subs        []string `json:"subscriptions_list,omitempty"`
	Compression string   `json:"compression,omitempty"`
	Websocket   bool     `json:"websocket,omitempty"`
}
