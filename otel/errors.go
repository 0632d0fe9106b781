package natsotel

import (
	"context"
	"errors"
	"fmt"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/pubwin"
)

// knownErrors name natsio's errors for error.type, the more specific
// first (conn.ErrTimeout also matches context.DeadlineExceeded).
var knownErrors = []struct {
	err  error
	name string
}{
	{conn.ErrTimeout, "conn.ErrTimeout"},
	{conn.ErrNoResponders, "conn.ErrNoResponders"},
	{jsapi.ErrNoStreamResponse, "jsapi.ErrNoStreamResponse"},
	{jsapi.ErrAlreadyAcked, "jsapi.ErrAlreadyAcked"},
	{pubwin.ErrAckTimeout, "pubwin.ErrAckTimeout"},
	{pubwin.ErrAckLost, "pubwin.ErrAckLost"},
	{pubwin.ErrTooManyStalled, "pubwin.ErrTooManyStalled"},
	{pubwin.ErrClosed, "pubwin.ErrClosed"},
	{conn.ErrDisconnected, "conn.ErrDisconnected"},
	{conn.ErrClosed, "conn.ErrClosed"},
	{conn.ErrDraining, "conn.ErrDraining"},
	{conn.ErrReconnectBuffer, "conn.ErrReconnectBuffer"},
	{conn.ErrMaxPayload, "conn.ErrMaxPayload"},
	{conn.ErrSubjectTooLong, "conn.ErrSubjectTooLong"},
	{conn.ErrBadSubject, "conn.ErrBadSubject"},
	{conn.ErrBadHeader, "conn.ErrBadHeader"},
	{conn.ErrHeadersUnsupported, "conn.ErrHeadersUnsupported"},
	{conn.ErrInvalidOption, "conn.ErrInvalidOption"},
	{context.Canceled, "context.Canceled"},
	{context.DeadlineExceeded, "context.DeadlineExceeded"},
}

// ErrorType is the error.type of err: the name of the natsio error it
// matches ("conn.ErrNoResponders", "pubwin.ErrAckTimeout"...),
// "jsapi.APIError:<err_code>" for a JetStream API error, else err's Go
// type ("*net.OpError").
func ErrorType(err error) string {
	if ae, ok := errors.AsType[*jsapi.APIError](err); ok {
		return fmt.Sprintf("jsapi.APIError:%d", ae.ErrorCode)
	}
	for _, k := range knownErrors {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	return fmt.Sprintf("%T", err)
}
