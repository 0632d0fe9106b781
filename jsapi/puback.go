package jsapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/natsio/natsio/proto"
)

// PubAck is the stream's acknowledgement of a stored message.
type PubAck struct {
	Stream    string `json:"stream"`
	Sequence  uint64 `json:"seq"`
	Duplicate bool   `json:"duplicate,omitempty"`
	Domain    string `json:"domain,omitempty"`
	// Value is a counter stream's new total (Nats-Incr publishes).
	Value string `json:"val,omitempty"`
	// BatchID and BatchSize are set on the commit of an atomic or fast
	// batch. Sequence is then 0 when nothing was stored: every message of
	// a fast batch was a duplicate.
	BatchID   string `json:"batch,omitempty"`
	BatchSize int    `json:"count,omitempty"`
}

// pubAckReply is a publish reply for the slow path.
type pubAckReply struct {
	PubAck
	Error *APIError `json:"error,omitempty"`
}

// internedStream keeps the last stream name seen in a PubAck, so that acks
// from the same stream share one string.
var internedStream atomic.Pointer[string]

// parsePubAck decodes a publish reply. An error reply returns its
// *APIError; a reply without a stream, or with sequence 0 outside a batch
// commit, is ErrBadResponse.
// Common replies are decoded without reflection or allocation beyond the
// strings they hold.
func parsePubAck(data []byte, ack *PubAck) error {
	if fastPubAck(data, ack) {
		return nil
	}
	var r pubAckReply
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("%w: %v", ErrBadResponse, err)
	}
	if r.Error != nil {
		return r.Error
	}
	if !r.valid() {
		return fmt.Errorf("%w: PubAck without stream or sequence", ErrBadResponse)
	}
	*ack = r.PubAck
	return nil
}

// valid reports whether a decoded PubAck names its stream and a sequence.
// The commit of a batch is the exception: when every message of a fast
// batch was a duplicate nothing was stored, and the server acknowledges
// the batch with sequence 0.
func (a *PubAck) valid() bool {
	return a.Stream != "" && (a.Sequence > 0 || a.BatchID != "")
}

// fastPubAck parses a flat object of string, number and boolean values with
// the known PubAck keys and no escapes; anything else is left to
// encoding/json.
func fastPubAck(b []byte, ack *PubAck) bool {
	*ack = PubAck{}
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return false
	}
	for {
		key, j, ok := jsonString(b, i)
		if !ok {
			return false
		}
		i = skipWS(b, j)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipWS(b, i+1)
		if i >= len(b) {
			return false
		}
		switch string(key) {
		case "stream", "domain", "val", "batch":
			v, j, ok := jsonString(b, i)
			if !ok {
				return false
			}
			i = j
			switch string(key) {
			case "stream":
				ack.Stream = internStream(v)
			case "domain":
				ack.Domain = string(v)
			case "val":
				ack.Value = string(v)
			case "batch":
				ack.BatchID = string(v)
			}
		case "seq", "count":
			j := i
			for j < len(b) && b[j] >= '0' && b[j] <= '9' {
				j++
			}
			n, ok := proto.ParseUint(b[i:j])
			if !ok {
				return false
			}
			i = j
			if string(key) == "seq" {
				ack.Sequence = n
			} else {
				ack.BatchSize = int(n)
			}
		case "duplicate":
			switch {
			case bytes.HasPrefix(b[i:], []byte("true")):
				ack.Duplicate = true
				i += 4
			case bytes.HasPrefix(b[i:], []byte("false")):
				i += 5
			default:
				return false
			}
		default:
			return false // "error", or a field this parser does not know
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			return skipWS(b, i+1) == len(b) && ack.valid()
		}
		if b[i] != ',' {
			return false
		}
		i = skipWS(b, i+1)
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonString returns the contents of the string starting at b[i] (which
// must be '"'), and the index after it; escapes are not handled (ok false).
func jsonString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	end := bytes.IndexByte(b[i+1:], '"')
	if end < 0 {
		return nil, 0, false
	}
	s := b[i+1 : i+1+end]
	if bytes.IndexByte(s, '\\') >= 0 {
		return nil, 0, false
	}
	return s, i + 2 + end, true
}

func internStream(v []byte) string {
	if p := internedStream.Load(); p != nil && *p == string(v) {
		return *p
	}
	s := string(v)
	internedStream.Store(&s)
	return s
}
