package conn

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ServerInfo is the INFO a server sends on connect and whenever its cluster
// or state changes. Unknown fields are ignored.
type ServerInfo struct {
	ServerID     string   `json:"server_id"`
	ServerName   string   `json:"server_name"`
	Version      string   `json:"version"`
	Proto        int      `json:"proto"`
	GoVersion    string   `json:"go"`
	Host         string   `json:"host"`
	Port         int      `json:"port"`
	Headers      bool     `json:"headers"`
	AuthRequired bool     `json:"auth_required,omitempty"`
	TLSRequired  bool     `json:"tls_required,omitempty"`
	TLSVerify    bool     `json:"tls_verify,omitempty"`
	TLSAvailable bool     `json:"tls_available,omitempty"`
	MaxPayload   int64    `json:"max_payload"`
	JetStream    bool     `json:"jetstream,omitempty"`
	ClientID     uint64   `json:"client_id,omitempty"`
	ClientIP     string   `json:"client_ip,omitempty"`
	Nonce        string   `json:"nonce,omitempty"`
	Cluster      string   `json:"cluster,omitempty"`
	Domain       string   `json:"domain,omitempty"`
	ConnectURLs  []string `json:"connect_urls,omitempty"`
	WSConnectURL []string `json:"ws_connect_urls,omitempty"`
	LameDuck     bool     `json:"ldm,omitempty"`
	ConnectInfo  bool     `json:"connect_info,omitempty"`
	APILevel     int      `json:"api_lvl,omitempty"`
	XKey         string   `json:"xkey,omitempty"`
}

// maxPayloadCeiling is the largest max_payload accepted from a server.
const maxPayloadCeiling = 64 << 20

// parseInfo decodes and checks an INFO body.
func parseInfo(b []byte) (*ServerInfo, error) {
	var si ServerInfo
	if err := json.Unmarshal(b, &si); err != nil {
		return nil, &ProtocolError{Err: fmt.Errorf("bad INFO: %w", err)}
	}
	if si.MaxPayload <= 0 || si.MaxPayload > maxPayloadCeiling {
		return nil, &ProtocolError{Err: fmt.Errorf("bad INFO: max_payload %d out of range", si.MaxPayload)}
	}
	return &si, nil
}

// ProtocolError reports bytes from the server that break the protocol. The
// connection is dropped and, unless closed, reconnects.
type ProtocolError struct {
	Err error
}

func (e *ProtocolError) Error() string { return "nats: protocol error: " + e.Err.Error() }
func (e *ProtocolError) Unwrap() error { return e.Err }

// IsProtocolError reports whether err is a *ProtocolError.
func IsProtocolError(err error) bool {
	var pe *ProtocolError
	return errors.As(err, &pe)
}
