package extra

import (
	"context"
	"errors"
	"fmt"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/internal/deadline"
	"github.com/natsio/natsio/jsapi"
)

// Client-side errors. Errors the server reports are *jsapi.APIError values
// (usually inside a *FastAPIError or wrapped with context); match them
// with the jsapi sentinels: jsapi.ErrAtomicDisabled,
// jsapi.ErrAtomicUnsupportedHeader, jsapi.ErrAtomicDuplicateMsgID,
// jsapi.ErrAtomicTooManyInflight, jsapi.ErrAtomicIncomplete,
// jsapi.ErrAtomicMissingSeq, jsapi.ErrAtomicInvalidBatchID,
// jsapi.ErrAtomicTooLarge, jsapi.ErrAtomicInvalidCommit for atomic batches
// and jsapi.ErrBatchDisabled, jsapi.ErrBatchInvalidPattern,
// jsapi.ErrBatchInvalidID, jsapi.ErrBatchUnknownID,
// jsapi.ErrBatchTooManyInflight for fast batches.
var (
	// ErrBatchPublish is the family of the atomic batch publisher: every
	// error of NewBatchPublisher, of a BatchPublisher's methods, of
	// PublishBatch and of PublishBatchSeq matches it, besides its own
	// sentinel (ErrBatchClosed, conn.ErrInvalidOption, the jsapi sentinel
	// of a server error, ctx's error…), which errors.Is and errors.As
	// still find.
	ErrBatchPublish = errors.New("extra: atomic batch publish failed")
	// ErrFastPublish is the family of the fast publisher: every error of
	// NewFastPublisher, of a FastPublisher's methods and every error given
	// to OnError matches it, besides its own sentinel (ErrGap, ErrFlow,
	// ErrAckTimeout, a *FastAPIError…).
	ErrFastPublish = errors.New("extra: fast batch publish failed")

	// ErrBatchClosed: the publisher was committed, closed, discarded,
	// aborted, or failed earlier.
	ErrBatchClosed = errors.New("extra: batch publisher closed")
	// ErrBatchTooLarge: an atomic batch would exceed its MaxBatchSize
	// (default MaxAtomicBatch) messages, found before sending, or the
	// server refused it as too large. Errors carrying it also match
	// jsapi.ErrAtomicTooLarge.
	ErrBatchTooLarge = errors.New("extra: atomic batch too large")
	// ErrEmptyBatch: PublishBatch was given no message, or Close was
	// called on a fast publisher that stored none.
	ErrEmptyBatch = errors.New("extra: empty batch")
	// ErrInvalidBatchAck: the terminal acknowledgement of a batch was
	// malformed or named another batch or message count.
	ErrInvalidBatchAck = errors.New("extra: invalid batch acknowledgement")
	// ErrAckTimeout: an acknowledgement the publisher waits for did not
	// come in time. It also matches conn.ErrTimeout and
	// context.DeadlineExceeded: the publisher's default deadline passed.
	ErrAckTimeout = errors.New("extra: timed out waiting for acknowledgement")
	// ErrGap is matched by a *GapError: the server saw a hole in the
	// sequence of a fast batch.
	ErrGap = errors.New("extra: fast batch gap")
	// ErrFlow is matched by a *FastAPIError the server reported for one
	// message of a fast batch (a failed header check, for example).
	ErrFlow = errors.New("extra: fast batch message failed")
	// ErrSubscribeFailed: a fast publisher could not subscribe to its
	// inbox; nothing was sent. The connection's error is wrapped too.
	ErrSubscribeFailed = errors.New("extra: fast batch subscription failed")
	// ErrPublishFailed: the connection refused a fast-batch message before
	// queueing it (closed, oversized, reconnect buffer full); the
	// connection's error is wrapped too.
	ErrPublishFailed = errors.New("extra: fast batch publish failed")

	// ErrNoSubjects: GetLastMsgsFor was given no subject.
	ErrNoSubjects = errors.New("extra: no subjects")
	// ErrNoMessages: no stored message matched a batch get. It is
	// jsapi.ErrNoMessages (pull.ErrNoMessages too).
	ErrNoMessages = jsapi.ErrNoMessages
	// ErrTooManyResults: more than MaxLastMsgsSubjects subjects were asked
	// for, or matched, in GetLastMsgsFor.
	ErrTooManyResults = errors.New("extra: too many results")
	// ErrBatchUnsupported: the server predates batch direct get (2.11).
	// When natsio knows it before sending, the error also holds a
	// *jsapi.FeatureError (errors.As).
	ErrBatchUnsupported = errors.New("extra: server does not support batch direct get")
	// ErrIteratorUsed: a single-use iterator was ranged over again.
	ErrIteratorUsed = errors.New("extra: iterator already used")
)

// GapError reports a hole in the sequence of a fast batch: the server
// expected batch sequence Expected and received Received. A forward gap
// (Received > Expected) means messages were lost on the way; a backward one
// means a message arrived twice or out of order, which always ends the
// batch.
type GapError struct {
	Expected uint64
	Received uint64
	// PubAck is the terminal acknowledgement the server sent after the
	// gap ended the batch (gap mode fail), when it arrived before the ack
	// deadline: its BatchSize is the number of messages the server kept.
	PubAck *jsapi.PubAck
}

