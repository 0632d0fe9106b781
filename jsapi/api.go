package jsapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/proto"
)

// maxNameLen is the longest stream or consumer name the server accepts.
const maxNameLen = 255

// ValidateName checks a stream or consumer name as the server does: not
// empty, at most 255 bytes, none of ". *>/\" or control characters.
func ValidateName(name string) error {
	if name == "" || len(name) > maxNameLen || strings.ContainsAny(name, ".*>/\\ \t\r\n\x00") {
		return fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	return nil
}

// errorReply is the error part every API response may hold.
type errorReply struct {
	Error *APIError `json:"error,omitempty"`
}

// request sends req (JSON-encoded unless nil) to the API subject
// prefix+subject and decodes the reply into resp (if not nil). An error
// reply is returned as *APIError.
func (js *JS) request(ctx context.Context, subject string, req, resp any) error {
	if ctx == nil {
		return conn.ErrNilContext
	}
	var body []byte
	if req != nil {
		var err error
		if body, err = json.Marshal(req); err != nil {
			return fmt.Errorf("%w: %v", conn.ErrInvalidOption, err)
		}
	}
	m, err := js.rawRequest(ctx, js.prefix+subject, body)
	if err != nil {
		return err
	}
	return decodeReply(m.Data, resp)
}

// requestHeader is request with headers h.
func (js *JS) requestHeader(ctx context.Context, subject string, h *proto.Header, req, resp any) error {
	var body []byte
	if req != nil {
		var err error
		if body, err = json.Marshal(req); err != nil {
			return fmt.Errorf("%w: %v", conn.ErrInvalidOption, err)
		}
	}
	m, err := js.send(ctx, js.prefix+subject, h, body)
	if errors.Is(err, conn.ErrNoResponders) {
		return &noRespondersError{}
	}
	if err != nil {
		return err
	}
	return decodeReply(m.Data, resp)
}

// errNilCtx is the error of a call given a nil context.
func errNilCtx() error { return conn.ErrNilContext }

// rawRequest is a request with the default timeout and JetStream's reading
// of no-responders.
func (js *JS) rawRequest(ctx context.Context, subject string, body []byte) (*conn.Msg, error) {
	m, err := js.send(ctx, subject, nil, body)
	if errors.Is(err, conn.ErrNoResponders) {
		return nil, &noRespondersError{}
	}
	return m, err
}

// send is nc.RequestMsg bounded by js's Timeout when ctx has no deadline.
func (js *JS) send(ctx context.Context, subject string, h *proto.Header, data []byte) (*conn.Msg, error) {
	if js.timeout != js.connTimeout {
		if _, ok := ctx.Deadline(); !ok {
			tctx, cancel := context.WithTimeout(ctx, js.timeout)
			defer cancel()
			return js.requestMsg(tctx, subject, h, data)
		}
	}
	return js.requestMsg(ctx, subject, h, data)
}

// requestMsg sends a request on js's connection. With an Observer it goes
// past it (JetStream publishes are reported by PublishJS, API requests
// are protocol traffic).
func (js *JS) requestMsg(ctx context.Context, subject string, h *proto.Header, data []byte) (*conn.Msg, error) {
	if js.obs != nil {
		return js.nc.RequestUnobserved(ctx, subject, h, data)
	}
	return js.nc.RequestMsg(ctx, subject, h, data)
}

// noRespondersError: no JetStream answered on the API subject; it matches
// both ErrNotEnabled and conn.ErrNoResponders.
type noRespondersError struct{}

func (*noRespondersError) Error() string {
	return "jsapi: no responders: JetStream not enabled or not reachable"
}
func (*noRespondersError) Is(t error) bool { return t == ErrNotEnabled || t == conn.ErrNoResponders }

// decodeReply decodes an API reply, returning its error if it has one.
func decodeReply(data []byte, resp any) error {
	var er errorReply
	if err := json.Unmarshal(data, &er); err != nil {
		return fmt.Errorf("%w: %v", ErrBadResponse, err)
	}
	if er.Error != nil && (er.Error.Code != 0 || er.Error.ErrorCode != 0) {
		return er.Error
	}
	if resp == nil {
		return nil
	}
	if err := json.Unmarshal(data, resp); err != nil {
		return fmt.Errorf("%w: %v", ErrBadResponse, err)
	}
	return nil
}

// apiPaged is the paging envelope of list responses.
type apiPaged struct {
	Total  int `json:"total"`
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
}

// AccountInfo is the reply of $JS.API.INFO.
type AccountInfo struct {
	Memory    uint64         `json:"memory"`
	Store     uint64         `json:"storage"`
	Streams   int            `json:"streams"`
	Consumers int            `json:"consumers"`
	Domain    string         `json:"domain,omitempty"`
	API       APIStats       `json:"api"`
	Limits    AccountLimits  `json:"limits"`
	Tiers     map[string]any `json:"tiers,omitempty"`
}

// APIStats counts API requests; Level is the server's JetStream API level.
type APIStats struct {
	Level  int    `json:"level"`
	Total  uint64 `json:"total"`
	Errors uint64 `json:"errors"`
}

// AccountLimits are the account's JetStream limits (-1: unlimited).
type AccountLimits struct {
	MaxMemory    int64 `json:"max_memory"`
	MaxStore     int64 `json:"max_storage"`
	MaxStreams   int   `json:"max_streams"`
	MaxConsumers int   `json:"max_consumers"`
}

// AccountInfo returns the account's JetStream usage, limits and API level.
func (js *JS) AccountInfo(ctx context.Context) (*AccountInfo, error) {
	var ai AccountInfo
	if err := js.request(ctx, "INFO", nil, &ai); err != nil {
		return nil, err
	}
	return &ai, nil
}

// APILevel returns the server's JetStream API level: from the connection's
// INFO (api_lvl) when the server sends it, else from $JS.API.INFO.
func (js *JS) APILevel(ctx context.Context) (int, error) {
	if lvl := js.nc.ServerInfo().APILevel; lvl > 0 {
		return lvl, nil
	}
	ai, err := js.AccountInfo(ctx)
	if err != nil {
		return 0, err
	}
	return ai.API.Level, nil
}
