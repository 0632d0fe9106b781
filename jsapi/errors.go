package jsapi

import (
	"errors"
	"fmt"
)

// APIError is an error reply of the JetStream API.
type APIError struct {
	Code        int    `json:"code"`     // HTTP-like status
	ErrorCode   int    `json:"err_code"` // JetStream error code
	Description string `json:"description,omitempty"`
}

func (e *APIError) Error() string {
	return fmt.Sprintf("jsapi: %s (code %d, err_code %d)", e.Description, e.Code, e.ErrorCode)
}

// Is matches the sentinel of e's err_code, and any *APIError with the same
// err_code; 10185 (minimum API level required) matches ErrServerTooOld too.
func (e *APIError) Is(target error) bool {
	if t, ok := target.(*APIError); ok {
		return t.ErrorCode != 0 && t.ErrorCode == e.ErrorCode
	}
	if s, ok := codeSentinel[e.ErrorCode]; ok && s == target {
		return true
	}
	if e.ErrorCode == 10185 && target == ErrServerTooOld {
		return true
	}
	return false
}

// Temporary reports whether retrying the same request may succeed.
func (e *APIError) Temporary() bool {
	switch e.ErrorCode {
	case 10008, 10023, 10163, 10167, 10158:
		return true
	}
	return e.Code == 503 || e.Code == 429
}

// Sentinel errors, matched against an *APIError with errors.Is.
var (
	ErrBadRequest              = errors.New("jsapi: bad request")
	ErrClusterNotAvailable     = errors.New("jsapi: JetStream system temporarily unavailable")
	ErrConsumerNameExists      = errors.New("jsapi: consumer name already in use")
	ErrConsumerNotFound        = errors.New("jsapi: consumer not found")
	ErrInsufficientResources   = errors.New("jsapi: insufficient resources")
	ErrInvalidJSON             = errors.New("jsapi: invalid JSON")
	ErrMsgNotFound             = errors.New("jsapi: no message found")
	ErrNotEnabledForAccount    = errors.New("jsapi: JetStream not enabled for account")
	ErrMessageTooLarge         = errors.New("jsapi: message size exceeds maximum allowed")
	ErrStreamMismatch          = errors.New("jsapi: stream name in subject does not match request")
	ErrStreamNameInUse         = errors.New("jsapi: stream name already in use with a different configuration")
	ErrStreamNotFound          = errors.New("jsapi: stream not found")
	ErrWrongStream             = errors.New("jsapi: expected stream does not match")
	ErrStreamSequenceNotMatch  = errors.New("jsapi: expected stream sequence does not match")
	ErrSubjectOverlap          = errors.New("jsapi: subjects overlap with an existing stream")
	ErrWrongLastMsgID          = errors.New("jsapi: wrong last msg ID")
	ErrWrongLastSequence       = errors.New("jsapi: wrong last sequence")
	ErrNotEnabled              = errors.New("jsapi: JetStream not enabled")
	ErrHeaderTooLarge          = errors.New("jsapi: header size exceeds maximum allowed")
	ErrConsumerExistingActive  = errors.New("jsapi: consumer already exists and is still active")
	ErrStreamSealed            = errors.New("jsapi: invalid operation on sealed stream")
	ErrConsumerExists          = errors.New("jsapi: consumer already exists")
	ErrConsumerDoesNotExist    = errors.New("jsapi: consumer does not exist")
	ErrDuplicateInProcess      = errors.New("jsapi: duplicate message id is in process")
	ErrPriorityGroupConfig     = errors.New("jsapi: invalid priority group configuration")
	ErrLastSeqPerSubjectBusy   = errors.New("jsapi: expected last sequence per subject temporarily unavailable")
	ErrInvalidTTL              = errors.New("jsapi: invalid per-message TTL") // also a TTL refused locally (see TTL)
	ErrTTLDisabled             = errors.New("jsapi: per-message TTL is disabled")
	ErrTooManyRequests         = errors.New("jsapi: too many requests")
	ErrCounterConfig           = errors.New("jsapi: counter error")
	ErrAtomicDisabled          = errors.New("jsapi: atomic publish is disabled")
	ErrAtomicMissingSeq        = errors.New("jsapi: atomic publish sequence is missing")
	ErrAtomicIncomplete        = errors.New("jsapi: atomic publish batch is incomplete")
	ErrAtomicUnsupportedHeader = errors.New("jsapi: atomic publish unsupported header")
	ErrPushWithPriorityGroup   = errors.New("jsapi: priority groups can not be used with push consumers")
	ErrAtomicInvalidBatchID    = errors.New("jsapi: atomic publish batch ID is invalid")
	ErrMinLastSeq              = errors.New("jsapi: min last sequence")
	ErrRequiredAPILevel        = errors.New("jsapi: JetStream minimum API level required")
	ErrSchedules               = errors.New("jsapi: invalid message schedule")
	ErrLastSeqSubjectNoSeq     = errors.New("jsapi: missing sequence for expected last sequence per subject")
	ErrAtomicTooLarge          = errors.New("jsapi: atomic publish batch is too large")
	ErrAtomicInvalidCommit     = errors.New("jsapi: atomic publish batch commit is invalid")
	ErrAtomicDuplicateMsgID    = errors.New("jsapi: atomic publish batch contains duplicate message id")
	ErrInvalidReset            = errors.New("jsapi: invalid consumer reset")
	ErrBatchDisabled           = errors.New("jsapi: batch publish is disabled")
	ErrBatchInvalidPattern     = errors.New("jsapi: batch publish pattern is invalid")
	ErrBatchInvalidID          = errors.New("jsapi: batch publish ID is invalid")
	ErrBatchUnknownID          = errors.New("jsapi: batch publish ID unknown")
	ErrAtomicTooManyInflight   = errors.New("jsapi: atomic publish too many inflight")
	ErrBatchTooManyInflight    = errors.New("jsapi: batch publish too many inflight")
	ErrStreamIdentityMismatch  = errors.New("jsapi: consumer's stream identity does not match")
	ErrSourceHeaderNotAllowed  = errors.New("jsapi: message stream source header is not allowed")
)

