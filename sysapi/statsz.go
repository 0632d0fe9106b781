package sysapi

import "time"

// StatszOptions are the options of a STATSZ (or PING) request: only the
// server filter.
type StatszOptions struct {
	Filter
}

// Statsz is a server's statistics, as in the server's periodic STATSZ
// event: memory, CPU, connections, traffic, routes and JetStream.
type Statsz struct {
	Start            time.Time          `json:"start"`
	Mem              int64              `json:"mem"`
	Cores            int                `json:"cores"`
	CPU              float64            `json:"cpu"`
	Connections      int                `json:"connections"`
	TotalConnections uint64             `json:"total_connections"`
	ActiveAccounts   int                `json:"active_accounts"`
	NumSubs          uint32             `json:"subscriptions"`
	Sent             DataStats          `json:"sent"`
	Received         DataStats          `json:"received"`
	SlowConsumers    int64              `json:"slow_consumers"`
	SlowConsumerStat *SlowConsumerStats `json:"slow_consumer_stats,omitempty"`
	StaleConnections int64              `json:"stale_connections,omitempty"`
	Routes           []*RouteStat       `json:"routes,omitempty"`
	Gateways         []*GatewayStat     `json:"gateways,omitempty"`
	ActiveServers    int                `json:"active_servers,omitempty"`
	JetStream        *JetStreamVarz     `json:"jetstream,omitempty"`
	MemLimit         int64              `json:"gomemlimit,omitempty"`
	MaxProcs         int                `json:"gomaxprocs,omitempty"`
}

// RouteStat is the traffic of one route in Statsz.
type RouteStat struct {
	ID       uint64    `json:"rid"`
	Name     string    `json:"name,omitempty"`
	Sent     DataStats `json:"sent"`
	Received DataStats `json:"received"`
	Pending  int       `json:"pending"`
}

// GatewayStat is the traffic of one gateway in Statsz.
type GatewayStat struct {
	ID         uint64    `json:"gwid"`
	Name       string    `json:"name"`
	Sent       DataStats `json:"sent"`
	Received   DataStats `json:"received"`
	NumInbound int       `json:"inbound_connections"`
}

// Idz is a server's identity, the answer to IDZ.
type Idz struct {
	Name string `json:"name"`
	Host string `json:"host"`
	ID   string `json:"id"`
}
