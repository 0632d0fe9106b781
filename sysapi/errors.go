package sysapi

import (
	"errors"
	"fmt"
)

var (
	// ErrNoSystemAccount means that no server answered a monitoring
	// request: the connection is not logged into the system account, may
	// not publish to $SYS.REQ, or the servers did not answer in time.
	ErrNoSystemAccount = errors.New("sysapi: no server answered: not in the system account, no permission for $SYS.REQ, or no reply in time")

	// ErrUnknownServer means that a request to one server found no server
	// with that ID, while the system account answers.
	ErrUnknownServer = errors.New("sysapi: no server with that ID")

	// ErrIncomplete is returned, with the replies gathered, when fewer
	// servers than Expect asked for answered by the timeout.
	ErrIncomplete = errors.New("sysapi: fewer servers answered than expected")

	// ErrReplyLimit is returned, with the replies kept, when the next reply
	// would have passed MaxBytes.
	ErrReplyLimit = errors.New("sysapi: replies exceed the byte limit")

	// ErrBadReply is matched by the error for a reply that is not the
	// server's JSON.
	ErrBadReply = errors.New("sysapi: malformed reply")
)

// APIError is an error a server returned for a monitoring request (a bad
// option, or a failure inside the server). Server names the server.
type APIError struct {
	Code        int    `json:"code"`
	ErrCode     uint16 `json:"err_code,omitempty"`
	Description string `json:"description,omitempty"`
	Server      string `json:"-"`
}

func (e *APIError) Error() string {
	if e.Server != "" {
		return fmt.Sprintf("sysapi: server %s: %s (%d)", e.Server, e.Description, e.Code)
	}
	return fmt.Sprintf("sysapi: %s (%d)", e.Description, e.Code)
}