// codeSentinel maps err_code to its sentinel.
var codeSentinel = map[int]error{
	10003: ErrBadRequest, 10008: ErrClusterNotAvailable, 10013: ErrConsumerNameExists,
	10014: ErrConsumerNotFound, 10023: ErrInsufficientResources, 10025: ErrInvalidJSON,
	10037: ErrMsgNotFound, 10039: ErrNotEnabledForAccount, 10054: ErrMessageTooLarge,
	10056: ErrStreamMismatch, 10058: ErrStreamNameInUse, 10059: ErrStreamNotFound,
	10060: ErrWrongStream, 10063: ErrStreamSequenceNotMatch, 10065: ErrSubjectOverlap,
	10070: ErrWrongLastMsgID, 10071: ErrWrongLastSequence, 10164: ErrWrongLastSequence,
	10076: ErrNotEnabled, 10097: ErrHeaderTooLarge, 10105: ErrConsumerExistingActive,
	10109: ErrStreamSealed, 10148: ErrConsumerExists, 10149: ErrConsumerDoesNotExist,
	10158: ErrDuplicateInProcess,
	10159: ErrPriorityGroupConfig, 10160: ErrPriorityGroupConfig, 10161: ErrPriorityGroupConfig,
	10162: ErrPriorityGroupConfig, 10196: ErrPriorityGroupConfig, 10197: ErrPriorityGroupConfig,
	10163: ErrLastSeqPerSubjectBusy, 10165: ErrInvalidTTL, 10166: ErrTTLDisabled,
	10167: ErrTooManyRequests,
	10168: ErrCounterConfig, 10169: ErrCounterConfig, 10170: ErrCounterConfig,
	10171: ErrCounterConfig, 10172: ErrCounterConfig,
	10174: ErrAtomicDisabled, 10175: ErrAtomicMissingSeq, 10176: ErrAtomicIncomplete,
	10177: ErrAtomicUnsupportedHeader, 10178: ErrPushWithPriorityGroup,
	10179: ErrAtomicInvalidBatchID, 10180: ErrMinLastSeq, 10185: ErrRequiredAPILevel,
	10188: ErrSchedules, 10189: ErrSchedules, 10190: ErrSchedules, 10191: ErrSchedules,
	10192: ErrSchedules, 10203: ErrSchedules, 10212: ErrSchedules, 10223: ErrSchedules,
	10193: ErrLastSeqSubjectNoSeq, 10199: ErrAtomicTooLarge, 10200: ErrAtomicInvalidCommit,
	10201: ErrAtomicDuplicateMsgID, 10204: ErrInvalidReset, 10205: ErrBatchDisabled,
	10206: ErrBatchInvalidPattern, 10207: ErrBatchInvalidID, 10208: ErrBatchUnknownID,
	10210: ErrAtomicTooManyInflight, 10211: ErrBatchTooManyInflight,
	10225: ErrStreamIdentityMismatch, 10227: ErrSourceHeaderNotAllowed,
}

// Client-side errors.
var (
	// ErrInvalidName: a stream or consumer name is empty, longer than 255
	// bytes, or holds one of ". *>/\" or whitespace.
	ErrInvalidName = errors.New("jsapi: invalid stream or consumer name")
	// ErrBadResponse: the server's reply could not be understood.
	ErrBadResponse = errors.New("jsapi: malformed API response")
	// ErrNoStreamResponse: a publish got no PubAck (no stream matched, or
	// the stream did not answer in time).
	ErrNoStreamResponse = errors.New("jsapi: no response from stream")
)
