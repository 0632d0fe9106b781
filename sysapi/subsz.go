package sysapi

import "time"

// SubszOptions are the options of a SUBSZ request.
type SubszOptions struct {
	Filter
	Offset int `json:"offset,omitempty"`
	Limit  int `json:"limit,omitempty"`
	// Subscriptions adds the subscriptions themselves.
	Subscriptions bool   `json:"subscriptions,omitempty"`
	Account       string `json:"account,omitempty"`
	// Test lists only the subscriptions a message on this subject reaches.
	Test string `json:"test,omitempty"`
}

// Subsz is a server's subscription routing table (/subsz).
type Subsz struct {
	ID           string      `json:"server_id"`
	Now          time.Time   `json:"now"`
	NumSubs      uint32      `json:"num_subscriptions"`
	NumCache     uint32      `json:"num_cache"`
	NumInserts   uint64      `json:"num_inserts"`
	NumRemoves   uint64      `json:"num_removes"`
	NumMatches   uint64      `json:"num_matches"`
	CacheHitRate float64     `json:"cache_hit_rate"`
	MaxFanout    uint32      `json:"max_fanout"`
	AvgFanout    float64     `json:"avg_fanout"`
	Total        int         `json:"total"`
	Offset       int         `json:"offset"`
	Limit        int         `json:"limit"`
	Subs         []SubDetail `json:"subscriptions_list,omitempty"`
}
