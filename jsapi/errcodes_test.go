package jsapi_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/natsio/natsio/jsapi"
)

// errReply returns a publish error reply in the server's form: the error
// object and the stream name (the server also sends "seq":0).
func errReply(httpCode, errCode int, desc string) []byte {
	return fmt.Appendf(nil, `{"error":{"code":%d,"err_code":%d,"description":%q},"stream":"S","seq":0}`,
		httpCode, errCode, desc)
}

// The two wrong-last-sequence codes (10071 with the sequence in the text,
// 10164 without, from clustered and batch paths) mean the same conflict.
func TestErrCodeWrongLastSequenceBothCodes(t *testing.T) {
	for _, body := range []string{
		`{"error":{"code":400,"err_code":10164,"description":"wrong last sequence: 3"},"stream":"S"}`,
		`{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 3"},"stream":"S"}`,
		`{"error":{"code":400,"err_code":10164,"description":"wrong last sequence"},"stream":"S","seq":0}`,
	} {
		var ack jsapi.PubAck
		err := jsapi.ParsePubAck([]byte(body), &ack)
		if !errors.Is(err, jsapi.ErrWrongLastSequence) {
			t.Errorf("%s: %v, want ErrWrongLastSequence", body, err)
		}
	}
}

// A 429 publish reply (stream ingest overflow) is ErrTooManyRequests and
// an *APIError with Code 429 and err_code 10167.
func TestErrCodeTooManyRequests(t *testing.T) {
	for _, body := range []string{
		`{"error":{"code":429,"err_code":10167,"description":"too many requests"},"stream":"S"}`,
		string(errReply(429, 10167, "too many requests")),
	} {
		var ack jsapi.PubAck
		err := jsapi.ParsePubAck([]byte(body), &ack)
		if !errors.Is(err, jsapi.ErrTooManyRequests) {
			t.Fatalf("%s: %v, want ErrTooManyRequests", body, err)
		}
		var ae *jsapi.APIError
		if !errors.As(err, &ae) || ae.Code != 429 || ae.ErrorCode != 10167 || !ae.Temporary() {
			t.Fatalf("%s: %#v", body, ae)
		}
	}
}