func (e *GapError) Error() string {
	s := fmt.Sprintf("extra: fast batch gap: expected sequence %d, server received %d", e.Expected, e.Received)
	if e.PubAck != nil {
		s += fmt.Sprintf(" (batch ended with %d messages)", e.PubAck.BatchSize)
	}
	return s
}

// Is matches ErrGap.
func (e *GapError) Is(target error) bool { return target == ErrGap }

// FastAPIError is a JetStream error reported during a fast batch, with the
// batch sequence of the message it concerns. Flow is set when the server
// reported it in a flow message (the message failed a check, and the batch
// went on in gap mode ok); otherwise it was an error reply that ended the
// batch. It matches ErrFlow when Flow is set, and, through Unwrap, the
// jsapi sentinel of its err_code.
type FastAPIError struct {
	Seq      uint64
	Flow     bool
	APIError *jsapi.APIError
	// PubAck is the terminal acknowledgement that followed a flow error in
	// gap mode fail, when it arrived before the ack deadline.
	PubAck *jsapi.PubAck
}

func (e *FastAPIError) Error() string {
	what := "error reply"
	if e.Flow {
		what = "message failed"
	}
	return fmt.Sprintf("extra: fast batch %s at sequence %d: %v", what, e.Seq, e.APIError)
}

// Is matches ErrFlow for a flow error.
func (e *FastAPIError) Is(target error) bool { return e.Flow && target == ErrFlow }

// Unwrap returns the server's *jsapi.APIError.
func (e *FastAPIError) Unwrap() error { return e.APIError }

// statusError is the *jsapi.StatusError of a status reply to a batch
// direct get, its Kind the sentinel of the code: 404 ErrNoMessages, 413
// ErrTooManyResults, 400 and 408 jsapi.ErrBadRequest, 412
// jsapi.ErrRequiredAPILevel, 503 conn.ErrNoResponders (no such stream, or
// the stream does not allow direct get); nil for another code.
func statusError(code int, desc string) *jsapi.StatusError {
	var kind error
	switch code {
	case 404:
		kind = ErrNoMessages
	case 413:
		kind = ErrTooManyResults
	case 400, 408:
		kind = jsapi.ErrBadRequest
	case 412:
		kind = jsapi.ErrRequiredAPILevel
	case 503:
		kind = conn.ErrNoResponders
	}
	return &jsapi.StatusError{Code: code, Description: desc, Kind: kind}
}

// ackTimeoutError is ErrAckTimeout with what was awaited: the publisher's
// default deadline passed, so it also matches conn.ErrTimeout and
// context.DeadlineExceeded.
type ackTimeoutError struct{ what string }

func (e *ackTimeoutError) Error() string { return ErrAckTimeout.Error() + ": " + e.what }
func (e *ackTimeoutError) Is(t error) bool {
	return t == ErrAckTimeout || t == conn.ErrTimeout || t == context.DeadlineExceeded
}

// lostError: the connection was lost while an atomic batch was open; it
// matches conn.ErrDisconnected and unwraps to the connection's reason.
type lostError struct {
	batch  string
	reason error
}

func (e *lostError) Error() string {
	return fmt.Sprintf("extra: atomic batch %s abandoned: connection lost: %v", e.batch, e.reason)
}
func (e *lostError) Is(t error) bool { return t == conn.ErrDisconnected }
func (e *lostError) Unwrap() error   { return e.reason }

// familyError puts an error of a publisher in its family (ErrBatchPublish,
// ErrFastPublish); its text is the error's.
type familyError struct{ family, err error }

func (e *familyError) Error() string   { return e.err.Error() }
func (e *familyError) Is(t error) bool { return t == e.family }
func (e *familyError) Unwrap() error   { return e.err }

// inFamily returns err in family (nil for nil, err itself when it already
// is).
func inFamily(family, err error) error {
	if err == nil || errors.Is(err, family) {
		return err
	}
	// A passed deadline also matches conn.ErrTimeout.
	return &familyError{family: family, err: deadline.Err(err)}
}

// matchErr is a local validation error that matches several sentinels.
type matchErr struct {
	msg string
	is  []error
}

func (e *matchErr) Error() string { return e.msg }
func (e *matchErr) Is(t error) bool {
	for _, s := range e.is {
		if s == t {
			return true
		}
	}
	return false
}

// Local validation failures that mirror a server error code.
var (
	errInvalidBatchID    = &matchErr{"extra: invalid batch ID", []error{conn.ErrInvalidOption, jsapi.ErrAtomicInvalidBatchID}}
	errTooLarge          = &matchErr{"extra: atomic batch too large", []error{ErrBatchTooLarge, jsapi.ErrAtomicTooLarge}}
	errDuplicateMsgID    = &matchErr{"extra: duplicate message ID in atomic batch", []error{conn.ErrInvalidOption, jsapi.ErrAtomicDuplicateMsgID}}
	errUnsupportedHeader = &matchErr{"extra: header not supported in atomic batch", []error{conn.ErrInvalidOption, jsapi.ErrAtomicUnsupportedHeader}}
	errTooManySubjects   = &matchErr{"extra: too many subjects", []error{conn.ErrInvalidOption, ErrTooManyResults}}
)
