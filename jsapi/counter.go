package jsapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
)

// Counters (server 2.12+, stream with AllowMsgCounter). A publish with
// Incr or IncrBig and no data adds to the total kept on its subject; the
// stream stores the new total as {"val":"<decimal>"} and acks it in
// PubAck.Value. Totals are arbitrary-precision integers. A counter stream
// that sources other counter streams adds their totals and records where
// each part came from in the Nats-Counter-Sources header.

// HeaderCounterSources is the header of a sourced counter's stored total:
// a JSON object of source stream name to subject to that source's total.
const HeaderCounterSources = "Nats-Counter-Sources"

// ErrBadCounter is returned when a stored counter total or its sources
// header cannot be read.
var ErrBadCounter = errors.New("jsapi: malformed counter value")

// IncrBig is Incr for increments beyond int64. A nil delta is rejected
// locally.
func IncrBig(delta *big.Int) PubOpt {
	if delta == nil {
		return PubOpt{kind: optIncr}
	}
	return PubOpt{kind: optIncr, v: delta.String()}
}

// validIncrement reports whether v is a decimal integer with an optional
// sign, the form the server accepts in Nats-Incr.
func validIncrement(v string) bool {
	if v != "" && (v[0] == '+' || v[0] == '-') {
		v = v[1:]
	}
	if v == "" {
		return false
	}
	for i := range len(v) {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// parseTotal reads a counter total written as a decimal string.
func parseTotal(s string) (*big.Int, error) {
	if !validIncrement(s) {
		return nil, fmt.Errorf("%w: total %q", ErrBadCounter, s)
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return nil, fmt.Errorf("%w: total %q", ErrBadCounter, s)
	}
	return v, nil
}

// Total returns a counter publish's new total (Value) as an integer. It
// fails with ErrBadCounter when the ack carries none (the stream is not a
// counter stream, or the publish was not an increment).
func (a *PubAck) Total() (*big.Int, error) { return parseTotal(a.Value) }

// CounterTotal reads the total from the body of a counter stream's stored
// message ({"val":"<decimal>"}).
func CounterTotal(data []byte) (*big.Int, error) {
	var body struct {
		Val *string `json:"val"`
	}
	if err := json.Unmarshal(data, &body); err != nil || body.Val == nil {
		return nil, fmt.Errorf("%w: body %.64q", ErrBadCounter, data)
	}
	return parseTotal(*body.Val)
}

// CounterSources reads the Nats-Counter-Sources header of a sourced
// counter's stored message: for each source stream, each subject's total
// as last sourced. It returns nil and no error when the header is absent
// (a total made only by local increments).
func CounterSources(m *StoredMsg) (map[string]map[string]*big.Int, error) {
	raw, ok := m.Header.Lookup(HeaderCounterSources)
	if !ok {
		return nil, nil
	}
	var src map[string]map[string]string
	if err := json.Unmarshal([]byte(raw), &src); err != nil {
		return nil, fmt.Errorf("%w: %s header: %v", ErrBadCounter, HeaderCounterSources, err)
	}
	out := make(map[string]map[string]*big.Int, len(src))
	for stream, subjects := range src {
		totals := make(map[string]*big.Int, len(subjects))
		for subj, s := range subjects {
			v, err := parseTotal(s)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", stream, subj, err)
			}
			totals[subj] = v
		}
		out[stream] = totals
	}
	return out, nil
}

// Counter returns the current total of the counter on subject (a literal
// subject of this counter stream). It fails with ErrMsgNotFound when the
// subject was never incremented, ErrBadCounter when its last message is
// not a total, and as GetLastMsgForSubject otherwise.
func (s *Stream) Counter(ctx context.Context, subject string) (*big.Int, error) {
	m, err := s.GetLastMsgForSubject(ctx, subject)
	if err != nil {
		return nil, err
	}
	return CounterTotal(m.Data)
}