// Every err_code of FEATURES.md §3b (server 2.15.2 errors.json, with its
// HTTP code) maps to its jsapi sentinel, and to no other sentinel of the
// table: a code mapped to the wrong sentinel, or an Is that matches too
// much, fails here.
func TestErrCodeSentinels(t *testing.T) {
	cases := []struct {
		errCode, httpCode int
		want              error
	}{
		{10003, 400, jsapi.ErrBadRequest},
		{10008, 503, jsapi.ErrClusterNotAvailable},
		{10013, 400, jsapi.ErrConsumerNameExists},
		{10014, 404, jsapi.ErrConsumerNotFound},
		{10023, 503, jsapi.ErrInsufficientResources},
		{10025, 400, jsapi.ErrInvalidJSON},
		{10037, 404, jsapi.ErrMsgNotFound},
		{10039, 503, jsapi.ErrNotEnabledForAccount},
		{10054, 400, jsapi.ErrMessageTooLarge},
		{10056, 400, jsapi.ErrStreamMismatch},
		{10058, 400, jsapi.ErrStreamNameInUse},
		{10059, 404, jsapi.ErrStreamNotFound},
		{10060, 400, jsapi.ErrWrongStream},
		{10063, 503, jsapi.ErrStreamSequenceNotMatch},
		{10065, 400, jsapi.ErrSubjectOverlap},
		{10070, 400, jsapi.ErrWrongLastMsgID},
		{10071, 400, jsapi.ErrWrongLastSequence},
		{10076, 503, jsapi.ErrNotEnabled},
		{10097, 400, jsapi.ErrHeaderTooLarge},
		{10105, 400, jsapi.ErrConsumerExistingActive},
		{10109, 400, jsapi.ErrStreamSealed},
		{10148, 400, jsapi.ErrConsumerExists},
		{10149, 400, jsapi.ErrConsumerDoesNotExist},
		{10158, 409, jsapi.ErrDuplicateInProcess},
		{10159, 400, jsapi.ErrPriorityGroupConfig},
		{10160, 400, jsapi.ErrPriorityGroupConfig},
		{10161, 400, jsapi.ErrPriorityGroupConfig},
		{10162, 400, jsapi.ErrPriorityGroupConfig},
		{10163, 503, jsapi.ErrLastSeqPerSubjectBusy},
		{10164, 400, jsapi.ErrWrongLastSequence},
		{10165, 400, jsapi.ErrInvalidTTL},
		{10166, 400, jsapi.ErrTTLDisabled},
		{10167, 429, jsapi.ErrTooManyRequests},
		{10168, 400, jsapi.ErrCounterConfig},
		{10169, 400, jsapi.ErrCounterConfig},
		{10170, 400, jsapi.ErrCounterConfig},
		{10171, 400, jsapi.ErrCounterConfig},
		{10172, 400, jsapi.ErrCounterConfig},
		{10174, 400, jsapi.ErrAtomicDisabled},
		{10175, 400, jsapi.ErrAtomicMissingSeq},
		{10176, 400, jsapi.ErrAtomicIncomplete},
		{10177, 400, jsapi.ErrAtomicUnsupportedHeader},
		{10178, 400, jsapi.ErrPushWithPriorityGroup},
		{10179, 400, jsapi.ErrAtomicInvalidBatchID},
		{10180, 412, jsapi.ErrMinLastSeq},
		{10185, 412, jsapi.ErrRequiredAPILevel},
		{10188, 400, jsapi.ErrSchedules},
		{10189, 400, jsapi.ErrSchedules},
		{10190, 400, jsapi.ErrSchedules},
		{10191, 400, jsapi.ErrSchedules},
		{10192, 400, jsapi.ErrSchedules},
		{10193, 400, jsapi.ErrLastSeqSubjectNoSeq},
		{10196, 400, jsapi.ErrPriorityGroupConfig},
		{10197, 400, jsapi.ErrPriorityGroupConfig},
		{10199, 400, jsapi.ErrAtomicTooLarge},
		{10200, 400, jsapi.ErrAtomicInvalidCommit},
		{10201, 400, jsapi.ErrAtomicDuplicateMsgID},
		{10203, 400, jsapi.ErrSchedules},
		{10204, 400, jsapi.ErrInvalidReset},
		{10205, 400, jsapi.ErrBatchDisabled},
		{10206, 400, jsapi.ErrBatchInvalidPattern},
		{10207, 400, jsapi.ErrBatchInvalidID},
		{10208, 400, jsapi.ErrBatchUnknownID},
		{10210, 429, jsapi.ErrAtomicTooManyInflight},
		{10211, 429, jsapi.ErrBatchTooManyInflight},
		{10212, 400, jsapi.ErrSchedules},
		{10223, 400, jsapi.ErrSchedules},
		{10225, 400, jsapi.ErrStreamIdentityMismatch},
		{10227, 400, jsapi.ErrSourceHeaderNotAllowed},
	}
	var all []error // the distinct sentinels of the table
	seen := map[error]bool{}
	for _, c := range cases {
		if !seen[c.want] {
			seen[c.want] = true
			all = append(all, c.want)
		}
	}
	for _, c := range cases {
		err := jsapi.ParsePubAck(errReply(c.httpCode, c.errCode, "d"), new(jsapi.PubAck))
		var ae *jsapi.APIError
		if !errors.As(err, &ae) || ae.ErrorCode != c.errCode || ae.Code != c.httpCode {
			t.Errorf("%d: %v is not the *APIError of the reply", c.errCode, err)
			continue
		}
		if !errors.Is(err, c.want) {
			t.Errorf("%d: %v does not match %v", c.errCode, err, c.want)
		}
		if !errors.Is(err, &jsapi.APIError{ErrorCode: c.errCode}) {
			t.Errorf("%d: %v does not match an *APIError of the same err_code", c.errCode, err)
		}
		for _, s := range all {
			if s != c.want && errors.Is(err, s) {
				t.Errorf("%d: %v also matches %v", c.errCode, err, s)
			}
		}
	}
	// An err_code jsapi does not know is still an *APIError, matching no
	// sentinel.
	err := jsapi.ParsePubAck(errReply(400, 10999, "future"), new(jsapi.PubAck))
	if _, ok := errors.AsType[*jsapi.APIError](err); !ok {
		t.Fatalf("unknown err_code: %v", err)
	}
	for _, s := range all {
		if errors.Is(err, s) {
			t.Errorf("unknown err_code matches %v", s)
		}
	}
}
