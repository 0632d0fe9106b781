package sysapi

import (
	"encoding/json"
	"time"
)

// AccountzOptions are the options of an ACCOUNTZ request.
type AccountzOptions struct {
	Filter
	// Account asks for the details of one account instead of the list.
	Account string `json:"account,omitempty"`
}

// Accountz lists a server's accounts, or details one (/accountz).
type Accountz struct {
	ID            string       `json:"server_id"`
	Now           time.Time    `json:"now"`
	SystemAccount string       `json:"system_account,omitempty"`
	Accounts      []string     `json:"accounts,omitempty"`
	Account       *AccountInfo `json:"account_detail,omitempty"`
}

// AccountInfo details one account of Accountz. Exports, imports, mappings
// and the decoded JWT are kept as sent.
type AccountInfo struct {
	Name       string          `json:"account_name"`
	LastUpdate time.Time       `json:"update_time,omitempty"`
	IsSystem   bool            `json:"is_system,omitempty"`
	Expired    bool            `json:"expired"`
	Complete   bool            `json:"complete"`
	JetStream  bool            `json:"jetstream_enabled"`
	LeafCnt    int             `json:"leafnode_connections"`
	ClientCnt  int             `json:"client_connections"`
	SubCnt     uint32          `json:"subscriptions"`
	Mappings   json.RawMessage `json:"mappings,omitempty"`
	Exports    json.RawMessage `json:"exports,omitempty"`
	Imports    json.RawMessage `json:"imports,omitempty"`
	JWT        string          `json:"jwt,omitempty"`
	IssuerKey  string          `json:"issuer_key,omitempty"`
	NameTag    string          `json:"name_tag,omitempty"`
	Tags       []string        `json:"tags,omitempty"`
	Claim      json.RawMessage `json:"decoded_jwt,omitempty"`
}
