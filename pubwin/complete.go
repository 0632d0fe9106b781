package pubwin

import (
	"errors"
	"strconv"
	"strings"

	"github.com/natsio/natsio/jsapi"
)

// maxCauses bounds the distinct causes a CompleteError keeps.
const maxCauses = 16

// CompleteError is Complete's report of the publishes that failed among
// those that ended since the previous Complete (or since New).
//
// Failures are grouped by cause: a *jsapi.APIError by its err_code (the
// stream's descriptions of one code may differ, for example in the
// sequence a wrong-last-sequence error names), any other error by its
// text. Each cause keeps the first error of its kind and a count. At most
// 16 causes are kept, in the order they first occurred; failures of
// further causes are only counted, in Other.
//
// errors.Is and errors.As see each kept cause's error: errors.Is(err,
// ErrAckTimeout), errors.Is(err, jsapi.ErrWrongLastSequence) and
// errors.AsType[*jsapi.APIError](err) work on a CompleteError as on the
// futures' own errors.
type CompleteError struct {
	// Failed is how many publishes failed; Total how many ended, acked or
	// failed.
	Failed, Total int
	// Causes are the distinct causes kept, with how many failed of each.
	Causes []Cause
	// Other counts the failures whose cause was not kept.
	Other int
}

// Cause is one cause of failure in a CompleteError.
type Cause struct {
	// Err is the first error of this cause.
	Err error
	// Count is how many publishes failed with this cause.
	Count int
}

// Error lists the causes with their counts, as in
// "pubwin: 3 of 300 publishes failed: 2 × pubwin: timed out waiting for
// ack; 1 × jsapi: wrong last sequence: 7 (code 400, err_code 10071)".
func (e *CompleteError) Error() string {
	var b strings.Builder
	b.WriteString("pubwin: ")
	b.WriteString(strconv.Itoa(e.Failed))
	b.WriteString(" of ")
	b.WriteString(strconv.Itoa(e.Total))
	b.WriteString(" publishes failed")
	sep := ": "
	for _, c := range e.Causes {
		b.WriteString(sep)
		b.WriteString(strconv.Itoa(c.Count))
		b.WriteString(" × ")
		b.WriteString(c.Err.Error())
		sep = "; "
	}
	if e.Other > 0 {
		b.WriteString(sep)
		b.WriteString(strconv.Itoa(e.Other))
		b.WriteString(" × other causes")
	}
	return b.String()
}

// Unwrap returns the kept causes' errors.
func (e *CompleteError) Unwrap() []error {
	errs := make([]error, len(e.Causes))
	for i, c := range e.Causes {
		errs[i] = c.Err
	}
	return errs
}

// tally counts the futures that ended since the last Complete that
// reported, and their failures by cause. It is guarded by the window's
// mutex; its memory is bounded by maxCauses.
type tally struct {
	total, failed, other int
	causes               []Cause
	keys                 []causeKey // keys[i] is causes[i]'s
}

// causeKey groups errors into causes: the err_code of a *jsapi.APIError,
// otherwise the error's text.
type causeKey struct {
	code int
	text string
}

func keyOf(err error) causeKey {
	if e, ok := errors.AsType[*jsapi.APIError](err); ok && e.ErrorCode != 0 {
		return causeKey{code: e.ErrorCode}
	}
	return causeKey{text: err.Error()}
}

// add counts n futures that ended with err (nil: acked).
func (t *tally) add(err error, n int) {
	t.total += n
	if err == nil || n == 0 {
		return
	}
	t.failed += n
	k := keyOf(err)
	for i := range t.keys {
		if t.keys[i] == k {
			t.causes[i].Count += n
			return
		}
	}
	if len(t.causes) == maxCauses {
		t.other += n
		return
	}
	t.keys = append(t.keys, k)
	t.causes = append(t.causes, Cause{Err: err, Count: n})
}

// report returns the failures counted as a *CompleteError (nil when none
// failed) and starts counting afresh.
func (t *tally) report() error {
	var err error
	if t.failed > 0 {
		err = &CompleteError{Failed: t.failed, Total: t.total, Causes: t.causes, Other: t.other}
	}
	clear(t.keys)
	*t = tally{keys: t.keys[:0]}
	return err
}
