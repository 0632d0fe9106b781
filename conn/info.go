package conn

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// Values of jetStreamLevel besides an API level.
const (
	// levelUnknown: the server's version cannot be read; nothing is
	// refused on its account.
	levelUnknown = -1
	// levelNoJetStream: the server does not run JetStream itself (a leaf
	// node extending another server's, say): its INFO says nothing about
	// the server that answers JetStream requests.
	levelNoJetStream = -2
)

// jetStreamLevel is the JetStream API level (ADR-44) of the server si
// describes: api_lvl, which servers send from 2.12.0 on; else 1 for a
// 2.11 server (level 1, not reported in INFO) and 0 for an older one;
// levelNoJetStream when the server does not run JetStream; levelUnknown
// when the version cannot be parsed.
func jetStreamLevel(si *ServerInfo) int32 {
	switch {
	case !si.JetStream:
		return levelNoJetStream
	case si.APILevel > 0:
		return int32(si.APILevel)
	}
	major, minor, ok := parseVersion(si.Version)
	switch {
	case !ok:
		return levelUnknown
	case major > 2 || major == 2 && minor >= 11:
		return 1
	}
	return 0
}

// parseVersion reads the major and minor numbers of "X.Y.Z[-…]" (a
// leading "v" allowed).
func parseVersion(v string) (major, minor int, ok bool) {
	v = strings.TrimPrefix(v, "v")
	a, rest, found := strings.Cut(v, ".")
	if !found {
		return 0, 0, false
	}
	b, _, _ := strings.Cut(rest, ".")
	b, _, _ = strings.Cut(b, "-")
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return x, y, true
}
